// How deeply JSON text nests, read from the text itself, before any parser sees it.
//
// nlohmann parses iteratively, but copying, dumping and most walks of a parsed document recurse
// once per level: untrusted text (a model's headers, a request body) is measured first, and
// refused when it nests deeper than its reader allows.
//
// Thread safety: pure function.
#pragma once

#include <cstddef>
#include <string_view>

namespace kimi {

// The deepest nesting of arrays and objects in `text` (brackets inside strings do not count),
// stopping once it passes `limit`. Text that is not JSON gives some depth; its parse refuses it.
size_t JsonNestingDepth(std::string_view text, size_t limit);

}  // namespace kimi
