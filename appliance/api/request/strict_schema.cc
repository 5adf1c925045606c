#include "api/request/strict_schema.h"

#include <algorithm>
#include <string>
#include <string_view>
#include <unordered_set>
#include <utility>
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

// The string entries of a `required` array, once per object (a name is looked up once per
// property, not compared with every entry).
std::unordered_set<std::string_view> RequiredNames(const Json& required) {
  std::unordered_set<std::string_view> names;
  names.reserve(required.size());
  for (const Json& name : required) {
    if (name.is_string()) names.insert(name.get_ref<const std::string&>());
  }
  return names;
}

// Appends every listed property that may be required to `required`, creating it when needed.
// property_refs[i]: whether the i-th property's (normalised) schema contains a $ref.
void RequireAll(Json& node, const std::vector<bool>& property_refs) {
  if (node.contains("required") && !node["required"].is_array()) return;  // malformed; the decoder refuses it
  std::vector<std::string> missing;
  {
    const std::unordered_set<std::string_view> listed =
        node.contains("required") ? RequiredNames(node["required"]) : std::unordered_set<std::string_view>();
    size_t i = 0;
    for (const auto& [name, schema] : node["properties"].items()) {
      const bool has_ref = property_refs[i++];
      if (schema == false || has_ref) continue;
      if (listed.contains(name)) continue;
      missing.push_back(name);
    }
  }  // `listed` views node's strings: it goes before anything is inserted
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
    // `properties` is an ordered object (a linear lookup): its names are indexed once.
    std::unordered_set<std::string_view> listed;
    listed.reserve(properties.size());
    for (const auto& [name, schema] : properties.items()) listed.insert(name);
    for (const Json& name : node["required"]) {
      if (!name.is_string() || !listed.contains(name.get_ref<const std::string&>())) return false;
    }
  }
  if (node.contains("minProperties")) {
    const Json& min = node["minProperties"];
    if (!min.is_number() || min.get<double>() > static_cast<double>(properties.size())) return false;
  }
  return true;
}

// Room for `extra` more members of an object, its values moved, not copied. An ordered_json
// object keeps (const name, value) pairs in a vector, which grows by copying them: every
// member's whole subtree, and again at each enclosing object that gains a member, so a deep
// schema with a large leaf cost depth x size.
void ReserveMembers(Json& node, size_t extra) {
  Json::object_t& members = node.get_ref<Json::object_t&>();
  if (members.capacity() - members.size() >= extra) return;
  Json::object_t grown;
  grown.reserve(members.size() + extra);
  for (auto& [name, value] : members) grown.emplace_back(name, std::move(value));
  members.swap(grown);
}

// Normalises `node` in place and returns whether the result contains a $ref (ContainsRef).
// A member normalised here answers that for its own subtree, so each subtree is searched for a
// $ref once, not again by every enclosing object.
bool Normalise(Json& node, bool member_of_all_of) {
  if (!node.is_object()) return ContainsRef(node);
  for (const char* key : kAnnotations) node.erase(key);

  std::vector<std::pair<std::string_view, bool>> answered;  // member key -> contains a $ref
  for (const char* key : kSchemaValued) {
    if (node.contains(key) && node[key].is_object()) answered.emplace_back(key, Normalise(node[key], false));
  }
  for (const char* key : kSchemaArrays) {
    if (!node.contains(key) || !node[key].is_array()) continue;
    bool ref = false;
    for (Json& member : node[key]) ref = Normalise(member, false) || ref;
    answered.emplace_back(key, ref);
  }
  if (node.contains("allOf") && node["allOf"].is_array()) {
    bool ref = false;
    for (Json& member : node["allOf"]) ref = Normalise(member, true) || ref;
    answered.emplace_back("allOf", ref);
  }
  std::vector<bool> property_refs;  // in the order of `properties`
  for (const char* key : kSchemaMaps) {
    if (!node.contains(key) || !node[key].is_object()) continue;
    Json& map = node[key];
    bool ref = map.contains("$ref");  // a member named $ref (ContainsRef reads names too)
    for (auto& [name, member] : map.items()) {
      const bool member_ref = Normalise(member, false);
      ref = ref || member_ref;
      if (std::string_view(key) == "properties") property_refs.push_back(member_ref);
    }
    answered.emplace_back(key, ref);
  }

  if (node.contains("properties") && node["properties"].is_object()) {
    ReserveMembers(node, 2);  // `required` and `additionalProperties` may be added
    const bool may_close = MayClose(node, node["properties"], member_of_all_of);
    RequireAll(node, property_refs);
    if (may_close) node["additionalProperties"] = false;
  }

  if (node.contains("$ref")) return true;
  for (const auto& item : node.items()) {
    const std::string& key = item.key();
    const auto it = std::find_if(answered.begin(), answered.end(), [&](const auto& a) { return a.first == key; });
    if (it != answered.end() ? it->second : ContainsRef(item.value())) return true;
  }
  return false;
}

}  // namespace

Json NormaliseStrictSchema(const Json& schema) {
  Json out = schema;
  Normalise(out, false);
  return out;
}

}  // namespace kimi::api::request
