// JSON Schema (a Draft 2020-12 subset, docs/structured-output.md) to grammar rules whose text
// is exactly the compact JSON (no whitespace) of values that validate against the schema.
//
// Supported keywords: type (one or a list), enum, const, properties, required,
// additionalProperties (bool or schema), items (bool or schema), prefixItems, minItems,
// maxItems, anyOf, oneOf (branches of distinct types), allOf (merged), $ref (local "#..."
// pointers, recursion included), $defs/definitions, minLength, maxLength, pattern (regex.h),
// format (date-time, date, time, email, uuid), minimum, maximum, exclusiveMinimum,
// exclusiveMaximum, nullable; annotations (description, default, title, examples, $id,
// $schema, $comment, $anchor, deprecated, readOnly, writeOnly) are ignored. Any other keyword
// is refused with InvalidArgument naming it and its JSON pointer.
//
// The grammar produces a subset of the valid values where the full set is not context-free
// or not worth it: properties in the schema's order, each at most once, extra property names
// in printable ASCII without escapes, one spelling per character, numbers of at most 18
// integer digits. Every text it produces validates.
//
// Bounds: CompileRoot() first checks the document against SchemaLimits (schema_limits.h: size,
// depth, enum values, pattern length, reference cycles and chains), then compiles within a
// CompileBudget (grammar states and edges, steps, a deadline), so that no schema can overflow
// the stack, loop, or hold a thread past the deadline. Exceeding one is InvalidArgument naming
// it. The state and edge bounds are the builder's own (GrammarBuilder::Limit), so every state
// made anywhere counts; loops that make many (a pattern's automaton placed in a string) also
// check them and the deadline as they go, and a repeated character class is placed once, as a
// rule its edges call, when its bytes take more than a few states.
//
// Subschemas are compiled where they lie in the document (no copies, except allOf/$ref merges),
// and their JSON pointers are chains on the stack (SchemaPath), spelled out only for messages
// and, shortened, for rule names: a document of long keys nested deep costs its size, not its
// depth times its keys.
//
// Owns: nothing after compilation. Thread safety: a SchemaCompiler is used by one thread.
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "kimi/status.h"
#include "structured/char_class.h"
#include "structured/grammar.h"
#include "structured/schema_limits.h"

namespace kimi::structured {

using Json = nlohmann::ordered_json;

// Where a subschema lies in its document: a chain of segments, each held by the caller's
// frame (a child must not outlive its parent, and the keys it views live in the document or a
// merged schema that outlives the compilation below it).
class SchemaPath {
 public:
  SchemaPath() = default;  // the root, ""
  // A pointer spelled out already (a $ref's "#..." without the '#').
  static SchemaPath Escaped(std::string_view pointer) {
    SchemaPath p;
    p.escaped_ = pointer;
    return p;
  }
  SchemaPath Child(std::string_view key) const {
    SchemaPath p;
    p.parent_ = this;
    p.key_ = key;
    return p;
  }
  SchemaPath Item(size_t index) const {
    SchemaPath p;
    p.parent_ = this;
    p.index_ = index;
    p.is_index_ = true;
    return p;
  }
  // The JSON pointer ("~" and "/" escaped; "" for the root).
  std::string Pointer() const;
  // For messages: the pointer, "/" for the root.
  std::string Display() const;
  // For rule names: the pointer when it is at most max_bytes, else its end after "...".
  std::string Short(size_t max_bytes) const;

 private:
  void Segments(std::vector<const SchemaPath*>* out) const;
  const SchemaPath* parent_ = nullptr;
  std::string_view key_;
  size_t index_ = 0;
  bool is_index_ = false;
  std::string_view escaped_;
};

// Rules for JSON values that need no schema: any value, any object. Built once per builder.
class JsonValueRules {
 public:
  explicit JsonValueRules(GrammarBuilder* builder) : builder_(builder) {}
  int32_t AnyValue();
  int32_t AnyObject();
  int32_t AnyArray();
  int32_t FreeString();  // any JSON string
  int32_t String(int64_t min_length, int64_t max_length);  // characters, counted
  int32_t Literal(const std::string& text);               // one fixed text
  int32_t Number();                                        // any JSON number
  // One character of `chars` (raw UTF-8, or as written in a JSON string) as a rule of its
  // own, made once per class: edges that place a large class call it instead of copying it.
  int32_t CharRule(const CharClass& chars, bool json_string, const CharBytes& bytes);
  GrammarBuilder* builder() { return builder_; }

 private:
  void BuildAnyValue();
  GrammarBuilder* builder_;
  int32_t any_value_ = -1, any_object_ = -1, any_array_ = -1, number_ = -1;
  std::map<std::pair<int64_t, int64_t>, int32_t> strings_;
  std::map<std::string, int32_t> literals_;
  std::map<std::pair<CharClass, bool>, int32_t> char_rules_;
};

// The work one compilation may do. max_states and max_edges count every state and edge of the
// builder (CompileRoot limits the builder to them), so compilers sharing a builder (the tools
// of one request) share those bounds; give them one deadline too.
struct CompileBudget {
  size_t max_states = 200000;
  size_t max_edges = 1000000;
  int64_t max_steps = 100000;  // subschemas compiled, merged and references resolved
  std::chrono::steady_clock::time_point deadline = std::chrono::steady_clock::time_point::max();
};

// Compiles one schema document (the root that "#" pointers resolve in) into rules of a builder.
class SchemaCompiler {
 public:
  SchemaCompiler(JsonValueRules* values, const Json& document, CompileBudget budget = CompileBudget(),
                 SchemaLimits limits = SchemaLimits())
      : values_(values), document_(document), budget_(budget), limits_(limits) {}
  // The rule of the document's root. Errors: InvalidArgument naming the keyword and pointer.
  Result<int32_t> CompileRoot();

 private:
  Result<int32_t> Compile(const Json& schema, const SchemaPath& pointer);
  // `ref` must outlive the call (a string of the document or of a merged schema).
  Result<int32_t> CompileRef(const std::string& ref, const SchemaPath& pointer);
  Result<int32_t> CompileObject(const Json& schema, const SchemaPath& pointer);
  Result<int32_t> CompileArray(const Json& schema, const SchemaPath& pointer);
  Result<int32_t> CompileString(const Json& schema, const SchemaPath& pointer);
  Result<int32_t> CompileNumber(const Json& schema, const SchemaPath& pointer, bool integer);
  Result<int32_t> CompileLiterals(const Json& schema, const SchemaPath& pointer);
  // The schema a local reference points to, inside the document.
  Result<const Json*> Resolve(const std::string& ref, const SchemaPath& pointer);
  Result<Json> Merge(const Json& a, const Json& b, const SchemaPath& pointer);
  // Counts one step of work against the budget. Errors: InvalidArgument naming the bound.
  Status Spend(const SchemaPath& pointer);
  // Refuses adding `states` more grammar states past the budget (or a builder past its limits).
  Status Reserve(size_t states, const SchemaPath& pointer);

  JsonValueRules* values_;
  GrammarBuilder* builder() { return values_->builder(); }
  const Json& document_;
  std::map<std::string, int32_t> ref_rules_;  // "#/..." -> rule, so recursion terminates
  CompileBudget budget_;
  SchemaLimits limits_;
  int64_t steps_ = 0;
  int depth_ = 0;
  size_t merge_depth_ = 0;
};

}  // namespace kimi::structured
