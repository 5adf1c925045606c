// NormaliseStrictSchema: examples of each rule, then properties over generated schemas
// (idempotence, strict inputs unchanged, only narrowing edits).
#include "api/request/strict_schema.h"

#include <algorithm>
#include <random>
#include <set>
#include <string>

#include <gtest/gtest.h>

namespace kimi::api::request {
namespace {

using Json = nlohmann::ordered_json;

Json N(const char* schema) { return NormaliseStrictSchema(Json::parse(schema)); }

TEST(StrictSchemaTest, ObjectsAreClosedAndRequireEveryProperty) {
  EXPECT_EQ(N(R"({"type": "object", "properties": {"a": {"type": "string"}, "b": {"type": "integer"}}})"),
            Json::parse(R"({"type": "object", "properties": {"a": {"type": "string"}, "b": {"type": "integer"}},
                            "required": ["a", "b"], "additionalProperties": false})"));
}

TEST(StrictSchemaTest, ExistingRequiredOrderIsKeptAndExtended) {
  Json out = N(R"({"type": "object", "properties": {"a": {}, "b": {}, "c": {}}, "required": ["c"],
                   "additionalProperties": true})");
  EXPECT_EQ(out["required"], Json::parse(R"(["c", "a", "b"])"));
  EXPECT_EQ(out["additionalProperties"], false);
}

TEST(StrictSchemaTest, NestedObjectsArrayItemsAndAnyOfMembersAreNormalised) {
  Json out = N(R"({"type": "object", "properties": {
      "loc": {"type": "object", "properties": {"lat": {"type": "number"}}},
      "list": {"type": "array", "items": {"type": "object", "properties": {"x": {"type": "string"}}}},
      "either": {"anyOf": [{"type": "object", "properties": {"y": {"type": "string"}}}, {"type": "null"}]}}})");
  EXPECT_EQ(out["properties"]["loc"]["required"], Json::array({"lat"}));
  EXPECT_EQ(out["properties"]["loc"]["additionalProperties"], false);
  EXPECT_EQ(out["properties"]["list"]["items"]["additionalProperties"], false);
  EXPECT_EQ(out["properties"]["either"]["anyOf"][0]["required"], Json::array({"y"}));
}

TEST(StrictSchemaTest, AnnotationsAreRemovedButNotPropertiesOrValuesWithTheirNames) {
  Json out = N(R"({"type": "object", "$comment": "c", "properties": {
      "default": {"type": "string", "default": "x", "examples": ["y"], "description": "kept", "title": "kept"},
      "mode": {"enum": [{"default": 1}], "deprecated": true}}})");
  EXPECT_TRUE(out["properties"].contains("default"));
  EXPECT_EQ(out["properties"]["default"], Json::parse(R"({"type": "string", "description": "kept", "title": "kept"})"));
  EXPECT_EQ(out["properties"]["mode"], Json::parse(R"({"enum": [{"default": 1}]})"));
  EXPECT_FALSE(out.contains("$comment"));
  EXPECT_EQ(out["required"], Json::parse(R"(["default", "mode"])"));
}

TEST(StrictSchemaTest, ObjectsThatClosingWouldBreakStayOpen) {
  // allOf members each list a part of the object: closing either would refuse every instance.
  Json all_of = N(R"({"allOf": [{"type": "object", "properties": {"a": {}}}, {"type": "object", "properties": {"b": {}}}]})");
  EXPECT_FALSE(all_of["allOf"][0].contains("additionalProperties"));
  EXPECT_FALSE(all_of["allOf"][1].contains("additionalProperties"));
  EXPECT_EQ(all_of["allOf"][0]["required"], Json::array({"a"}));
  // Combinators, maps, pattern properties, names required but not listed, minProperties.
  for (const char* schema : {
           R"({"type": "object", "properties": {"a": {}}, "anyOf": [{"required": ["a"]}, {"properties": {"b": {}}}]})",
           R"({"type": "object", "properties": {"a": {}}, "additionalProperties": {"type": "string"}})",
           R"({"type": "object", "properties": {"a": {}}, "patternProperties": {"^x": {}}})",
           R"({"type": "object", "properties": {"a": {}}, "required": ["a", "z"]})",
           R"({"type": "object", "properties": {"a": {}}, "minProperties": 2})",
           R"({"type": "object", "properties": {"a": {}}, "$ref": "#/$defs/base", "$defs": {"base": {}}})"}) {
    Json out = N(schema);
    EXPECT_NE(out["additionalProperties"], false) << schema;
  }
  // An object without `properties` is a free-form object: left open.
  EXPECT_EQ(N(R"({"type": "object"})"), Json::parse(R"({"type": "object"})"));
}

TEST(StrictSchemaTest, PropertiesWithReferencesOrFalseStayOptional) {
  Json out = N(R"({"$defs": {"node": {"type": "object", "properties": {"value": {"type": "integer"},
                                                                         "next": {"$ref": "#/$defs/node"}}}},
                   "type": "object", "properties": {"head": {"$ref": "#/$defs/node"}, "never": false, "n": {}}})");
  EXPECT_EQ(out["required"], Json::array({"n"}));
  EXPECT_EQ(out["$defs"]["node"]["required"], Json::array({"value"}));
  EXPECT_EQ(out["$defs"]["node"]["additionalProperties"], false);
}

// A reference anywhere below a property keeps it optional, whatever comes before it: under a
// keyword the normaliser does not enter (`not`, a value, an annotation that stays), behind a
// `false` property, under a property named `$ref`; an annotation that goes takes its
// reference with it.
TEST(StrictSchemaTest, ReferencesDeepInAPropertyKeepItOptional) {
  Json out = N(R"({"type": "object", "properties": {
      "never": false,
      "deep": {"type": "object", "properties": {"x": {"type": "array", "items": {"not": {"$ref": "#/$defs/a"}}}}},
      "valued": {"enum": [{"$ref": "#"}]},
      "named": {"type": "object", "properties": {"$ref": {"type": "string"}}},
      "annotated": {"type": "string", "default": {"$ref": "#"}},
      "plain": {"type": "string"}}})");
  EXPECT_EQ(out["required"], Json::parse(R"(["annotated", "plain"])"));
  EXPECT_FALSE(out["properties"]["deep"].contains("required")) << "x holds a reference";
  EXPECT_EQ(out["properties"]["named"]["required"], Json::array({"$ref"}));
}

TEST(StrictSchemaTest, NotAndIfAreLeftAlone) {
  const char* schema = R"({"not": {"type": "object", "properties": {"a": {"default": 1}}},
                           "if": {"properties": {"k": {}}}, "then": {"properties": {"t": {}}}})";
  Json out = N(schema);
  EXPECT_EQ(out["not"], Json::parse(schema)["not"]);
  EXPECT_EQ(out["if"], Json::parse(schema)["if"]);
  EXPECT_EQ(out["then"]["required"], Json::array({"t"}));
}

TEST(StrictSchemaTest, NonObjectSchemasPassThrough) {
  EXPECT_EQ(NormaliseStrictSchema(Json(true)), Json(true));
  EXPECT_EQ(N(R"({"type": "string", "minLength": 2})"), Json::parse(R"({"type": "string", "minLength": 2})"));
}

// ---- Properties over generated schemas ----

class SchemaGenerator {
 public:
  explicit SchemaGenerator(uint32_t seed) : rng_(seed) {}

  // Any schema: loose objects, annotations, combinators, references, maps.
  Json Any(int depth) {
    switch (depth <= 0 ? Pick(3) : Pick(9)) {
      case 0: return Leaf();
      case 1: return Json::parse(R"({"type": "string", "default": "d", "minLength": 1})");
      case 2: return Json{{"$ref", "#/$defs/d" + std::to_string(Pick(2))}};
      case 3: return {{"type", "array"}, {"items", Any(depth - 1)}, {"examples", Json::array()}};
      case 4: return {{"anyOf", {Any(depth - 1), Leaf()}}};
      case 5: return {{"allOf", {LooseObject(depth - 1), LooseObject(depth - 1)}}};
      case 6: return {{"type", "object"}, {"additionalProperties", Any(depth - 1)}};
      default: return LooseObject(depth - 1);
    }
  }

  Json LooseObject(int depth) {
    Json node = {{"type", "object"}};
    Json properties = Json::object();
    const int count = Pick(4);
    for (int i = 0; i < count; ++i) properties["p" + std::to_string(i)] = Pick(8) == 0 ? Json(false) : Any(depth);
    node["properties"] = properties;
    if (Pick(2) == 0) {
      Json required = Json::array();
      for (int i = 0; i < count; ++i) {
        if (Pick(2) == 0) required.push_back("p" + std::to_string(i));
      }
      if (Pick(6) == 0) required.push_back("unlisted");
      node["required"] = required;
    }
    switch (Pick(5)) {
      case 0: node["additionalProperties"] = true; break;
      case 1: node["additionalProperties"] = false; break;
      case 2: node["additionalProperties"] = Leaf(); break;
      default: break;
    }
    if (Pick(4) == 0) node["default"] = Json::object();
    if (Pick(4) == 0) node["description"] = "d";
    if (Pick(6) == 0) node["minProperties"] = Pick(5);
    if (Pick(8) == 0) node["patternProperties"] = {{"^x", Leaf()}};
    if (Pick(8) == 0) node["$defs"] = {{"d0", Any(depth - 1)}, {"d1", Leaf()}};
    if (Pick(10) == 0) node["not"] = LooseObject(depth - 1);
    return node;
  }

  // Already strict: closed objects requiring every property, no annotations.
  Json Strict(int depth) {
    switch (depth <= 0 ? 0 : Pick(4)) {
      case 0: return Leaf();
      case 1: return {{"type", "array"}, {"items", Strict(depth - 1)}};
      case 2: return {{"anyOf", {Strict(depth - 1), Json{{"type", "null"}}}}};
      default: {
        Json properties = Json::object();
        std::vector<std::string> names;
        for (int i = 0, count = Pick(4); i < count; ++i) {
          names.push_back("q" + std::to_string(i));
          properties[names.back()] = Strict(depth - 1);
        }
        std::shuffle(names.begin(), names.end(), rng_);  // any order of `required` is strict
        Json node = {{"type", "object"}, {"description", "kept"}, {"properties", properties}};
        node["required"] = names;
        node["additionalProperties"] = false;
        return node;
      }
    }
  }

 private:
  int Pick(int n) { return std::uniform_int_distribution<int>(0, n - 1)(rng_); }
  Json Leaf() {
    static const char* kTypes[] = {"string", "integer", "number", "boolean", "null"};
    return {{"type", kTypes[Pick(5)]}};
  }
  std::mt19937 rng_;
};

// Edits allowed on the way from `in` to `out`: annotations removed, names appended to
// `required`, and additionalProperties going from absent or true to false. Everything else is
// the same, recursively.
void ExpectOnlyNarrowing(const Json& in, const Json& out, const std::string& path) {
  static const std::set<std::string> kAnnotations = {"default", "examples", "$comment", "deprecated", "readOnly",
                                                     "writeOnly", "contentEncoding", "contentMediaType", "contentSchema"};
  if (!in.is_object() || !out.is_object()) {
    if (in.is_array() && out.is_array() && in.size() == out.size()) {
      for (size_t i = 0; i < in.size(); ++i) ExpectOnlyNarrowing(in[i], out[i], path + "/" + std::to_string(i));
      return;
    }
    EXPECT_EQ(in, out) << path;
    return;
  }
  for (const auto& [key, value] : in.items()) {
    if (!out.contains(key)) {
      EXPECT_TRUE(kAnnotations.count(key)) << path << ": dropped " << key;
      continue;
    }
    if (key == "required") {
      ASSERT_GE(out[key].size(), value.size()) << path;
      for (size_t i = 0; i < value.size(); ++i) EXPECT_EQ(out[key][i], value[i]) << path;
    } else if (key == "additionalProperties" && value == true) {
      EXPECT_TRUE(out[key].is_boolean()) << path;  // closed, or left open where closing would break it
    } else {
      ExpectOnlyNarrowing(value, out[key], path + "/" + key);
    }
  }
  for (const auto& [key, value] : out.items()) {
    if (in.contains(key)) continue;
    EXPECT_TRUE(key == "required" || (key == "additionalProperties" && value == false)) << path << ": added " << key;
  }
}

TEST(StrictSchemaPropertyTest, NormalisingTwiceEqualsNormalisingOnce) {
  for (uint32_t seed = 1; seed <= 400; ++seed) {
    SchemaGenerator gen(seed);
    Json schema = gen.LooseObject(4);
    Json once = NormaliseStrictSchema(schema);
    ASSERT_EQ(NormaliseStrictSchema(once), once) << "seed " << seed << ": " << schema.dump();
  }
}

TEST(StrictSchemaPropertyTest, StrictSchemasComeBackUnchanged) {
  for (uint32_t seed = 1; seed <= 400; ++seed) {
    SchemaGenerator gen(seed);
    Json schema = gen.Strict(4);
    ASSERT_EQ(NormaliseStrictSchema(schema), schema) << "seed " << seed << ": " << schema.dump();
  }
}

TEST(StrictSchemaPropertyTest, NormalisationOnlyNarrows) {
  for (uint32_t seed = 1; seed <= 400; ++seed) {
    SchemaGenerator gen(seed);
    Json schema = gen.Any(4);
    ExpectOnlyNarrowing(schema, NormaliseStrictSchema(schema), "seed " + std::to_string(seed));
    if (::testing::Test::HasFailure()) {
      FAIL() << schema.dump();
    }
  }
}

}  // namespace
}  // namespace kimi::api::request
