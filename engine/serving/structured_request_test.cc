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

// K3's vocabulary with the default budget, built once for the tests that need no other.
std::shared_ptr<const StructuredVocabulary> RealVocabulary() {
  static const std::shared_ptr<const StructuredVocabulary> vocabulary = [] {
    auto built = StructuredVocabulary::Build(text::testing::RealTokenizer());
    EXPECT_TRUE(built.ok()) << built.status().ToString();
    return built.ok() ? *built : nullptr;
  }();
  return vocabulary;
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
  ASSERT_NE(RealVocabulary(), nullptr);
  StructuredRequests requests(RealVocabulary());
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

// Nothing kept is ever over a bound: a schema whose grammar alone passes the bound on states is
// used for its request and not kept (it used to be kept after the cache started over, so a
// 22.8-million-state grammar stayed in a cache bounded at 2 million).
TEST(StructuredRequests, NoKeptSchemaPassesTheBoundOnStates) {
  ASSERT_NE(RealVocabulary(), nullptr);
  StructuredRequests::Bounds bounds;
  bounds.states = 5000;
  StructuredRequests requests(RealVocabulary(), bounds);
  auto small = requests.ConstraintFor(SchemaRequest(R"({"type":"object","properties":{"a":{"type":"integer"}}})"));
  ASSERT_TRUE(small.ok()) << small.status().ToString();
  EXPECT_EQ(requests.kept(), 1u);
  const size_t small_states = requests.kept_states();
  EXPECT_LE(small_states, bounds.states);
  // `.` a thousand times: some 15,000 states, more than the bound by itself.
  auto large = requests.ConstraintFor(SchemaRequest(R"({"type":"string","pattern":"^.{1000}$"})"));
  ASSERT_TRUE(large.ok()) << large.status().ToString();
  EXPECT_NE(*large, nullptr);
  EXPECT_LE(requests.kept_states(), bounds.states);
  EXPECT_EQ(requests.kept(), 1u);  // the small one stays; the large one was not kept
  EXPECT_EQ(requests.kept_states(), small_states);
}

// A refused schema is remembered (bounded) with its error: sending it again costs a lookup, not
// its compilation.
TEST(StructuredRequests, RefusedSchemasAreRememberedWithinABound) {
  ASSERT_NE(RealVocabulary(), nullptr);
  StructuredRequests::Bounds bounds;
  bounds.refusals = 2;
  StructuredRequests requests(RealVocabulary(), bounds);
  const std::string refused = R"({"type":"string","pattern":".{1000}{19}"})";
  auto first = requests.ConstraintFor(SchemaRequest(refused));
  ASSERT_FALSE(first.ok());
  EXPECT_EQ(requests.refusals_kept(), 1u);
  auto again = requests.ConstraintFor(SchemaRequest(refused));
  ASSERT_FALSE(again.ok());
  EXPECT_EQ(again.status().ToString(), first.status().ToString());
  EXPECT_EQ(requests.kept(), 0u);
  for (int i = 0; i < 5; ++i) {
    EXPECT_FALSE(requests.ConstraintFor(SchemaRequest(R"({"type":"object","minProperties":)" + std::to_string(i) + "}")).ok());
    EXPECT_LE(requests.refusals_kept(), bounds.refusals);
  }
}

}  // namespace
}  // namespace kimi::serving
