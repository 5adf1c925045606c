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

#include <nlohmann/json.hpp>

#include "api/backend.h"
#include "http/routes.h"

namespace kimi::policy {

Status HandleListPolicies(const http::Services&, http::RequestContext&, const httplib::Request&, httplib::Response&);
Status HandleSubmitPolicy(const http::Services&, http::RequestContext&, const httplib::Request&, httplib::Response&);
Status HandleGetPolicy(const http::Services&, http::RequestContext&, const httplib::Request&, httplib::Response&);

// The decision step for one API request (policy_decision.h), with the caller taken from the
// context: rewrites *body when the policy transforms it, records the version and decisions
// in ctx for the audit record, and returns the refusal when the policy denies. OK without
// a policy service (a daemon built without one) or before it started.
Status ApplyRequestPolicy(api::Endpoint endpoint, const http::Services& services, http::RequestContext& ctx,
                          nlohmann::ordered_json* body);

}  // namespace kimi::policy
