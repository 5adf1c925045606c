#include "structured/schema_limits.h"

#include <algorithm>
#include <unordered_map>
#include <utility>
#include <vector>

namespace kimi::structured {
namespace {

using Json = nlohmann::ordered_json;

// Subschema keywords, by whether the subschema applies to the same instance (no input consumed
// between the two) or to a part of it (a property value, an item, a name).
constexpr const char* kSameInstanceOne[] = {"not", "if", "then", "else"};
constexpr const char* kSameInstanceList[] = {"allOf", "anyOf", "oneOf"};
constexpr const char* kSameInstanceMap[] = {"dependentSchemas"};
constexpr const char* kPartOne[] = {"additionalProperties", "items", "contains", "propertyNames", "additionalItems",
                                    "unevaluatedItems", "unevaluatedProperties"};
constexpr const char* kPartList[] = {"prefixItems", "items"};
// Definitions apply to nothing by themselves; they are checked because a $ref may reach them.
constexpr const char* kPartMap[] = {"properties", "patternProperties", "$defs", "definitions"};

std::string Display(const std::string& pointer) { return pointer.empty() ? "/" : pointer; }

Status CheckSize(const Json& document, const SchemaLimits& limits) {
  std::vector<std::pair<const Json*, size_t>> stack = {{&document, 1}};
  size_t nodes = 0;
  while (!stack.empty()) {
    const auto [value, depth] = stack.back();
    stack.pop_back();
    if (++nodes > limits.max_nodes) {
      return Status::InvalidArgument("the schema has more than " + std::to_string(limits.max_nodes) + " JSON values");
    }
    if (depth > limits.max_depth) {
      return Status::InvalidArgument("the schema is nested deeper than " + std::to_string(limits.max_depth) + " levels");
    }
    if (value->is_structured()) {
      for (const Json& child : *value) stack.emplace_back(&child, depth + 1);
    }
  }
  return Status::OK();
}

// The schemas of a document (those reached from the root through subschema keywords and local
// references), each with the ones it applies to the same instance. A node keeps where it was
// found (its parent, the keyword and the name or index under it) rather than its JSON pointer:
// pointers are spelled out only for a message, because one per node would cost the depth
// times the keys' lengths (62 nested properties of 120 KB keys: hundreds of megabytes).
class SchemaGraph {
 public:
  SchemaGraph(const Json& document, const SchemaLimits& limits) : document_(document), limits_(limits) {}

  Status Build() {
    Add(&document_, Place{});
    for (size_t id = 0; id < nodes_.size(); ++id) KIMI_RETURN_IF_ERROR(Visit(id));
    return Status::OK();
  }

  // Refuses a cycle of same-instance edges and chains longer than max_ref_chain, without
  // recursion (a depth-first walk with its own stack).
  Status CheckChains() const {
    enum : uint8_t { kNew, kOnPath, kDone };
    std::vector<uint8_t> mark(nodes_.size(), kNew);
    std::vector<size_t> chain(nodes_.size(), 0);
    for (size_t root = 0; root < nodes_.size(); ++root) {
      if (mark[root] != kNew) continue;
      std::vector<std::pair<size_t, size_t>> path = {{root, 0}};  // node, next edge
      mark[root] = kOnPath;
      while (!path.empty()) {
        const size_t id = path.back().first;
        const std::vector<size_t>& edges = nodes_[id].same_instance;
        if (path.back().second < edges.size()) {
          const size_t next = edges[path.back().second++];
          if (mark[next] == kOnPath) {
            return Status::InvalidArgument("the schema at " + Display(Pointer(next)) +
                                           " refers to itself without consuming input (reached again from " +
                                           Display(Pointer(id)) +
                                           " through $ref/allOf/anyOf/oneOf, with no object or array in between)");
          }
          if (mark[next] == kNew) {
            mark[next] = kOnPath;
            path.emplace_back(next, 0);
          }
          continue;
        }
        size_t longest = 0;
        for (size_t next : edges) longest = std::max(longest, chain[next]);
        chain[id] = longest + 1;
        if (chain[id] > limits_.max_ref_chain) {
          return Status::InvalidArgument("the schema at " + Display(Pointer(id)) + " starts a chain of more than " +
                                         std::to_string(limits_.max_ref_chain) +
                                         " $ref/allOf/anyOf/oneOf steps without consuming input");
        }
        mark[id] = kDone;
        path.pop_back();
      }
    }
    return Status::OK();
  }

 private:
  static constexpr size_t kNoParent = size_t(-1);
  // Where a node was first found: the root (no parent, no keyword), a $ref's target (no
  // parent; `name` is the reference's pointer text, escaped already), or `keyword` under its
  // parent, then `name` or `index` under that when the keyword holds a map or a list.
  struct Place {
    size_t parent = kNoParent;
    const char* keyword = nullptr;
    std::string_view name;
    size_t index = 0;
    enum class Under : uint8_t { kKeyword, kName, kIndex } under = Under::kKeyword;
  };
  struct Node {
    const Json* schema;
    Place place;
    std::vector<size_t> same_instance;
  };

  size_t Add(const Json* schema, const Place& place) {
    auto [it, fresh] = ids_.try_emplace(schema, nodes_.size());
    if (fresh) nodes_.push_back(Node{schema, place, {}});
    return it->second;
  }

  // The node's JSON pointer, built from the root down (once, for a message).
  std::string Pointer(size_t id) const {
    std::vector<size_t> chain;
    for (size_t at = id; at != kNoParent; at = nodes_[at].place.parent) chain.push_back(at);
    std::string out;
    for (auto it = chain.rbegin(); it != chain.rend(); ++it) {
      const Place& place = nodes_[*it].place;
      if (place.parent == kNoParent) {
        out.assign(place.name);  // the root's "" or a $ref's pointer
        continue;
      }
      AppendPointerSegment(&out, place.keyword);
      if (place.under == Place::Under::kName) AppendPointerSegment(&out, place.name);
      if (place.under == Place::Under::kIndex) out += "/" + std::to_string(place.index);
    }
    return out;
  }

  // The schema a local reference points to, or nullptr (remote, malformed or dangling: the
  // compiler names those; they lead nowhere here).
  const Json* Target(const std::string& ref) const {
    if (ref.empty() || ref[0] != '#') return nullptr;
    if (ref == "#") return &document_;
    try {
      const Json::json_pointer pointer(ref.substr(1));
      return document_.contains(pointer) ? &document_.at(pointer) : nullptr;
    } catch (const nlohmann::json::exception&) {
      return nullptr;
    }
  }

  Status Visit(size_t id) {
    const Json& schema = *nodes_[id].schema;
    if (!schema.is_object()) return Status::OK();
    auto link = [&](const Json& child, const Place& place, bool same_instance) {
      const size_t child_id = Add(&child, place);
      if (same_instance) nodes_[id].same_instance.push_back(child_id);
    };
    if (auto it = schema.find("enum"); it != schema.end() && it->is_array()) enum_values_ += it->size();
    if (schema.contains("const")) ++enum_values_;
    if (enum_values_ > limits_.max_enum_values) {
      return Status::InvalidArgument("the schema lists more than " + std::to_string(limits_.max_enum_values) +
                                     " enum/const values (at " + Display(Pointer(id)) + ")");
    }
    if (auto it = schema.find("pattern"); it != schema.end() && it->is_string() &&
                                          it->get_ref<const std::string&>().size() > limits_.max_pattern_bytes) {
      return Status::InvalidArgument("the pattern at " + ChildPointer(Pointer(id), "pattern") + " is longer than " +
                                     std::to_string(limits_.max_pattern_bytes) + " bytes");
    }
    if (auto it = schema.find("$ref"); it != schema.end() && it->is_string()) {
      const std::string& ref = it->get_ref<const std::string&>();
      if (const Json* target = Target(ref)) link(*target, Place{kNoParent, nullptr, std::string_view(ref).substr(1)}, true);
    }
    auto one = [&](const char* key, bool same) {
      if (auto it = schema.find(key); it != schema.end() && (it->is_object() || it->is_boolean())) {
        link(*it, Place{id, key}, same);
      }
    };
    auto list = [&](const char* key, bool same) {
      auto it = schema.find(key);
      if (it == schema.end() || !it->is_array()) return;
      for (size_t i = 0; i < it->size(); ++i) link((*it)[i], Place{id, key, {}, i, Place::Under::kIndex}, same);
    };
    auto map = [&](const char* key, bool same) {
      auto it = schema.find(key);
      if (it == schema.end() || !it->is_object()) return;
      for (const auto& [name, child] : it->items()) link(child, Place{id, key, name, 0, Place::Under::kName}, same);
    };
    for (const char* key : kSameInstanceOne) one(key, true);
    for (const char* key : kSameInstanceList) list(key, true);
    for (const char* key : kSameInstanceMap) map(key, true);
    for (const char* key : kPartOne) one(key, false);
    for (const char* key : kPartList) list(key, false);
    for (const char* key : kPartMap) map(key, false);
    return Status::OK();
  }

  const Json& document_;
  const SchemaLimits& limits_;
  std::vector<Node> nodes_;
  std::unordered_map<const Json*, size_t> ids_;
  size_t enum_values_ = 0;
};

}  // namespace

void AppendPointerSegment(std::string* pointer, std::string_view key) {
  pointer->reserve(pointer->size() + 1 + key.size());
  *pointer += '/';
  for (char c : key) {
    if (c == '~') {
      *pointer += "~0";
    } else if (c == '/') {
      *pointer += "~1";
    } else {
      *pointer += c;
    }
  }
}

std::string ChildPointer(const std::string& pointer, std::string_view key) {
  std::string out = pointer;
  AppendPointerSegment(&out, key);
  return out;
}

Status CheckSchemaLimits(const Json& document, const SchemaLimits& limits) {
  KIMI_RETURN_IF_ERROR(CheckSize(document, limits));
  SchemaGraph graph(document, limits);
  KIMI_RETURN_IF_ERROR(graph.Build());
  return graph.CheckChains();
}

}  // namespace kimi::structured
