// The console session routes of the admin API (docs/admin-api.yaml), over the authenticator:
//
//   POST   /admin/v1/session           {username, password} -> session cookie + CSRF token (public:
//                                       it is how a person authenticates)
//   GET    /admin/v1/session           who am I (any principal, key or session)
//   DELETE /admin/v1/session           logout: the session id stops working at once
//   POST   /admin/v1/session/password  {old_password, new_password}
//
// Bodies with credentials are refused over 16 KiB (413), user names and passwords over their
// bounds (400 naming the field), before any hashing. Every change is written with its auth
// event, moved into the audit log before the response.
//
// Thread safety: each handler may run on many threads at once (the authenticator is thread-safe).
#pragma once

#include "auth/authenticator.h"
#include "http/routes.h"

namespace kimi::admin {

// The four routes, bound to `auth` (outlives the table; null: a login answers 503).
void AddSessionRoutes(http::RouteTable& table, auth::Authenticator* auth);

}  // namespace kimi::admin
