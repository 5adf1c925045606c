// The request path's call of the policy decision step (policy_decision.h) for one API request,
// apart from the transport: the HTTP handler hands in who asks and how to read a request
// header, and copies the outcome into its audit record. The admin API's policy routes are
// admin/policy_routes.h.
// Public header of policy/: other folders include it.
// Thread safety: may run on many threads at once (PolicyService is thread-safe).
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "api/request_gate.h"
#include "audit/record.h"
#include "auth/principal.h"
#include "kimi/chat_service.h"
#include "kimi/status.h"

namespace kimi::policy {

class PolicyService;

// Who asks, and the request's headers as the step reads them (the workload class header).
struct RequestCaller {
  const auth::Principal* principal = nullptr;  // null: the step does not run
  // The value of the named header, or nullopt when the request has none.
  std::function<std::optional<std::string>(const std::string& name)> header;
};

// What of the request's content the active policy stores in its audit record: the parts of
// the request body and the completion it keeps, redacted as it says; nullopt: nothing.
using StoredContentFn =
    std::function<std::optional<audit::AuditContent>(std::string_view request_body, std::string_view completion)>;

// The step's outcome.
struct AppliedPolicy {
  Status refusal;  // OK: the policy allows the request
  // An allowing decision, as the backend request carries it.
  std::string workload_class;  // "" without an active policy
  int priority = 0;
  // The prompt as the step rendered (and maybe tokenised) it (BackendRequest::encoded_prompt).
  std::shared_ptr<const EncodedRequestPrompt> prompt;
  // For the request's audit record, refusals included: "policy:vN" and every decision (empty
  // without an active policy), and the content the policy stores (null: none).
  std::vector<std::string> audit_entries;
  StoredContentFn stored_content;
};

// The decision step for one API request, with the prompt-token counter of the model from the
// policy service: rewrites the typed *request when the policy transforms it. Allows with no
// class without a policy service (a daemon built without one), before it started, or without
// a principal.
AppliedPolicy ApplyRequestPolicy(const PolicyService* policies, const RequestCaller& caller, api::ApiRequest* request);

}  // namespace kimi::policy
