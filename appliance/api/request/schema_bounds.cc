#include "api/request/schema_bounds.h"

#include "kimi/structured_output.h"

namespace kimi::api::request {

Status CheckSchemaBounds(const Json& schema, std::string_view field) {
  const Status bounded = StructuredOutput::CheckSchemaLimits(schema.dump(-1, ' ', false, Json::error_handler_t::replace));
  if (bounded.ok()) return bounded;
  return FieldError(field, "exceeds the schema limits: " + bounded.message());
}

}  // namespace kimi::api::request
