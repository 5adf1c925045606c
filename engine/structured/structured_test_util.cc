#include "structured/structured_test_util.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "structured/schema_compiler.h"
#include "kimi/kimi_data.h"
#include "text/tokenizer_test_util.h"

namespace kimi::structured::testing {

Result<std::shared_ptr<const Grammar>> CompileSchema(const std::string& schema_json, const CompileBudget& budget) {
  Json schema = Json::parse(schema_json, nullptr, false);
  if (schema.is_discarded()) return Status::InvalidArgument("not JSON: " + schema_json);
  GrammarBuilder builder;
  JsonValueRules values(&builder);
  SchemaCompiler compiler(&values, schema, budget);
  KIMI_ASSIGN_OR_RETURN(int32_t root, compiler.CompileRoot());
  return builder.Finish(root, "the schema");
}

std::shared_ptr<const TokenTrie> DemoTrie() {
  static const auto trie = *TokenTrie::Build(text::testing::DemoTokenizer());
  return trie;
}

std::shared_ptr<const TokenTrie> RealTrie() {
  static const auto trie = *TokenTrie::Build(text::testing::RealTokenizer());
  return trie;
}

bool Accepts(const std::shared_ptr<const Grammar>& grammar, const std::string& text) {
  GrammarMatcher matcher(grammar, DemoTrie(), std::make_shared<MaskCache>(), {});
  return matcher.AcceptsBytes(text, /*require_complete=*/true);
}

Result<std::vector<SchemaCase>> VerifierSchemaCases() {
  const auto dir = std::filesystem::path(KimiDataDir()) / "kvv-schema-cases";
  std::error_code ec;
  if (!std::filesystem::is_directory(dir, ec)) return Status::NotFound(dir.string() + " is missing");
  std::vector<SchemaCase> cases;
  std::vector<std::filesystem::path> suites;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    if (entry.is_directory()) suites.push_back(entry.path());
  }
  std::sort(suites.begin(), suites.end());
  for (const auto& suite : suites) {
    std::ifstream in(suite / "valid.jsonl");
    std::string line;
    int number = 0;
    while (std::getline(in, line)) {
      ++number;
      if (!line.empty()) cases.push_back({suite.filename().string(), number, line});
    }
  }
  return cases;
}

Walk RandomWalk(const std::shared_ptr<const Grammar>& grammar, const std::shared_ptr<const TokenTrie>& trie,
                int32_t end_token, std::mt19937_64& rng, int free_steps, int max_steps) {
  auto cache = std::make_shared<MaskCache>();
  GrammarMatcher matcher(grammar, trie, cache, {end_token});
  Walk walk;
  std::vector<uint64_t> words;
  std::vector<int32_t> allowed;
  for (int step = 0; step < max_steps; ++step) {
    matcher.AllowedTokens(&words);
    allowed.clear();
    for (size_t w = 0; w < words.size(); ++w) {
      for (uint64_t bits = words[w]; bits != 0; bits &= bits - 1) allowed.push_back(int32_t(w * 64 + size_t(__builtin_ctzll(bits))));
    }
    if (allowed.empty()) {
      walk.stuck = true;
      return walk;
    }
    int32_t choice = allowed[std::uniform_int_distribution<size_t>(0, allowed.size() - 1)(rng)];
    if (step >= free_steps) {
      if (std::find(allowed.begin(), allowed.end(), end_token) != allowed.end()) {
        choice = end_token;
      } else {
        // Among a sample of candidates, the one that leaves the fewest bytes to write.
        int64_t best = -1;
        for (int k = 0; k < 48; ++k) {
          const int32_t candidate = allowed[std::uniform_int_distribution<size_t>(0, allowed.size() - 1)(rng)];
          const int64_t left = matcher.RemainingBytesAfter(candidate);
          if (left < 0) continue;
          if (best < 0 || left < best) {
            best = left;
            choice = candidate;
          }
        }
      }
    }
    const Status advanced = matcher.Advance(choice);
    if (!advanced.ok()) {
      walk.stuck = true;
      return walk;
    }
    if (choice == end_token) {
      walk.ended = true;
      walk.steps_to_complete = step;
      return walk;
    }
    walk.tokens.push_back(choice);
    walk.text += trie->TokenBytes(choice);
  }
  return walk;
}

std::string JsonEscapedClass(int count, char32_t first, int step) {
  std::string out = "[";
  for (int i = 0; i < count; ++i) {
    char hex[8];
    std::snprintf(hex, sizeof hex, "\\u%04x", unsigned(first) + unsigned(step * i));
    out += hex;
  }
  return out + "]";
}

std::string ManyLongPropertyNames(int count) {
  std::string properties, required;
  for (int i = 0; i < count; ++i) {
    const std::string name = "a_property_with_a_rather_long_name_" + std::to_string(i);
    properties += (i ? "," : "") + ("\"" + name + "\":{\"type\":\"integer\"}");
    required += (i ? "," : "") + ("\"" + name + "\"");
  }
  return R"({"type":"object","additionalProperties":false,"properties":{)" + properties + R"(},"required":[)" + required +
         "]}";
}

Status WalkConstraint(TokenConstraint& constraint, int64_t vocab_size, int32_t end_token, std::mt19937_64& rng, int steps) {
  std::vector<int32_t> generated, allowed;
  for (int step = 0; step < steps; ++step) {
    TokenMask mask(vocab_size, /*allow_all=*/true);
    KIMI_RETURN_IF_ERROR(constraint.FillMask(generated, 100000, &mask));
    allowed.clear();
    for (int32_t id = 0; id < vocab_size; ++id) {
      if (mask.allowed(id)) allowed.push_back(id);
    }
    if (allowed.empty()) return Status::Internal("the mask allows nothing at step " + std::to_string(step));
    generated.push_back(allowed[std::uniform_int_distribution<size_t>(0, allowed.size() - 1)(rng)]);
    if (generated.back() == end_token) break;
  }
  return Status::OK();
}

}  // namespace kimi::structured::testing
