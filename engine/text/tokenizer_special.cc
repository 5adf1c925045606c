#include "text/tokenizer_special.h"
#include "kimi/special_token_text.h"
#include "kimi/untrusted_json.h"

#include <algorithm>
#include <charconv>
#include <map>

#include <nlohmann/json.hpp>

namespace kimi::text {

std::vector<SpecialToken> CompleteSpecialTable(std::vector<SpecialToken> named, int32_t num_base_tokens) {
  std::map<int32_t, std::string> by_id;
  for (auto& t : named) by_id[t.id] = std::move(t.text);
  std::vector<SpecialToken> table;
  table.reserve(Tokenizer::kNumSpecialTokens);
  for (int32_t id = num_base_tokens; id < num_base_tokens + Tokenizer::kNumSpecialTokens; ++id) {
    auto it = by_id.find(id);
    table.push_back({id, it != by_id.end() ? it->second : ReservedSpecialTokenName(id)});
  }
  return table;
}

Result<std::vector<SpecialToken>> ParseAddedTokensDecoder(std::string_view config_json,
                                                          int32_t num_base_tokens) {
  const Result<nlohmann::json> parsed = ParseUntrustedJson(config_json, "tokenizer_config.json", kMaxFileJsonNesting);
  if (!parsed.ok() || !parsed->is_object()) {
    return Status::InvalidArgument("tokenizer_config.json is not a JSON object");
  }
  const nlohmann::json& config = *parsed;
  std::vector<SpecialToken> named;
  auto decoder = config.find("added_tokens_decoder");
  if (decoder != config.end()) {
    if (!decoder->is_object()) return Status::InvalidArgument("added_tokens_decoder is not an object");
    for (const auto& [key, entry] : decoder->items()) {
      int32_t id = -1;
      const auto [ptr, ec] = std::from_chars(key.data(), key.data() + key.size(), id);
      if (ec != std::errc() || ptr != key.data() + key.size()) {
        return Status::InvalidArgument("added_tokens_decoder key is not an id: " + key);
      }
      if (id < num_base_tokens || id >= num_base_tokens + Tokenizer::kNumSpecialTokens) {
        return Status::InvalidArgument("added token id " + key + " is outside the special range [" +
                                       std::to_string(num_base_tokens) + ", " +
                                       std::to_string(num_base_tokens + Tokenizer::kNumSpecialTokens) + ")");
      }
      if (!entry.is_object() || !entry.contains("content") || !entry["content"].is_string() ||
          entry["content"].get_ref<const std::string&>().empty()) {
        return Status::InvalidArgument("added token " + key + " has no content string");
      }
      named.push_back({id, entry["content"].get<std::string>()});
    }
  }
  std::vector<SpecialToken> table = CompleteSpecialTable(std::move(named), num_base_tokens);
  std::map<std::string_view, int32_t> seen;
  for (const auto& t : table) {
    auto [it, inserted] = seen.emplace(t.text, t.id);
    if (!inserted) {
      return Status::InvalidArgument("special token text " + t.text + " names ids " +
                                     std::to_string(it->second) + " and " + std::to_string(t.id));
    }
  }
  return table;
}

}  // namespace kimi::text
