#include "policy/default_policy.h"

#include "generated/policy/default_policy.h"

namespace kimi::policy {

nlohmann::json DefaultPolicyDocument() { return nlohmann::json::parse(kShippedDefaultPolicy); }

}  // namespace kimi::policy
