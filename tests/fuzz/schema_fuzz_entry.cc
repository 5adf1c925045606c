#include "schema_fuzz_entry.h"

#include <chrono>
#include <string_view>

#include "structured/grammar.h"
#include "structured/schema_compiler.h"

namespace kimi::fuzz {

bool FuzzSchemaOnce(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  const structured::Json schema = structured::Json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (schema.is_discarded()) return false;
  structured::GrammarBuilder builder;
  structured::JsonValueRules values(&builder);
  structured::CompileBudget budget;
  budget.deadline = std::chrono::steady_clock::now() + std::chrono::seconds(2);
  structured::SchemaCompiler compiler(&values, schema, budget);
  Result<int32_t> root = compiler.CompileRoot();
  Status status = root.ok() ? builder.Finish(*root, "the schema").status() : root.status();
  if (!status.ok() && status.code() != Status::Code::kInvalidArgument) __builtin_trap();
  return status.ok();
}

}  // namespace kimi::fuzz
