// The shipped default policy (policies/default.json, compiled into the binary), which the
// daemon installs as version 1 when its database holds no policy yet.
// Public header of policy/: other folders include it.
// Thread safety: pure function.
#pragma once

#include <nlohmann/json.hpp>

namespace kimi::policy {

nlohmann::json DefaultPolicyDocument();

}  // namespace kimi::policy
