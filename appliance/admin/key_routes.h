// The admin API's API-key and role routes (docs/admin-api.yaml), over the authenticator. JSON
// in, JSON out; unknown request fields are refused with 400. Every change is written with its
// auth event, moved into the audit log before the response (auth/audit_outbox.h).
//
//   GET    /admin/v1/keys              ?search=&limit=&offset=: a page of keys, without secrets or
//                                       hashes, each with its state; admins and auditors
//   POST   /admin/v1/keys              {name, role, owner?, models?, expires_at?, limits...} -> the key,
//   once;
//                                       models must be served now, checked as for PATCH
//   POST   /admin/v1/keys/revoke       {id}
//   PATCH  /admin/v1/keys/{id}         {role?, models?, limits...} -> the key; absent fields unchanged;
//                                       models must be served now ([] = every model); one audit
//                                       record "auth.key_updated" with the difference
//   POST   /admin/v1/keys/{id}/rotate  {grace_seconds} -> the key with its new secret, once; the
//                                       old secret works for grace_seconds more (0..604800)
//   GET    /admin/v1/keys/{id}/usage   limits, tokens and requests this UTC day and month, streams now
//   POST   /admin/v1/keys/{id}/limits  retired in favour of PATCH /admin/v1/keys/{id}: 410 naming it
//   GET    /admin/v1/roles             every role: its permissions and its limits
//   POST   /admin/v1/roles/{role}/limits  the role's limits (fields as for a key's); absent fields unchanged
//
// Thread safety: each handler may run on many threads at once (the authenticator and the
// backend are thread-safe).
#pragma once

#include "api/backend.h"
#include "auth/authenticator.h"
#include "http/routes.h"

namespace kimi::admin {

// The routes, bound to `auth` and to `backend` (the models a key may be allowed; null: none is
// served), which outlive the table.
void AddKeyRoutes(http::RouteTable& table, auth::Authenticator* auth, const api::Backend* backend);

}  // namespace kimi::admin
