#include "http/body_nesting.h"

#include <string>

#include "kimi/json_depth.h"

namespace kimi::http {

Status CheckBodyNesting(std::string_view body) {
  if (JsonNestingDepth(body, kMaxBodyNesting) <= kMaxBodyNesting) return Status::OK();
  return Status::InvalidArgument("request body: nested deeper than " + std::to_string(kMaxBodyNesting) + " levels");
}

}  // namespace kimi::http
