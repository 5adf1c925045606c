// Duplicate keys in JSON text, found without building the document.
//
// JSON allows an object to name a key twice and parsers disagree on which copy wins (nlohmann:
// the last; others: the first). A request body {"role":"user","role":"admin"} created an admin
// key while anything reading the first copy (a proxy, a log reader, an auditor's tool) saw a
// user: untrusted JSON (request bodies, configuration files) is refused when a key repeats.
//
// Keys are compared as the parser decodes them ("\u0072ole" is "role"). Linear in the text; the
// keys of the objects open at once are held in hash sets.
//
// Thread safety: pure function.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace kimi {

// The path of the first key that repeats within one object ("$.messages[].role": "." and the
// key for an object member, "[]" for an array element; each key cut to 64 bytes), or nothing
// when no key repeats. Text that is not JSON gives nothing up to where it stops being JSON; its
// parse refuses it.
std::optional<std::string> FirstDuplicateJsonKey(std::string_view text);

}  // namespace kimi
