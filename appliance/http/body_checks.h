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
// Members: the API's parser keeps members in order (nlohmann's ordered_json) and finds each key
// by a linear search, N²/2 comparisons for an object of N members (300,000 keys: 94 s of CPU,
// most of it after the client had gone). At most kMaxObjectMembers in one object and
// kMaxBodyMembers in all bound a body's parse: 0.46 s for the worst one (256 objects of 1024
// members) on the development machine.
//
// A body that is not JSON passes them all; its handler refuses it.
// Thread safety: pure functions.
#pragma once

#include <cstddef>
#include <string_view>

#include "kimi/status.h"

namespace kimi::http {

// Deeper than any request the API or the admin routes accept (chat fields allow 200 levels).
inline constexpr size_t kMaxBodyNesting = 256;

// More than any request needs: logit_bias takes 300 entries, a schema's properties are rarely
// past a hundred, and a conversation of 60,000 messages has about 180,000 members.
inline constexpr size_t kMaxObjectMembers = 1024;
inline constexpr size_t kMaxBodyMembers = 262144;

// InvalidArgument naming the limit when `body` is nested deeper than kMaxBodyNesting, or
// naming the path of the first key an object of it repeats or the first member past a bound.
Status CheckRequestBody(std::string_view body);

}  // namespace kimi::http
