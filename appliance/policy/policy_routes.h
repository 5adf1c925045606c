// The request path's call of the policy decision step (policy_decision.h) for one API request.
// The admin API's policy routes are admin/policy_routes.h.
//
// Thread safety: may run on many threads at once (PolicyService is thread-safe).
#pragma once

#include <memory>

#include <nlohmann/json.hpp>

#include "api/backend.h"
#include "http/request_context.h"

namespace httplib {
struct Request;
}

namespace kimi::policy {

class PolicyService;

// What the backend request carries of an allowing decision.
struct RequestPolicy {
  std::string workload_class;  // "" without an active policy
  int priority = 0;
  // The engine's ids of the prompt when the step counted it (BackendRequest::encoded_prompt).
  std::shared_ptr<const EncodedRequestPrompt> encoded_prompt;
};

// The decision step for one API request (policy_decision.h), with the caller taken from the
// context, the workload class header from `req` and the prompt-token counter of the model
// from the policy service: rewrites *body when the policy transforms it, records the version
// and decisions in ctx for the audit record, and returns the refusal when the policy denies.
// Allows with no class without a policy service (null: a daemon built without one) or before
// it started. `backend` (may be null) names the model of a body without one.
Result<RequestPolicy> ApplyRequestPolicy(api::Endpoint endpoint, const PolicyService* policies,
                                         const api::Backend* backend, http::RequestContext& ctx,
                                         const httplib::Request& req, nlohmann::ordered_json* body);

}  // namespace kimi::policy
