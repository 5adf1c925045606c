#include "structured/number_pattern.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <string>

#include "structured/schema_compiler.h"
#include "structured/structured_test_util.h"

namespace kimi::structured {
namespace {

using testing::Accepts;
using testing::CompileSchema;

TEST(NumberPattern, EveryIntegerOfARangeAndNothingElse) {
  // Exhaustive over small ranges, against the definition.
  for (auto [lo, hi] : std::vector<std::pair<int64_t, int64_t>>{{0, 0}, {0, 9}, {3, 47}, {10, 999}, {95, 1205}, {-30, 17}, {-120, -7}}) {
    Json schema = {{"type", "integer"}, {"minimum", lo}, {"maximum", hi}};
    auto g = CompileSchema(schema.dump());
    ASSERT_TRUE(g.ok()) << g.status().ToString();
    for (int64_t v = -1500; v <= 1500; ++v) {
      EXPECT_EQ(Accepts(*g, std::to_string(v)), v >= lo && v <= hi) << v << " in [" << lo << "," << hi << "]";
    }
    EXPECT_FALSE(Accepts(*g, "01"));
    EXPECT_FALSE(Accepts(*g, "-0"));
    EXPECT_FALSE(Accepts(*g, "1.0"));
  }
}

TEST(NumberPattern, ExclusiveAndFractionalBounds) {
  auto g = CompileSchema(R"({"type":"number","exclusiveMinimum":0,"exclusiveMaximum":10})");
  ASSERT_TRUE(g.ok());
  EXPECT_FALSE(Accepts(*g, "0"));
  EXPECT_TRUE(Accepts(*g, "1"));
  EXPECT_TRUE(Accepts(*g, "9"));
  EXPECT_FALSE(Accepts(*g, "10"));
  EXPECT_TRUE(Accepts(*g, "3.25"));
  EXPECT_FALSE(Accepts(*g, "-1"));
  EXPECT_FALSE(Accepts(*g, "1e3"));
  auto f = CompileSchema(R"({"type":"number","minimum":-10.5111111,"maximum":20.333333333})");
  ASSERT_TRUE(f.ok());
  EXPECT_TRUE(Accepts(*f, "-10"));
  EXPECT_TRUE(Accepts(*f, "-9.75"));
  EXPECT_TRUE(Accepts(*f, "19.99"));
  EXPECT_TRUE(Accepts(*f, "20"));
  EXPECT_FALSE(Accepts(*f, "21"));
  EXPECT_FALSE(Accepts(*f, "-11"));
}

// Bounds far past int64_t (found by tests/fuzz schema target: UBSan reported the conversion of
// -7.7e49 to an integer) bound nothing on their side.
TEST(NumberPattern, BoundsPastTheWritableMagnitudes) {
  auto g = CompileSchema(R"({"type":"number","exclusiveMinimum":-2.5,"exclusiveMaximum":7.7e49})");
  ASSERT_TRUE(g.ok());
  for (const char* ok : {"-2", "-0.5", "0", "3.25", "123456789012345678"}) EXPECT_TRUE(Accepts(*g, ok)) << ok;
  for (const char* bad : {"-3", "-2.75"}) EXPECT_FALSE(Accepts(*g, bad)) << bad;
  // Only 18 integer digits and no exponent are written once a side is bounded: no value fits.
  // Said as the compiler's limit, not as a schema contradicting itself ("admits no value").
  for (const char* schema : {R"({"type":"number","minimum":-1e300,"exclusiveMaximum":-1e60})",
                             R"({"type":"number","exclusiveMinimum":1e50})",
                             R"({"type":"number","minimum":1e308,"maximum":1e308})",
                             R"({"type":"integer","minimum":1e19})"}) {
    auto refused = CompileSchema(schema);
    ASSERT_FALSE(refused.ok()) << schema;
    EXPECT_NE(refused.status().message().find("at most 18 integer digits"), std::string::npos) << refused.status().ToString();
  }
}

TEST(NumberPattern, UnboundedNumbersAreJsonNumbers) {
  auto g = CompileSchema(R"({"type":"number"})");
  ASSERT_TRUE(g.ok());
  for (const char* ok : {"0", "-0", "12", "-3.5", "1e5", "2.5E-3", "0.001"}) EXPECT_TRUE(Accepts(*g, ok)) << ok;
  for (const char* bad : {"01", "+1", ".5", "1.", "1e", "--1", "NaN"}) EXPECT_FALSE(Accepts(*g, bad)) << bad;
}

TEST(NumberPattern, EmptyRangeAdmitsNoValue) {
  auto g = CompileSchema(R"({"type":"integer","minimum":5,"maximum":4})");
  ASSERT_FALSE(g.ok());
  EXPECT_EQ(g.status().code(), Status::Code::kInvalidArgument);
  auto h = CompileSchema(R"({"type":"integer","exclusiveMinimum":0.5,"exclusiveMaximum":1})");
  EXPECT_FALSE(h.ok());
}

}  // namespace
}  // namespace kimi::structured
