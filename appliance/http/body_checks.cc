#include "http/body_checks.h"

#include <string>

#include "kimi/json_depth.h"
#include "kimi/json_keys.h"

namespace kimi::http {

Status CheckRequestBody(std::string_view body) {
  if (JsonNestingDepth(body, kMaxBodyNesting) > kMaxBodyNesting) {
    return Status::InvalidArgument("request body: nested deeper than " + std::to_string(kMaxBodyNesting) + " levels");
  }
  if (const auto repeated = FirstDuplicateJsonKey(body)) {
    return Status::InvalidArgument("request body: " + *repeated + ": the key appears twice in one object");
  }
  return Status::OK();
}

}  // namespace kimi::http
