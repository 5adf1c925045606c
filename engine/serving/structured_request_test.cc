// StructuredRequests keeps compiled schemas between requests: a kept schema's masks come back
// to the vocabulary's budget when the cache starts over because they left a new schema no room.
#include "serving/structured_request.h"

#include <gtest/gtest.h>

#include <random>

#include "structured/structured_test_util.h"
#include "text/tokenizer_test_util.h"

namespace kimi::serving {
namespace {

ServingRequest SchemaRequest(const std::string& schema) {
  ServingRequest request;
  request.chat.messages = nlohmann::ordered_json::parse(R"([{"role":"user","content":"fill it in"}])");
  request.chat.thinking = false;  // the constraint starts at the value
  request.chat.has_response_format = true;
  request.chat.response_format = {{"type", "json_schema"},
                                  {"json_schema", {{"name", "form"}, {"schema", nlohmann::ordered_json::parse(schema)}}}};
  return request;
}

TEST(StructuredRequests, KeptSchemasWhoseMasksFillTheBudgetAreLetGo) {
  constexpr size_t kBudget = size_t(48) << 20;
  auto vocabulary = StructuredVocabulary::Build(text::testing::RealTokenizer(), kBudget);
  ASSERT_TRUE(vocabulary.ok()) << vocabulary.status().ToString();
  StructuredRequests requests(*vocabulary);
  const int32_t end_of_msg = *(*vocabulary)->trie()->end_of_msg;
  std::mt19937_64 rng(7);

  auto first = requests.ConstraintFor(SchemaRequest(structured::testing::ManyLongPropertyNames(120)));
  ASSERT_TRUE(first.ok()) << first.status().ToString();
  const Status walked = structured::testing::WalkConstraint(**first, (*vocabulary)->trie()->vocab_size(), end_of_msg, rng, 2500);
  ASSERT_TRUE(walked.ok()) << walked.ToString();
  first->reset();  // the request ended; its compiled schema is still kept
  const size_t filled = (*vocabulary)->cached_mask_bytes();
  EXPECT_GT(filled + StructuredVocabulary::kMaxCachedMaskBytesPerSchema, kBudget);  // too little room left for another

  auto second = requests.ConstraintFor(SchemaRequest(structured::testing::ManyLongPropertyNames(121)));
  ASSERT_TRUE(second.ok()) << second.status().ToString();
  EXPECT_LT((*vocabulary)->cached_mask_bytes() + (size_t(24) << 20), filled);  // the first schema's masks went
}

// A schema's bounds are on its values, not its bytes: a description of megabytes is one value.
// The texts the kept schemas are keyed by are bounded in bytes (16 MiB), and a schema over a
// sixteenth of that is compiled for its request and not kept.
TEST(StructuredRequests, TheSchemaTextsKeptAreBoundedInBytes) {
  auto vocabulary = StructuredVocabulary::Build(text::testing::RealTokenizer());
  ASSERT_TRUE(vocabulary.ok()) << vocabulary.status().ToString();
  StructuredRequests requests(*vocabulary);
  auto schema = [](int i, size_t description_bytes) {
    return R"({"type":"object","description":")" + std::string(description_bytes, 'd') + R"(","properties":{"n)" +
           std::to_string(i) + R"(":{"type":"integer"}}})";
  };
  auto huge = requests.ConstraintFor(SchemaRequest(schema(0, 2 << 20)));
  ASSERT_TRUE(huge.ok()) << huge.status().ToString();
  EXPECT_NE(*huge, nullptr);
  EXPECT_EQ(requests.kept(), 0u);
  for (int i = 1; i <= 40; ++i) {
    auto kept = requests.ConstraintFor(SchemaRequest(schema(i, 512 << 10)));
    ASSERT_TRUE(kept.ok()) << kept.status().ToString();
    EXPECT_LE(requests.kept(), size_t(32)) << i;  // 32 keys of half a MiB fill 16 MiB
  }
  EXPECT_GT(requests.kept(), 0u);
}

}  // namespace
}  // namespace kimi::serving
