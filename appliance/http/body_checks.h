// The checks on every request body, made by the dispatcher before any handler runs.
//
// Nesting: parsing JSON is iterative, but much of what handlers do with a parsed document
// recurses (validators, schema walks, dump()), one stack frame per level: a body of a few
// hundred kilobytes of '[' would overflow the stack of whichever handler walks it first. So no
// handler ever sees a body nested deeper than kMaxBodyNesting, whatever its route.
//
// Repeated keys: a body naming a key twice in one object ({"role":"user","role":"admin"}) is
// read by the handlers' parser as its last copy and by other readers (a proxy, the stored
// request, an auditor's tool) perhaps as the first; no handler sees one (kimi/json_keys.h).
//
// A body that is not JSON passes both; its handler refuses it.
// Thread safety: pure functions.
#pragma once

#include <cstddef>
#include <string_view>

#include "kimi/status.h"

namespace kimi::http {

// Deeper than any request the API or the admin routes accept (chat fields allow 200 levels).
inline constexpr size_t kMaxBodyNesting = 256;

// InvalidArgument naming the limit when `body` is nested deeper than kMaxBodyNesting, or
// naming the path of the first key an object of it repeats.
Status CheckRequestBody(std::string_view body);

}  // namespace kimi::http
