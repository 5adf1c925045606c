// The admin API's policy routes (docs/admin-api.yaml), over the policy service:
//
//   GET  /admin/v1/policies            the active version's document and every version (policy.read)
//   POST /admin/v1/policies            body: a policy document -> 201 {version}; an invalid
//                                      one -> 400 naming the JSON pointer of every error,
//                                      and the previous version stays active (admin only)
//   GET  /admin/v1/policies/{version}  one version with its document (policy.read)
//   POST /admin/v1/policies/{version}/activate
//                                      re-activates a stored version: its document becomes the
//                                      next version -> 201 {version, restores}; 404 no such
//                                      version, 400 already active (admin only)
//
// Thread safety: handlers may run on many threads at once (PolicyService is thread-safe).
#pragma once

#include "http/routes.h"
#include "policy/policy_service.h"

namespace kimi::admin {

// The routes, bound to `policies` (outlives the table; null: they answer 503).
void AddPolicyRoutes(http::RouteTable& table, policy::PolicyService* policies);

}  // namespace kimi::admin
