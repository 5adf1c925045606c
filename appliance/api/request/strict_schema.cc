#include "api/request/strict_schema.h"

#include <algorithm>
#include <string>
#include <vector>

namespace kimi::api::request {
namespace {

using Json = nlohmann::ordered_json;

constexpr const char* kAnnotations[] = {"default",  "examples",        "$comment",         "deprecated",   "readOnly",
                                        "writeOnly", "contentEncoding", "contentMediaType", "contentSchema"};
// Keywords whose value is one schema, one array of schemas, or a name -> schema map, and whose
// narrowing narrows the whole. `not` and `if` are absent on purpose.
constexpr const char* kSchemaValued[] = {"items",    "additionalItems", "additionalProperties", "contains",
                                         "propertyNames", "unevaluatedItems", "unevaluatedProperties", "then",
                                         "else"};
constexpr const char* kSchemaArrays[] = {"anyOf", "oneOf", "prefixItems", "items"};
constexpr const char* kSchemaMaps[] = {"properties", "$defs", "definitions", "dependentSchemas", "patternProperties"};
// An object with one of these is not closed: its instances may carry names `properties`
// does not list.
constexpr const char* kOpenersOfObjects[] = {"allOf",  "anyOf",             "oneOf",                "$ref", "if",
                                             "dependentSchemas", "patternProperties", "unevaluatedProperties"};

bool ContainsRef(const Json& node) {
  if (node.is_object()) {
    if (node.contains("$ref")) return true;
    return std::any_of(node.begin(), node.end(), [](const Json& v) { return ContainsRef(v); });
  }
  if (node.is_array()) return std::any_of(node.begin(), node.end(), [](const Json& v) { return ContainsRef(v); });
  return false;
}

bool Lists(const Json& names, const std::string& name) {
  return std::any_of(names.begin(), names.end(), [&](const Json& n) { return n == name; });
}

// Appends every listed property that may be required to `required`, creating it when needed.
void RequireAll(Json& node) {
  if (node.contains("required") && !node["required"].is_array()) return;  // malformed; the decoder refuses it
  std::vector<std::string> missing;
  for (const auto& [name, schema] : node["properties"].items()) {
    if (schema == false || ContainsRef(schema)) continue;
    if (node.contains("required") && Lists(node["required"], name)) continue;
    missing.push_back(name);
  }
  if (missing.empty()) return;
  Json& required = node["required"];  // inserting may move node's members: look up only now
  if (required.is_null()) required = Json::array();
  for (std::string& name : missing) required.push_back(std::move(name));
}

bool MayClose(const Json& node, const Json& properties, bool member_of_all_of) {
  if (member_of_all_of) return false;
  for (const char* key : kOpenersOfObjects) {
    if (node.contains(key)) return false;
  }
  if (node.contains("additionalProperties") && node["additionalProperties"] != true) return false;
  if (node.contains("required")) {
    for (const Json& name : node["required"]) {
      if (!name.is_string() || !properties.contains(name.get<std::string>())) return false;
    }
  }
  if (node.contains("minProperties")) {
    const Json& min = node["minProperties"];
    if (!min.is_number() || min.get<double>() > static_cast<double>(properties.size())) return false;
  }
  return true;
}

void Normalise(Json& node, bool member_of_all_of) {
  if (!node.is_object()) return;
  for (const char* key : kAnnotations) node.erase(key);

  for (const char* key : kSchemaValued) {
    if (node.contains(key) && node[key].is_object()) Normalise(node[key], false);
  }
  for (const char* key : kSchemaArrays) {
    if (!node.contains(key) || !node[key].is_array()) continue;
    for (Json& member : node[key]) Normalise(member, false);
  }
  if (node.contains("allOf") && node["allOf"].is_array()) {
    for (Json& member : node["allOf"]) Normalise(member, true);
  }
  for (const char* key : kSchemaMaps) {
    if (!node.contains(key) || !node[key].is_object()) continue;
    for (auto& [name, member] : node[key].items()) Normalise(member, false);
  }

  if (!node.contains("properties") || !node["properties"].is_object()) return;
  const bool may_close = MayClose(node, node["properties"], member_of_all_of);
  RequireAll(node);
  if (may_close) node["additionalProperties"] = false;
}

}  // namespace

Json NormaliseStrictSchema(const Json& schema) {
  Json out = schema;
  Normalise(out, false);
  return out;
}

}  // namespace kimi::api::request
