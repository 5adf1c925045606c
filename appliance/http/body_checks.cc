#include "http/body_checks.h"

#include <string>

#include "kimi/json_depth.h"
#include "kimi/json_keys.h"

namespace kimi::http {

Status CheckRequestBody(std::string_view body) {
  if (JsonNestingDepth(body, kMaxBodyNesting) > kMaxBodyNesting) {
    return Status::InvalidArgument("request body: nested deeper than " + std::to_string(kMaxBodyNesting) + " levels");
  }
  if (const auto problem = CheckJsonKeys(body, {kMaxObjectMembers, kMaxBodyMembers})) {
    std::string what;
    switch (problem->kind) {
      case JsonKeyProblem::Kind::kRepeatedKey:
        what = "the key appears twice in one object";
        break;
      case JsonKeyProblem::Kind::kObjectTooLarge:
        what = "an object with more than " + std::to_string(kMaxObjectMembers) + " members";
        break;
      case JsonKeyProblem::Kind::kTooManyMembers:
        what = "more than " + std::to_string(kMaxBodyMembers) + " object members in all";
        break;
    }
    return Status::InvalidArgument("request body: " + problem->path + ": " + what);
  }
  return Status::OK();
}

}  // namespace kimi::http
