// The keys of JSON text's objects, checked without building the document.
//
// Repeated keys: JSON allows an object to name a key twice and parsers disagree on which copy
// wins (nlohmann: the last; others: the first). A request body {"role":"user","role":"admin"}
// created an admin key while anything reading the first copy (a proxy, a log reader, an
// auditor's tool) saw a user: untrusted JSON (request bodies, configuration files) is refused
// when a key repeats. Keys are compared as the parser decodes them ("\u0072ole" is "role").
//
// Members: nlohmann's ordered_json (which keeps members in their order, as the API's schemas
// and tools need) finds a key by a linear search, so building one object of N members costs
// N²/2 comparisons: a 5 MB body of 300,000 keys took 94 s of CPU. Bounds on the members of one
// object and of all objects keep that below a fraction of a second before anything parses it.
//
// Linear in the text; the keys of the objects open at once are held in hash sets.
// Thread safety: pure functions.
#pragma once

#include <cstddef>
#include <limits>
#include <optional>
#include <string>
#include <string_view>

namespace kimi {

struct JsonMemberLimits {
  size_t per_object = std::numeric_limits<size_t>::max();
  size_t in_all = std::numeric_limits<size_t>::max();
};

struct JsonKeyProblem {
  enum class Kind { kRepeatedKey, kObjectTooLarge, kTooManyMembers };
  Kind kind;
  // Where: "$.messages[].role" ("." and the key for an object member, "[]" for an array
  // element; each key cut to 64 bytes): the repeated key, the first member past per_object,
  // or the member past in_all.
  std::string path;
};

// The first problem in `text`, or nothing. Text that is not JSON is checked up to where it
// stops being JSON; its parse refuses it.
std::optional<JsonKeyProblem> CheckJsonKeys(std::string_view text, const JsonMemberLimits& limits = {});

}  // namespace kimi
