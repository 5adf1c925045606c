// NormaliseStrictSchema on objects with long `required` lists and many properties: the result
// is the rule's, and the work is linear in the schema. Work is counted as heap allocations
// (tests/support/heap_allocations.h), not timed: comparing each property name with each
// `required` entry as a JSON value, as the normaliser once did, allocates per comparison, so
// 1,020 properties against 48,000 entries cost 49 million allocations there and about 51,000
// with the names indexed once per object; and adding a member to an object once copied its
// members' subtrees, at every level of a deep schema.
#include <string>

#include <gtest/gtest.h>

#include "api/request/strict_schema.h"
#include "heap_allocations.h"

namespace kimi::api::request {
namespace {

using Json = nlohmann::ordered_json;

constexpr size_t kProperties = 1020;   // within the body's 1,024 members of one object
constexpr size_t kRequired = 48000;    // within the schema limits' 50,000 values
// Allocations per JSON value of the schema: its copy, the name sets, the appended names.
constexpr uint64_t kAllocationsPerValue = 8;

std::string Name(char prefix, size_t i) { return prefix + std::to_string(i); }

Json ObjectWith(size_t properties) {
  Json schema = {{"type", "object"}, {"properties", Json::object()}};
  for (size_t i = 0; i < properties; ++i) schema["properties"][Name('p', i)] = Json::object();
  return schema;
}

struct Counted {
  Json out;
  uint64_t allocations;
};

Counted NormaliseCounted(const Json& schema) {
  const uint64_t before = kimi::testing::HeapAllocations();
  Json out = NormaliseStrictSchema(schema);
  return {std::move(out), kimi::testing::HeapAllocations() - before};
}

// The penetration test's tool: one name the object does not list, 48,000 times.
TEST(StrictSchemaWork, RepeatedUnlistedRequiredNameAgainstManyProperties) {
  Json schema = ObjectWith(kProperties);
  schema["required"] = Json::array();
  for (size_t i = 0; i < kRequired; ++i) schema["required"].push_back("x");
  Counted n = NormaliseCounted(schema);
  // Every property is appended after the entries as sent; an object requiring a name it does
  // not list stays open.
  ASSERT_EQ(n.out["required"].size(), kRequired + kProperties);
  for (size_t i = 0; i < kRequired; ++i) ASSERT_EQ(n.out["required"][i], "x") << i;
  for (size_t i = 0; i < kProperties; ++i) ASSERT_EQ(n.out["required"][kRequired + i], Name('p', i)) << i;
  EXPECT_FALSE(n.out.contains("additionalProperties"));
  EXPECT_EQ(NormaliseStrictSchema(n.out), n.out) << "idempotent";
  EXPECT_LT(n.allocations, kAllocationsPerValue * (kRequired + kProperties));
}

TEST(StrictSchemaWork, DistinctRequiredNamesMostlyUnlisted) {
  Json schema = ObjectWith(kProperties);
  schema["required"] = Json::array();
  for (size_t i = 0; i < kRequired; ++i) schema["required"].push_back(Name('q', i));
  schema["required"].push_back(Name('p', 7));  // one listed name: not appended again
  Counted n = NormaliseCounted(schema);
  ASSERT_EQ(n.out["required"].size(), kRequired + kProperties);
  EXPECT_EQ(n.out["required"][kRequired], Name('p', 7));
  EXPECT_EQ(n.out["required"][kRequired + 1], Name('p', 0));
  EXPECT_EQ(n.out["required"].back(), Name('p', kProperties - 1));
  EXPECT_FALSE(n.out.contains("additionalProperties"));
  EXPECT_LT(n.allocations, kAllocationsPerValue * (kRequired + kProperties));
}

TEST(StrictSchemaWork, EveryPropertyRequiredInReverseClosesTheObject) {
  Json schema = ObjectWith(kProperties);
  schema["required"] = Json::array();
  for (size_t i = kProperties; i-- > 0;) schema["required"].push_back(Name('p', i));
  Counted n = NormaliseCounted(schema);
  Json expected = schema;
  expected["additionalProperties"] = false;
  EXPECT_EQ(n.out, expected) << "already required: only closed";
  EXPECT_LT(n.allocations, kAllocationsPerValue * 2 * kProperties);
}

// Each of 60 nested objects gains `required` and `additionalProperties`: growing an object's
// storage once copied every member's subtree, so the 40,000 values at the bottom were copied
// (and searched for a $ref) once per enclosing object.
TEST(StrictSchemaWork, DeepObjectsOverALargeLeafAreNormalisedOnce) {
  constexpr size_t kDepth = 60, kLeafValues = 40000;
  Json leaf = {{"type", "object"}, {"x-values", Json::array()}};
  for (size_t i = 0; i < kLeafValues; ++i) leaf["x-values"].push_back("v");
  Json schema = leaf;
  for (size_t d = 0; d < kDepth; ++d) schema = Json{{"type", "object"}, {"properties", {{"a", std::move(schema)}}}};
  Counted n = NormaliseCounted(schema);
  const Json* node = &n.out;
  for (size_t d = 0; d < kDepth; ++d) {
    ASSERT_EQ((*node)["required"], Json::array({"a"})) << "level " << d;
    ASSERT_EQ((*node)["additionalProperties"], false) << "level " << d;
    node = &(*node)["properties"]["a"];
  }
  EXPECT_EQ(*node, leaf) << "an object without properties is left as it is";
  EXPECT_LT(n.allocations, kAllocationsPerValue * (kLeafValues + 4 * kDepth));
}

}  // namespace
}  // namespace kimi::api::request
