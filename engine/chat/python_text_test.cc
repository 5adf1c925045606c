#include "kimi/python_text.h"

#include <gtest/gtest.h>

namespace kimi::chat {
namespace {

TEST(PythonText, FloatReprMatchesPython) {
  EXPECT_EQ(PythonFloatRepr(1.0), "1.0");
  EXPECT_EQ(PythonFloatRepr(0.1), "0.1");
  EXPECT_EQ(PythonFloatRepr(1e16), "1e+16");
  EXPECT_EQ(PythonFloatRepr(1e15), "1000000000000000.0");
  EXPECT_EQ(PythonFloatRepr(1.5e-5), "1.5e-05");
  EXPECT_EQ(PythonFloatRepr(0.0001), "0.0001");
  EXPECT_EQ(PythonFloatRepr(-0.0), "-0.0");
  EXPECT_EQ(PythonFloatRepr(123456789012345678.0), "1.2345678901234568e+17");
  EXPECT_EQ(PythonFloatRepr(1e300), "1e+300");
  EXPECT_EQ(PythonFloatRepr(2.5e-300), "2.5e-300");
  EXPECT_EQ(PythonFloatRepr(5e-324), "5e-324");
  EXPECT_EQ(PythonFloatRepr(123.456), "123.456");
}

TEST(PythonText, JsonDumpsUsesPythonSeparatorsAndEscapes) {
  Json v = Json::parse(R"({"z": [1, 2.0, true, null], "a": "q\"\\\n\u0001\u007f 東"})");
  EXPECT_EQ(PythonJsonDumps(v), "{\"z\": [1, 2.0, true, null], \"a\": \"q\\\"\\\\\\n\\u0001\x7f 東\"}");
}

TEST(PythonText, SortedCompactJsonSortsLikeDictsort) {
  Json v = Json::parse(R"({"b": 1, "A": 2, "a": 3, "B": [{"y": 1, "X": 2}], "Ä": 4, "ä": 5})");
  EXPECT_EQ(SortedCompactJson(v), R"({"A":2,"a":3,"b":1,"B":[{"X":2,"y":1}],"Ä":4,"ä":5})");
}

TEST(PythonText, StrOfNonStrings) {
  EXPECT_EQ(PythonStr(Json(true)), "True");
  EXPECT_EQ(PythonStr(Json(nullptr)), "None");
  EXPECT_EQ(PythonStr(Json(3.5)), "3.5");
  EXPECT_EQ(PythonStr(Json::parse(R"({"a": [1, "it's"], "b": "x\ny"})")), R"({'a': [1, "it's"], 'b': 'x\ny'})");
  EXPECT_EQ(PythonStr(Json::parse(R"(["\u00a0é\u200b"])")), "['\\xa0é\\u200b']");
}

TEST(PythonText, StripAndLowerFollowUnicode) {
  EXPECT_EQ(PythonStrip("\u3000 \t x y \u2028\n"), "x y");
  EXPECT_EQ(PythonStrip(" \u00a0 "), "");
  EXPECT_EQ(PythonStrip("\u200bx"), "\u200bx");  // U+200B is not whitespace to Python
  EXPECT_EQ(PythonLower("ÄbC"), "äbc");
  EXPECT_EQ(PythonLower("\u0130"), "i\u0307");
}

TEST(PythonText, Truthiness) {
  EXPECT_FALSE(PythonTruthy(Json("")));
  EXPECT_FALSE(PythonTruthy(Json(0)));
  EXPECT_FALSE(PythonTruthy(Json(0.0)));
  EXPECT_FALSE(PythonTruthy(Json::array()));
  EXPECT_FALSE(PythonTruthy(Json::object()));
  EXPECT_FALSE(PythonTruthy(Json()));
  EXPECT_TRUE(PythonTruthy(Json(" ")));
  EXPECT_TRUE(PythonTruthy(Json::array({0})));
}

}  // namespace
}  // namespace kimi::chat
