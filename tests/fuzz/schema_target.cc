// A JSON Schema the way the request path compiles it (engine/serving/structured_request.cc):
// as response_format.json_schema.schema (StructuredOutput::ForJsonSchema) and as a strict
// tool's parameters under tool_choice "required" (ForRequiredToolCalls), over the demo
// vocabulary. A schema that compiles is then walked: random tokens among those its mask
// allows, which must never leave the walk with no token allowed before the value ends, and
// whose text, once ended, must be JSON.
#include <functional>
#include <random>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "fuzz_support.h"
#include "fuzz_targets.h"
#include "kimi/structured_output.h"
#include "kimi/tokenizer.h"
#include "structured/structured_test_util.h"
#include "text/tokenizer_test_util.h"

namespace kimi::fuzz {
namespace {

struct Vocabulary {
  std::shared_ptr<const StructuredVocabulary> structured;
  int32_t end_of_message = -1;
};

const Vocabulary& DemoVocabulary() {
  static const Vocabulary vocabulary = [] {
    const Tokenizer& tokenizer = text::testing::DemoTokenizer();
    auto built = StructuredVocabulary::Build(tokenizer);
    if (!built.ok()) SetupFailed("demo vocabulary: " + built.status().ToString());
    std::optional<int32_t> end = tokenizer.SpecialTokenId(k3::kEndOfMessage);
    if (!end) SetupFailed("the demo tokenizer has no " + std::string(k3::kEndOfMessage));
    return Vocabulary{*built, *end};
  }();
  return vocabulary;
}

}  // namespace

bool FuzzSchemaOnce(const uint8_t* data, size_t size) {
  const std::string schema(reinterpret_cast<const char*>(data), size);
  const Vocabulary& vocabulary = DemoVocabulary();

  StructuredOutputOptions bare;
  bare.vocabulary = vocabulary.structured;
  bare.end_token_ids = {vocabulary.end_of_message};
  Result<std::shared_ptr<const StructuredOutput>> response_format = StructuredOutput::ForJsonSchema(schema, bare);

  StructuredOutputOptions k3;
  k3.vocabulary = vocabulary.structured;
  k3.frame = StructuredOutputOptions::Frame::kK3;
  const std::vector<StrictTool> tools = {{"lookup", schema}};
  (void)StructuredOutput::ForRequiredToolCalls(tools, /*max_calls=*/2, k3);
  if (!response_format.ok()) return false;

  auto grammar = structured::testing::CompileSchema(schema);
  if (!grammar.ok()) __builtin_trap();  // the public entry compiled it
  std::mt19937_64 rng(std::hash<std::string>()(schema));
  structured::testing::Walk walk = structured::testing::RandomWalk(*grammar, structured::testing::DemoTrie(),
                                                                   vocabulary.end_of_message, rng, 16, 96);
  if (walk.stuck) __builtin_trap();
  if (walk.ended && nlohmann::json::parse(walk.text, nullptr, false).is_discarded()) __builtin_trap();
  return true;
}

}  // namespace kimi::fuzz
