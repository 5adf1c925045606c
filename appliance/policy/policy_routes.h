// The policy's HTTP side: the admin routes and the request path's call of the decision step.
//
//   GET  /admin/v1/policies            the active version's document and every version
//   POST /admin/v1/policies            body: a policy document -> 201 {version}; an invalid
//                                      one -> 400 naming the JSON pointer of every error,
//                                      and the previous version stays active
//   GET  /admin/v1/policies/{version}  one version with its document
// The route table (http/routes.cc) says who may call them: policy.read for the GETs,
// admin.only for the POST. docs/admin-api.yaml documents the shapes.
//
// Thread safety: handlers may run on many threads at once (PolicyService is thread-safe).
#pragma once

#include <memory>

#include <nlohmann/json.hpp>

#include "api/backend.h"
#include "api/request_gate.h"
#include "http/routes.h"

namespace kimi::policy {

Status HandleListPolicies(const http::Services&, http::RequestContext&, const httplib::Request&, httplib::Response&);
Status HandleSubmitPolicy(const http::Services&, http::RequestContext&, const httplib::Request&, httplib::Response&);
Status HandleGetPolicy(const http::Services&, http::RequestContext&, const httplib::Request&, httplib::Response&);

// What the backend request carries of an allowing decision.
struct RequestPolicy {
  std::string workload_class;  // "" without an active policy
  int priority = 0;
  // The prompt as the step rendered (and maybe tokenised) it (BackendRequest::encoded_prompt).
  std::shared_ptr<const EncodedRequestPrompt> prompt;
};

// The decision step for one API request (policy_decision.h), with the caller taken from the
// context, the workload class header from `req` and the prompt-token counter of the model
// from the policy service: rewrites the typed *request when the policy transforms it, records
// the version and decisions in ctx for the audit record, and returns the refusal when the
// policy denies. Allows with no class without a policy service (a daemon built without one)
// or before it started.
Result<RequestPolicy> ApplyRequestPolicy(const http::Services& services, http::RequestContext& ctx,
                                         const httplib::Request& req, api::ApiRequest* request);

}  // namespace kimi::policy
