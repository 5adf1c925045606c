#include "kimi/logprobs_json.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>

#include "kimi/tokenizer_utf8.h"

namespace kimi::chat {
namespace {

using OrderedJson = nlohmann::ordered_json;

OrderedJson BytesArray(std::string_view bytes) {
  OrderedJson out = OrderedJson::array();
  for (unsigned char c : bytes) out.push_back(int(c));
  return out;
}

// JSON has no infinity: a token the constraint ruled out is written as vLLM writes it.
constexpr float kImpossibleLogprob = -9999.0f;

float Finite(float logprob) { return std::isfinite(logprob) ? logprob : kImpossibleLogprob; }

OrderedJson TokenEntry(std::string_view bytes, float logprob) {
  return OrderedJson{{"token", LogprobTokenText(bytes)}, {"logprob", Finite(logprob)}, {"bytes", BytesArray(bytes)}};
}

// The inverse of LogprobTokenText.
std::string TokenTextBytes(const std::string& text) {
  constexpr std::string_view kPrefix = "bytes:";
  if (text.rfind(kPrefix, 0) != 0) return text;
  std::string bytes;
  for (size_t i = kPrefix.size(); i + 4 <= text.size() && text.compare(i, 2, "\\x") == 0; i += 4) {
    unsigned value = 0;
    const char* digits = text.data() + i + 2;
    if (std::from_chars(digits, digits + 2, value, 16).ptr != digits + 2) break;
    bytes.push_back(char(value));
  }
  return bytes.size() * 4 == text.size() - kPrefix.size() ? bytes : text;
}

Result<std::string> EntryBytes(const nlohmann::json& entry) {
  if (const auto it = entry.find("bytes"); it != entry.end() && !it->is_null()) {
    if (!it->is_array()) return Status::InvalidArgument("logprobs bytes must be an array");
    std::string bytes;
    for (const nlohmann::json& b : *it) {
      if (!b.is_number_integer() || b.get<int64_t>() < 0 || b.get<int64_t>() > 255) {
        return Status::InvalidArgument("logprobs bytes must be integers in [0, 255]");
      }
      bytes.push_back(char(b.get<int>()));
    }
    return bytes;
  }
  const auto token = entry.find("token");
  if (token == entry.end() || !token->is_string()) return Status::InvalidArgument("a logprobs entry has no token");
  return TokenTextBytes(token->get<std::string>());
}

Result<float> EntryLogprob(const nlohmann::json& entry) {
  const auto it = entry.find("logprob");
  if (it == entry.end() || !it->is_number()) return Status::InvalidArgument("a logprobs entry has no numeric logprob");
  return it->get<float>();
}

}  // namespace

std::string LogprobTokenText(std::string_view bytes) {
  if (text::ValidateUtf8(bytes).ok()) return std::string(bytes);
  std::string out = "bytes:";
  char escaped[5];
  for (unsigned char c : bytes) {
    std::snprintf(escaped, sizeof escaped, "\\x%02x", c);
    out += escaped;
  }
  return out;
}

OrderedJson ChatLogprobsContent(const std::vector<TokenLogprobs>& tokens) {
  OrderedJson content = OrderedJson::array();
  for (const TokenLogprobs& t : tokens) {
    OrderedJson entry = TokenEntry(t.bytes, t.logprob);
    OrderedJson top = OrderedJson::array();
    for (const TokenAlternative& a : t.top) top.push_back(TokenEntry(a.bytes, a.logprob));
    entry["top_logprobs"] = std::move(top);
    content.push_back(std::move(entry));
  }
  return content;
}

OrderedJson CompletionLogprobs(const std::vector<TokenLogprobs>& tokens, int64_t text_offset) {
  OrderedJson texts = OrderedJson::array(), logprobs = OrderedJson::array(), tops = OrderedJson::array(),
              offsets = OrderedJson::array();
  for (const TokenLogprobs& t : tokens) {
    texts.push_back(LogprobTokenText(t.bytes));
    logprobs.push_back(Finite(t.logprob));
    OrderedJson top = OrderedJson::object();
    for (const TokenAlternative& a : t.top) top[LogprobTokenText(a.bytes)] = Finite(a.logprob);
    tops.push_back(std::move(top));
    offsets.push_back(text_offset);
    text_offset += int64_t(t.bytes.size());
  }
  return OrderedJson{{"tokens", std::move(texts)},
                     {"token_logprobs", std::move(logprobs)},
                     {"top_logprobs", std::move(tops)},
                     {"text_offset", std::move(offsets)}};
}

Result<std::vector<TokenLogprobs>> ParseChatLogprobsContent(const nlohmann::json& content) {
  std::vector<TokenLogprobs> out;
  if (content.is_null()) return out;
  if (!content.is_array()) return Status::InvalidArgument("logprobs.content must be an array");
  for (const nlohmann::json& entry : content) {
    if (!entry.is_object()) return Status::InvalidArgument("a logprobs.content entry must be an object");
    TokenLogprobs t;
    KIMI_ASSIGN_OR_RETURN(t.bytes, EntryBytes(entry));
    KIMI_ASSIGN_OR_RETURN(t.logprob, EntryLogprob(entry));
    if (const auto top = entry.find("top_logprobs"); top != entry.end() && !top->is_null()) {
      if (!top->is_array()) return Status::InvalidArgument("top_logprobs must be an array");
      for (const nlohmann::json& alt : *top) {
        if (!alt.is_object()) return Status::InvalidArgument("a top_logprobs entry must be an object");
        TokenAlternative a;
        KIMI_ASSIGN_OR_RETURN(a.bytes, EntryBytes(alt));
        KIMI_ASSIGN_OR_RETURN(a.logprob, EntryLogprob(alt));
        t.top.push_back(std::move(a));
      }
    }
    out.push_back(std::move(t));
  }
  return out;
}

Result<std::vector<TokenLogprobs>> ParseCompletionLogprobs(const nlohmann::json& logprobs) {
  std::vector<TokenLogprobs> out;
  if (logprobs.is_null()) return out;
  const auto tokens = logprobs.find("tokens");
  const auto values = logprobs.find("token_logprobs");
  if (!logprobs.is_object() || tokens == logprobs.end() || values == logprobs.end() || !tokens->is_array() ||
      !values->is_array() || tokens->size() != values->size()) {
    return Status::InvalidArgument("completion logprobs need tokens and token_logprobs arrays of one length");
  }
  const auto tops = logprobs.find("top_logprobs");
  const bool has_tops = tops != logprobs.end() && tops->is_array() && tops->size() == tokens->size();
  for (size_t i = 0; i < tokens->size(); ++i) {
    if (!(*tokens)[i].is_string() || !(*values)[i].is_number()) {
      return Status::InvalidArgument("completion logprobs: token " + std::to_string(i) + " is malformed");
    }
    TokenLogprobs t{TokenTextBytes((*tokens)[i].get<std::string>()), (*values)[i].get<float>(), {}};
    if (has_tops && (*tops)[i].is_object()) {
      for (const auto& [name, value] : (*tops)[i].items()) {
        if (!value.is_number()) return Status::InvalidArgument("completion top_logprobs values must be numbers");
        t.top.push_back(TokenAlternative{TokenTextBytes(name), value.get<float>()});
      }
      std::stable_sort(t.top.begin(), t.top.end(),
                       [](const TokenAlternative& a, const TokenAlternative& b) { return a.logprob > b.logprob; });
    }
    out.push_back(std::move(t));
  }
  return out;
}

}  // namespace kimi::chat
