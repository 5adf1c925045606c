// The nesting bound on every request body, checked by the dispatcher before any handler runs.
//
// Parsing JSON is iterative, but much of what handlers do with a parsed document recurses
// (validators, schema walks, dump()), one stack frame per level: a body of a few hundred
// kilobytes of '[' would overflow the stack of whichever handler walks it first. So no
// handler ever sees a body nested deeper than kMaxBodyNesting, whatever its route.
//
// Thread safety: pure functions.
#pragma once

#include <cstddef>
#include <string_view>

#include "kimi/status.h"

namespace kimi::http {

// Deeper than any request the API or the admin routes accept (chat fields allow 200 levels).
inline constexpr size_t kMaxBodyNesting = 256;

// InvalidArgument naming the limit when `body` is nested deeper than kMaxBodyNesting.
Status CheckBodyNesting(std::string_view body);

}  // namespace kimi::http
