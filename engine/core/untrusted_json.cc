#include "kimi/untrusted_json.h"

namespace kimi {

Status CheckJsonNesting(std::string_view text, std::string_view what, size_t max_nesting) {
  if (JsonNestingDepth(text, max_nesting) > max_nesting) {
    return Status::Corruption(std::string(what) + ": JSON nests deeper than " + std::to_string(max_nesting) +
                              " levels");
  }
  return Status::OK();
}

}  // namespace kimi
