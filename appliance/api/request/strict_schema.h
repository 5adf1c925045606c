// NormaliseStrictSchema: a tool's parameter schema in OpenAI's strict form, for constrained
// decoding of the tool's arguments.
//
// Strict form: every object schema that lists `properties` requires all of them and is closed
// (additionalProperties false), and annotation keywords a decoder does not use (default,
// examples, $comment, deprecated, readOnly, writeOnly, contentEncoding, contentMediaType,
// contentSchema) are removed.
//
// The normalisation only ever narrows: every instance of the result is an instance of the
// input, so arguments decoded under it validate against the schema the client sent. Where
// closing or requiring would instead exclude every instance or widen the schema, the node is
// left as it was:
//   - an object is not closed when it has allOf/anyOf/oneOf/$ref/if/dependentSchemas,
//     patternProperties or unevaluatedProperties, is itself a member of allOf, requires a name
//     it does not list, needs more properties than it lists, or has an additionalProperties
//     schema (a map);
//   - a property whose schema is false or contains a $ref stays optional (a required
//     recursive reference may have no finite instance);
//   - nothing under `not` or `if` is touched (narrowing there widens the whole).
// A schema already in strict form comes back unchanged, and the function is idempotent:
// NormaliseStrictSchema(NormaliseStrictSchema(s)) == NormaliseStrictSchema(s). Its work is
// linear in the schema's size, whatever the lengths of `required` and `properties` or the depth.
//
// Owns nothing. Thread safety: pure function. Precondition: nesting within chat::kMaxNesting
// (the request validator checks the body first).
#pragma once

#include <nlohmann/json.hpp>

namespace kimi::api::request {

nlohmann::ordered_json NormaliseStrictSchema(const nlohmann::ordered_json& schema);

}  // namespace kimi::api::request
