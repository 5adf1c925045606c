#include "structured/schema_compiler.h"

#include <gtest/gtest.h>

#include <chrono>
#include <map>

#include "structured/char_class.h"
#include "structured/schema_limits.h"
#include "structured/structured_test_util.h"

namespace kimi::structured {
namespace {

using testing::Accepts;
using testing::CompileSchema;
using testing::JsonEscapedClass;

struct Expectation {
  std::string schema;
  std::vector<std::string> accepted;
  std::vector<std::string> rejected;
};

void Check(const Expectation& e) {
  auto g = CompileSchema(e.schema);
  ASSERT_TRUE(g.ok()) << e.schema << ": " << g.status().ToString();
  for (const std::string& text : e.accepted) EXPECT_TRUE(Accepts(*g, text)) << e.schema << " should accept " << text;
  for (const std::string& text : e.rejected) EXPECT_FALSE(Accepts(*g, text)) << e.schema << " should reject " << text;
}

TEST(SchemaCompiler, Types) {
  Check({R"({"type":"null"})", {"null"}, {"nul", "0", "\"null\""}});
  Check({R"({"type":"boolean"})", {"true", "false"}, {"True", "1"}});
  Check({R"({"type":"string"})", {R"("")", R"("a b")", R"("\"\\\n")", R"("日本")"}, {"a", R"("a)", R"(" ")" " "}});
  Check({R"({"type":["string","null"]})", {"null", R"("x")"}, {"1"}});
  Check({R"({"type":"integer"})", {"0", "-12", "123456789012345678"}, {"1.5", "1e3", "01"}});
  Check({R"({})", {"null", "1", R"({"a":[1,{"b":null}]})", R"([])"}, {"", "{", "[1,]"}});
  Check({R"(true)", {"1", "\"s\""}, {}});
}

TEST(SchemaCompiler, CompactOutputOnly) {
  Check({R"({"type":"object","properties":{"a":{"type":"integer"}}})", {R"({"a":1})", "{}"}, {R"({ "a":1})", R"({"a": 1})", "{\n}", "{\"a\":1}\n"}});
}

TEST(SchemaCompiler, EnumAndConst) {
  Check({R"({"enum":["a","b",1,null,{"k":[1]}]})", {R"("a")", R"("b")", "1", "null", R"({"k":[1]})"}, {R"("c")", "2", R"({"k":[]})"}});
  Check({R"({"const":"x"})", {R"("x")"}, {R"("y")"}});
  Check({R"({"type":"number","enum":[1,2.5,-3.7],"minimum":0})", {"1", "2.5"}, {"-3.7"}});
  Check({R"({"type":"string","enum":["a","bb"],"minLength":2})", {R"("bb")"}, {R"("a")"}});
}

TEST(SchemaCompiler, ObjectProperties) {
  Check({R"({"type":"object","properties":{"a":{"type":"integer"},"b":{"type":"string"}},"required":["b"],"additionalProperties":false})",
         {R"({"b":""})", R"({"a":1,"b":"x"})"},
         {"{}", R"({"a":1})", R"({"b":"x","c":1})", R"({"b":"x","a":1})", R"({"a":"1","b":"x"})"}});
  // additionalProperties: a schema, applied to names that are not declared.
  Check({R"({"type":"object","properties":{"a":{"type":"integer"}},"additionalProperties":{"type":"boolean"}})",
         {R"({"a":1,"zz":true})", R"({"x":false,"y":true})"},
         {R"({"a":1,"a":true})", R"({"zz":1})", R"({"x\u0041":true})"}});
  // required but undeclared: governed by additionalProperties.
  Check({R"({"type":"object","required":["id"],"additionalProperties":{"type":"integer"}})", {R"({"id":3})"}, {"{}", R"({"id":"3"})"}});
  auto none = CompileSchema(R"({"type":"object","required":["id"],"additionalProperties":false})");
  EXPECT_FALSE(none.ok());
}

TEST(SchemaCompiler, Arrays) {
  Check({R"({"type":"array","items":{"type":"integer"},"minItems":2,"maxItems":3})", {"[1,2]", "[1,2,3]"}, {"[]", "[1]", "[1,2,3,4]", "[1,]", "[1,\"a\"]"}});
  Check({R"({"type":"array","items":{"type":"integer"}})", {"[]", "[1]", "[1,2,3,4,5,6,7,8,9,10]"}, {"[,]"}});
  Check({R"({"type":"array","prefixItems":[{"type":"string"},{"type":"integer"}],"items":false})",
         {"[]", R"(["a"])", R"(["a",1])"}, {R"(["a",1,2])", R"([1])"}});
  Check({R"({"type":"array","prefixItems":[{"type":"string"}],"items":{"type":"boolean"},"minItems":2})",
         {R"(["a",true])", R"(["a",true,false])"}, {R"(["a"])", R"(["a",1])"}});
  Check({R"({"type":"array","minItems":3,"maxItems":3,"items":{"type":"string"}})", {R"(["","",""])"}, {R"(["",""])"}});
}

TEST(SchemaCompiler, StringLengthsCountCharacters) {
  Check({R"({"type":"string","minLength":2,"maxLength":3})", {R"("ab")", R"("日本語")", R"("a\"")"}, {R"("a")", R"("abcd")"}});
  Check({R"({"type":"string","pattern":"^[a-z]+$","minLength":1,"maxLength":4})", {R"("abcd")"}, {R"("")", R"("abcde")", R"("aB")"}});
  // Huge bounds stay a few states (a counter), and compile.
  EXPECT_TRUE(CompileSchema(R"({"type":"string","minLength":999999999999})").ok());
  EXPECT_TRUE(CompileSchema(R"({"type":"string","maxLength":5000000})").ok());
  EXPECT_FALSE(CompileSchema(R"({"type":"string","minLength":3,"maxLength":2})").ok());
}

TEST(SchemaCompiler, Formats) {
  Check({R"({"type":"string","format":"date"})", {R"("2024-05-01")"}, {R"("2024-5-1")", R"("2024-13-01")"}});
  Check({R"({"type":"string","format":"date-time"})", {R"("2024-05-01T12:30:00Z")", R"("2024-05-01T12:30:00.5+02:00")"}, {R"("2024-05-01 12:30:00")"}});
  Check({R"({"type":"string","format":"uuid"})", {R"("123e4567-e89b-12d3-a456-426614174000")"}, {R"("123e4567")"}});
  Check({R"({"type":"string","format":"email"})", {R"("a.b@example.com")"}, {R"("ab")"}});
  auto g = CompileSchema(R"({"type":"string","format":"hostname"})");
  ASSERT_FALSE(g.ok());
  EXPECT_NE(g.status().message().find("/format"), std::string::npos) << g.status().message();
}

TEST(SchemaCompiler, Combinators) {
  Check({R"({"anyOf":[{"type":"string"},{"type":"integer"}]})", {R"("a")", "3"}, {"null"}});
  Check({R"({"oneOf":[{"type":"string"},{"type":"null"}]})", {R"("a")", "null"}, {"3"}});
  EXPECT_FALSE(CompileSchema(R"({"oneOf":[{"type":"number"},{"type":"integer"}]})").ok());
  Check({R"({"allOf":[{"type":"object","properties":{"a":{"type":"integer"}},"required":["a"]},{"required":["b"],"properties":{"b":{"type":"string"}}}]})",
         {R"({"a":1,"b":""})"}, {R"({"a":1})", R"({"b":""})"}});
  Check({R"({"type":"object","anyOf":[{"required":["a"]},{"required":["b"]}],"properties":{"a":{"type":"integer"},"b":{"type":"integer"}}})",
         {R"({"a":1})", R"({"b":1})", R"({"a":1,"b":2})"}, {"{}"}});
  Check({R"({"type":"string","nullable":true})", {"null", R"("x")"}, {"1"}});
}

TEST(SchemaCompiler, ReferencesAndRecursion) {
  Check({R"({"$defs":{"n":{"type":"object","properties":{"next":{"$ref":"#/$defs/n"},"v":{"type":"integer"}},"additionalProperties":false}},"$ref":"#/$defs/n"})",
         {"{}", R"({"next":{"next":{}},"v":1})"}, {R"({"next":1})"}});
  Check({R"({"type":"object","properties":{"child":{"$ref":"#"},"name":{"type":"string"}},"required":["name"],"additionalProperties":false})",
         {R"({"child":{"name":"b"},"name":"a"})"}, {R"({"child":{},"name":"a"})"}});
  Check({R"({"definitions":{"s":{"type":"string"}},"properties":{"a":{"$ref":"#/definitions/s"}},"additionalProperties":false})",
         {R"({"a":"x"})"}, {R"({"a":1})"}});
  EXPECT_FALSE(CompileSchema(R"({"$ref":"#"})").ok());
  EXPECT_FALSE(CompileSchema(R"({"$ref":"#/$defs/missing"})").ok());
  EXPECT_FALSE(CompileSchema(R"({"$ref":"https://example.com/s.json"})").ok());
}

// The schemas of a penetration test that crashed (allOf: Merge recursed off the stack) or hung
// (oneOf: Resolve looped) the daemon, and their siblings: each is refused by name, at once.
TEST(SchemaCompiler, SelfReferencesThatConsumeNothingAreRefused) {
  for (const char* schema : {
           R"({"$defs":{"a":{"$ref":"#/$defs/a"}},"allOf":[{"$ref":"#/$defs/a"}]})",
           R"({"$defs":{"a":{"$ref":"#/$defs/a"}},"oneOf":[{"$ref":"#/$defs/a"}]})",
           R"({"$defs":{"a":{"$ref":"#/$defs/a"}},"anyOf":[{"$ref":"#/$defs/a"}]})",
           R"({"$defs":{"a":{"$ref":"#/$defs/a","type":"object"}},"allOf":[{"$ref":"#/$defs/a"}]})",
           R"({"$defs":{"a":{"allOf":[{"$ref":"#/$defs/b"}]},"b":{"anyOf":[{"$ref":"#/$defs/a"},{"type":"null"}]}},"$ref":"#/$defs/a"})",
           R"({"allOf":[{"$ref":"#"}]})",
           R"({"type":"object","oneOf":[{"$ref":"#"}]})",
           // A reference into data the schema walk does not reach on its own.
           R"({"examples":[{"$ref":"#/examples/0","type":"object"}],"allOf":[{"$ref":"#/examples/0"}]})",
       }) {
    auto g = CompileSchema(schema);
    ASSERT_FALSE(g.ok()) << schema;
    EXPECT_EQ(g.status().code(), Status::Code::kInvalidArgument) << schema;
    EXPECT_NE(g.status().message().find("refers to itself"), std::string::npos) << schema << ": " << g.status().message();
  }
  auto g = CompileSchema(R"({"$defs":{"a":{"$ref":"#/$defs/a"}},"allOf":[{"$ref":"#/$defs/a"}]})");
  EXPECT_NE(g.status().message().find("/$defs/a"), std::string::npos) << g.status().message();
}

TEST(SchemaCompiler, RecursionThroughObjectsAndArraysStillCompilesAndConstrains) {
  Check({R"({"$defs":{"node":{"type":"object","properties":{"name":{"type":"string"},"children":{"type":"array","items":{"$ref":"#/$defs/node"}}},"required":["name"],"additionalProperties":false}},"$ref":"#/$defs/node"})",
         {R"({"name":"a"})", R"({"name":"a","children":[]})", R"({"name":"a","children":[{"name":"b","children":[{"name":"c"}]}]})"},
         {"{}", R"({"name":"a","children":[{}]})", R"({"name":"a","children":[1]})", R"({"children":[]})"}});
  // A recursive anyOf whose every turn writes an array.
  Check({R"({"$defs":{"t":{"anyOf":[{"type":"integer"},{"type":"array","items":{"$ref":"#/$defs/t"}}]}},"$ref":"#/$defs/t"})",
         {"1", "[]", "[1,[2,[3]],[]]"}, {"[1,", "\"a\"", "[[\"a\"]]"}});
}

std::string Nested(const std::string& open, const std::string& leaf, const std::string& close, int levels) {
  std::string out;
  for (int i = 0; i < levels; ++i) out += open;
  out += leaf;
  for (int i = 0; i < levels; ++i) out += close;
  return out;
}

TEST(SchemaCompiler, DeepNestingIsRefusedWithoutRecursion) {
  for (const std::string& schema : {Nested(R"({"items":)", "{}", "}", 30000), Nested(R"({"anyOf":[)", "{}", "]}", 30000),
                                    Nested(R"({"enum":[)", "1", "]}", 30000), Nested(R"({"properties":{"a":)", "{}", "}}", 30000)}) {
    auto g = CompileSchema(schema);
    ASSERT_FALSE(g.ok());
    EXPECT_NE(g.status().message().find("nested deeper"), std::string::npos) << g.status().message();
  }
  // The limit is far above what a real schema nests.
  EXPECT_TRUE(CompileSchema(Nested(R"({"type":"array","items":)", R"({"type":"integer"})", "}", 30)).ok());
}

TEST(SchemaCompiler, HugeEnumsAreRefusedAndLongLiteralsStayCheap) {
  std::string huge = R"({"enum":[)";  // within max_nodes, past max_enum_values
  for (int i = 0; i < 10000; ++i) huge += (i ? "," : "") + std::to_string(i);
  huge += "]}";
  auto g = CompileSchema(huge);
  ASSERT_FALSE(g.ok());
  EXPECT_NE(g.status().message().find("enum/const values"), std::string::npos) << g.status().message();

  std::string fine = R"({"enum":[)";
  for (int i = 0; i < 1000; ++i) fine += (i ? "," : "") + std::string("\"v") + std::to_string(i) + "\"";
  fine += "]}";
  Check({fine, {R"("v0")", R"("v999")"}, {R"("v1000")"}});
  // One literal of 100,000 bytes is a chain of 100,000 states: trimming and distances are
  // linear in it, not quadratic.
  const std::string text(100000, 'a');
  Check({R"({"const":")" + text + R"("})", {"\"" + text + "\""}, {"\"" + text + "a\""}});
}

TEST(SchemaCompiler, CompilationStaysWithinItsBudget) {
  // A $ref with sibling keywords is merged and compiled in place, not shared: two of them per
  // level double the work per level, 2^40 subschemas from a document of 40 small definitions,
  // no cycle and no deep nesting. The budget ends it.
  std::string doubling = R"({"$defs":{)";
  for (int i = 0; i < 40; ++i) {
    const std::string next = R"({"$ref":"#/$defs/d)" + std::to_string(i + 1) + R"(","type":"object"})";
    doubling += "\"d" + std::to_string(i) + R"(":{"type":"object","properties":{"a":)" + next + R"(,"b":)" + next + "}},";
  }
  doubling += R"("d40":{"type":"object"}},"$ref":"#/$defs/d0"})";
  auto g = CompileSchema(doubling);
  ASSERT_FALSE(g.ok());
  EXPECT_EQ(g.status().code(), Status::Code::kInvalidArgument);
  const std::string& why = g.status().message();
  EXPECT_TRUE(why.find("too complex") != std::string::npos || why.find("grammar states") != std::string::npos) << why;

  const std::string tree =
      R"({"type":"object","properties":{"a":{"type":"string","format":"date-time"},"b":{"type":"array","items":{"type":"integer"}}}})";
  ASSERT_TRUE(CompileSchema(tree).ok());
  CompileBudget few_states;
  few_states.max_states = 50;
  auto states = CompileSchema(tree, few_states);
  ASSERT_FALSE(states.ok());
  EXPECT_NE(states.status().message().find("grammar states"), std::string::npos) << states.status().message();
  // Long literals and names are refused before they are written out, one state per byte.
  const std::string long_const = R"({"const":")" + std::string(300000, 'x') + R"("})";
  auto literal = CompileSchema(long_const);
  ASSERT_FALSE(literal.ok());
  EXPECT_NE(literal.status().message().find("grammar states"), std::string::npos) << literal.status().message();
  const std::string long_name = R"({"type":"object","properties":{")" + std::string(300000, 'n') + R"(":{}}})";
  EXPECT_FALSE(CompileSchema(long_name).ok());
  CompileBudget past_deadline;
  past_deadline.deadline = std::chrono::steady_clock::now() - std::chrono::seconds(1);
  auto late = CompileSchema(tree, past_deadline);
  ASSERT_FALSE(late.ok());
  EXPECT_NE(late.status().message().find("time limit"), std::string::npos) << late.status().message();
}

TEST(SchemaCompiler, LimitsOnSizeChainsAndPatterns) {
  SchemaLimits limits;
  limits.max_nodes = 10;
  EXPECT_FALSE(CheckSchemaLimits(Json::parse(R"({"enum":[1,2,3,4,5,6,7,8,9,10]})"), limits).ok());
  EXPECT_TRUE(CheckSchemaLimits(Json::parse(R"({"enum":[1,2,3]})"), limits).ok());
  // A chain of references without a cycle, longer than the bound.
  std::string chain = R"({"$defs":{)";
  for (int i = 0; i < 100; ++i) chain += "\"d" + std::to_string(i) + R"(":{"$ref":"#/$defs/d)" + std::to_string(i + 1) + "\"},";
  chain += R"("d100":{"type":"null"}},"$ref":"#/$defs/d0"})";
  auto chained = CheckSchemaLimits(Json::parse(chain));
  ASSERT_FALSE(chained.ok());
  EXPECT_NE(chained.message().find("chain"), std::string::npos) << chained.message();
  auto pattern = CompileSchema(R"({"type":"string","pattern":")" + std::string(5000, 'a') + R"("})");
  ASSERT_FALSE(pattern.ok());
  EXPECT_NE(pattern.status().message().find("/pattern"), std::string::npos) << pattern.status().message();
}

TEST(SchemaCompiler, UnsupportedKeywordIsNamedWithItsPointer) {
  auto g = CompileSchema(R"({"type":"object","properties":{"a/b":{"type":"string","contentEncoding":"base64"}}})");
  ASSERT_FALSE(g.ok());
  EXPECT_EQ(g.status().code(), Status::Code::kInvalidArgument);
  EXPECT_NE(g.status().message().find("'contentEncoding'"), std::string::npos) << g.status().message();
  EXPECT_NE(g.status().message().find("/properties/a~1b/contentEncoding"), std::string::npos) << g.status().message();
  for (const char* schema : {R"({"patternProperties":{"a":{}}})", R"({"type":"object","minProperties":1})", R"({"not":{}})",
                             R"({"type":"array","uniqueItems":true})", R"({"type":"number","multipleOf":2})", R"({"if":{}})"}) {
    EXPECT_FALSE(CompileSchema(schema).ok()) << schema;
  }
}

TEST(SchemaCompiler, MalformedSchemasAreInvalidArgumentsNotCrashes) {
  EXPECT_TRUE(CompileSchema(R"({"type":"string","nullable":"yes"})").ok());  // only true adds null
  for (const char* schema : {R"({"oneOf":[{"$ref":5}]})", R"({"allOf":[{"type":[1]},{"type":"string"}]})",
                             R"({"type":7})", R"({"properties":[]})", R"({"required":"a"})", R"({"minLength":-1})", R"({"items":3})",
                             R"({"allOf":[{"$ref":{}}]})", R"({"enum":3})", R"({"pattern":5})", R"({"$ref":"#/$defs/x/0"})"}) {
    auto g = CompileSchema(schema);
    ASSERT_FALSE(g.ok()) << schema;
    EXPECT_EQ(g.status().code(), Status::Code::kInvalidArgument) << schema << ": " << g.status().ToString();
  }
}

TEST(SchemaCompiler, EveryVerifierCaseCompilesOrIsRefusedByName) {
  auto cases = testing::VerifierSchemaCases();
  ASSERT_TRUE(cases.ok()) << cases.status().ToString();
  std::map<std::string, int> refused;
  int compiled = 0;
  for (const auto& c : *cases) {
    auto g = CompileSchema(c.schema);
    if (g.ok()) {
      ++compiled;
    } else {
      EXPECT_NE(g.status().message().find("unsupported"), std::string::npos) << c.suite << ":" << c.line << " " << g.status().ToString();
      refused[g.status().message()]++;
    }
  }
  std::printf("verifier cases: %zu, compiled %d, refused %zu kinds\n", cases->size(), compiled, refused.size());
  for (const auto& [why, n] : refused) std::printf("  refused x%d: %s\n", n, why.c_str());
  EXPECT_EQ(compiled, int(cases->size()));
}

// The builder counts every state and edge where it is made: past its limit it adds nothing
// more, and Finish() refuses the grammar naming the limit, whatever code did the building.
TEST(GrammarBuilder, PastItsLimitsItStopsGrowingAndFinishRefuses) {
  GrammarBuilder states;
  states.Limit(20, 1000);
  const int32_t rule = states.NewRule("r");
  const int32_t end = states.NewState(rule);
  states.MarkEnd(end);
  states.AddLiteral(states.RuleStart(rule), std::string(100000, 'x'), end);
  EXPECT_TRUE(states.exhausted());
  EXPECT_LE(states.num_states(), 21u);  // the limit and one placeholder
  auto refused = states.Finish(rule, "the test");
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.status().message().find("20 grammar states"), std::string::npos) << refused.status().message();

  GrammarBuilder edges;
  edges.Limit(1000, 10);
  const int32_t r = edges.NewRule("r");
  const int32_t e = edges.NewState(r);
  edges.MarkEnd(e);
  for (int i = 0; i < 1000; ++i) edges.AddEpsilon(edges.RuleStart(r), e);
  EXPECT_TRUE(edges.exhausted());
  EXPECT_LE(edges.num_edges(), 10u);
  auto too_many = edges.Finish(r, "the test");
  ASSERT_FALSE(too_many.ok());
  EXPECT_NE(too_many.status().message().find("10 grammar edges"), std::string::npos) << too_many.status().message();
}

// A character class is placed on an edge as its bytes' automaton (shared suffixes merged) and,
// when that takes more than a few states, as a call of one rule per class. The penetration
// test's 50-character class repeated {1000}{19} is refused by the bound on the pattern's
// automaton (edges times ranges); states made while placing classes count against the budget
// as they are made.
TEST(SchemaCompiler, RepeatedCharacterClassesStayWithinTheStateBudget) {
  const std::string fifty = JsonEscapedClass(50, 0x4E00, 2);
  auto repeated = CompileSchema(R"({"type":"string","pattern":")" + fifty + R"({1000}{19}"})");
  if (repeated.ok()) {
    EXPECT_LE((*repeated)->states.size(), CompileBudget().max_states);
  } else {
    EXPECT_EQ(repeated.status().code(), Status::Code::kInvalidArgument);
    EXPECT_NE(repeated.status().message().find("character ranges"), std::string::npos) << repeated.status().message();
  }
  // `.` on 19,000 edges: within the pattern's bound, past the grammar's.
  auto dots = CompileSchema(R"({"type":"string","pattern":".{1000}{19}"})");
  if (dots.ok()) {
    EXPECT_LE((*dots)->states.size(), CompileBudget().max_states);
  } else {
    EXPECT_NE(dots.status().message().find("grammar states"), std::string::npos) << dots.status().message();
  }
  // Every other code point merges into a few states per edge: 1,000 counted layers compile.
  auto counted = CompileSchema(R"({"type":"string","pattern":"^)" + fifty + R"(+$","maxLength":1000})");
  ASSERT_TRUE(counted.ok()) << counted.status().ToString();
  EXPECT_LE((*counted)->states.size(), size_t(20000));
  EXPECT_TRUE(Accepts(*counted, "\"\u4e00\u4e02\u4e62\""));
  EXPECT_FALSE(Accepts(*counted, "\"\u4e01\""));
  // 300 scattered characters repeated 300 times: one rule for the class, called per edge.
  const std::string scattered = JsonEscapedClass(300, 0x4E00, 67);
  auto called = CompileSchema(R"({"type":"string","pattern":"^)" + scattered + R"({300}$"})");
  ASSERT_TRUE(called.ok()) << called.status().ToString();
  EXPECT_LE((*called)->states.size(), size_t(5000));
  std::string text = "\"";
  for (int i = 0; i < 300; ++i) text += i % 2 ? "\u4e43" : "\u4e00";  // U+4E00 + 67 = U+4E43
  EXPECT_TRUE(Accepts(*called, text + "\""));
  EXPECT_FALSE(Accepts(*called, text + "\u4e00\""));
  EXPECT_FALSE(Accepts(*called, "\"\u4e01" + text.substr(4) + "\""));
  // A budget the placing passes is refused by name, not exceeded.
  CompileBudget small;
  small.max_states = 2000;
  auto tight = CompileSchema(R"({"type":"string","pattern":"^.{400}$"})", small);
  ASSERT_FALSE(tight.ok());
  EXPECT_NE(tight.status().message().find("grammar states"), std::string::npos) << tight.status().message();
}

TEST(CharClass, RangesAddedInAnyOrderAreNormalised) {
  CharClass c;
  for (char32_t x : {U'z', U'a', U'm', U'b', U'y', U'c'}) c.Add(x, x);
  c.Add(U'd', U'l');
  c.Add(0xD000, 0xE100);  // the surrogates are cut out
  ASSERT_EQ(c.ranges().size(), 4u);
  EXPECT_EQ(c.ranges()[0], (CodePointRange{U'a', U'm'}));
  EXPECT_EQ(c.ranges()[1], (CodePointRange{U'y', U'z'}));
  EXPECT_EQ(c.ranges()[2], (CodePointRange{0xD000, 0xD7FF}));
  EXPECT_EQ(c.ranges()[3], (CodePointRange{0xE000, 0xE100}));
  EXPECT_EQ(CharClass::FromRanges({{U'y', U'z'}, {U'a', U'c'}, {U'b', U'm'}, {0xD000, 0xE100}}), c);
  EXPECT_TRUE(c.Contains(U'k'));
  EXPECT_FALSE(c.Contains(U'n'));
  EXPECT_FALSE(c.Contains(0xD800));
  CharClass other = CharClass::Of(U'n', U'x');
  other.Add(c);
  EXPECT_EQ(other.ranges().front(), (CodePointRange{U'a', U'z'}));
  // A whole script's range and `.` take a handful of states; escapes share their prefixes.
  EXPECT_LE(Utf8Bytes(CharClass::Of(0x4E00, 0x9FFF)).inner, 4);
  EXPECT_LE(JsonStringBytes(CharClass::AnyChar()).inner, 16);
}

}  // namespace
}  // namespace kimi::structured
