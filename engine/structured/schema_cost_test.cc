// What checking and compiling a schema costs, measured as bytes allocated with operator new
// (deterministic, unlike time or resident memory): a document's cost must follow its size,
// not its depth times its keys' lengths. A binary of its own, because it replaces the global
// operator new to count.
#include <gtest/gtest.h>

#include <atomic>
#include <cstdlib>
#include <new>
#include <string>

#include "structured/schema_compiler.h"
#include "structured/schema_limits.h"

namespace {

std::atomic<bool> counting{false};
std::atomic<size_t> allocated{0};

}  // namespace

// The library's operator delete frees with std::free, so only new is replaced.
void* operator new(std::size_t n) {
  if (counting.load(std::memory_order_relaxed)) allocated.fetch_add(n, std::memory_order_relaxed);
  if (void* p = std::malloc(n ? n : 1)) return p;
  throw std::bad_alloc();
}

namespace kimi::structured {
namespace {

// Bytes allocated by f().
template <typename F>
size_t AllocatedBy(F f) {
  allocated = 0;
  counting = true;
  f();
  counting = false;
  return allocated.load();
}

// The penetration test's document: 62 objects nested through `properties`, each under a key of
// 120,000 bytes (7.4 MB in all). Keeping every node's JSON pointer, built from its parent's,
// cost some 5 s and 375 MB on every request.
Json DeepLongKeys(int levels, size_t key_bytes) {
  Json inner = {{"type", "string"}};
  for (int i = levels - 1; i >= 0; --i) {
    Json properties = Json::object();
    properties[std::string(key_bytes, char('a' + i % 26)) + std::to_string(i)] = std::move(inner);
    inner = Json{{"type", "object"}, {"properties", std::move(properties)}};
  }
  return inner;
}

TEST(SchemaCost, TheLimitsCheckOfDeepLongKeysAllocatesForItsNodesNotForTheirPointers) {
  const Json document = DeepLongKeys(62, 120000);
  Status checked;
  const size_t bytes = AllocatedBy([&] { checked = CheckSchemaLimits(document); });
  EXPECT_TRUE(checked.ok()) << checked.ToString();
  // 63 schemas: a few kilobytes of nodes. One pointer to the deepest would be 7.4 MB.
  EXPECT_LT(bytes, size_t(1) << 20) << bytes << " bytes allocated";
  std::printf("CheckSchemaLimits, 62 levels of 120 KB keys: %zu bytes allocated\n", bytes);
}

TEST(SchemaCost, AnErrorDeepInsideNamesItsWholePointer) {
  Json document = Json::parse(R"({"properties":{"a/b":{"items":[{},{"pattern":""}]}},"$defs":{"x~y":{"not":{"enum":[1,2]}}}})");
  SchemaLimits few;
  few.max_enum_values = 1;
  const Status many = CheckSchemaLimits(document, few);
  ASSERT_FALSE(many.ok());
  EXPECT_NE(many.message().find("(at /$defs/x~0y/not)"), std::string::npos) << many.message();
  document["properties"]["a/b"]["items"][1]["pattern"] = std::string(kMaxRegexPatternBytes + 1, 'p');
  const Status long_pattern = CheckSchemaLimits(document);
  ASSERT_FALSE(long_pattern.ok());
  EXPECT_NE(long_pattern.message().find("at /properties/a~1b/items/1/pattern is longer"), std::string::npos) << long_pattern.message();
  // Reached first through a $ref: named by the reference's pointer.
  const Status chained = CheckSchemaLimits(Json::parse(R"({"$defs":{"a":{"$ref":"#/$defs/b"},"b":{"$ref":"#/$defs/a"}},"$ref":"#/$defs/a"})"));
  ASSERT_FALSE(chained.ok());
  EXPECT_NE(chained.message().find("/$defs/a"), std::string::npos) << chained.message();
}

// Compiling it is refused by the state budget (the names alone pass it) before anything below
// the root is compiled: no copies of the subschemas, no pointers, no rule names per level.
TEST(SchemaCost, CompilingDeepLongKeysIsRefusedWithoutCopyingThem) {
  const Json document = DeepLongKeys(62, 120000);
  Result<int32_t> compiled = Status::Internal("not run");
  const size_t bytes = AllocatedBy([&] {
    GrammarBuilder builder;
    JsonValueRules values(&builder);
    SchemaCompiler compiler(&values, document);
    compiled = compiler.CompileRoot();
  });
  ASSERT_FALSE(compiled.ok());
  EXPECT_NE(compiled.status().message().find("grammar states"), std::string::npos) << compiled.status().message();
  EXPECT_LT(bytes, size_t(4) << 20) << bytes << " bytes allocated";
  std::printf("compiling 62 levels of 120 KB keys: %zu bytes allocated\n", bytes);
}

}  // namespace
}  // namespace kimi::structured
