// Bounds on a JSON Schema document a caller sends, checked before anything recurses into it or
// follows its references, so that no schema can overflow a stack, loop or run for minutes:
//   - size: at most max_nodes JSON values, nested at most max_depth deep (checked without
//     recursion, so a 30,000-level document is refused, not followed);
//   - enum/const: at most max_enum_values listed values in all;
//   - pattern: at most max_pattern_bytes bytes each;
//   - references: every local "#..." $ref that resolves is followed; the schemas reached one
//     from another without consuming input ($ref, allOf, anyOf, oneOf, not, if/then/else,
//     dependentSchemas) may not form a cycle ({"$defs":{"a":{"$ref":"#/$defs/a"}}},
//     {"allOf":[{"$ref":"#"}]}) and no such chain may be longer than max_ref_chain. A cycle
//     through properties, items or another keyword that consumes input (a tree of nodes) is
//     fine: every turn of it writes text.
// The check knows which keywords hold subschemas, not which ones a backend supports: it is the
// same for the embedded engine (SchemaCompiler runs it first) and for the API's request rules,
// whatever backend a request goes to.
//
// Owns nothing. Thread safety: pure function.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "kimi/status.h"
#include "structured/regex.h"

namespace kimi::structured {

struct SchemaLimits {
  size_t max_nodes = 50000;
  size_t max_depth = 128;
  size_t max_enum_values = 4096;
  size_t max_pattern_bytes = kMaxRegexPatternBytes;
  size_t max_ref_chain = 64;
};

// The JSON pointer of `key` under `pointer` ("~" and "/" escaped), as messages spell them.
std::string ChildPointer(const std::string& pointer, std::string_view key);
// Appends "/" and `key`, escaped, to *pointer.
void AppendPointerSegment(std::string* pointer, std::string_view key);

// Errors: InvalidArgument naming the bound and the JSON pointer where it was passed.
Status CheckSchemaLimits(const nlohmann::ordered_json& document, const SchemaLimits& limits = SchemaLimits());

}  // namespace kimi::structured
