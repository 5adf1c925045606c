// The one entry point shared by the schema compiler's libFuzzer target and its corpus-replay
// test: compiles a byte string as a caller's JSON Schema (response_format or a tool's
// parameters) the way a request does, within the request's compile budget and limits.
//
// Thread safety: reentrant.
#pragma once

#include <cstddef>
#include <cstdint>

namespace kimi::fuzz {

// Returns true when the bytes are a schema that compiles to a grammar. Traps when the
// compiler answers with anything but a value or InvalidArgument.
bool FuzzSchemaOnce(const uint8_t* data, size_t size);

}  // namespace kimi::fuzz
