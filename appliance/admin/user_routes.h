// The admin API's user routes (docs/admin-api.yaml), over the authenticator. Every change is
// written with its auth event, moved into the audit log before the response.
//
//   GET    /admin/v1/users             ?search=&limit=&offset=: a page of users, without hashes, each
//                                       with its state (auth/lifecycle_state.h)
//   POST   /admin/v1/users             {username, role} -> a one-time password, once (a body over
//                                       16 KiB is refused with 413 before any hashing)
//   POST   /admin/v1/users/disable     {username}: ends its sessions and revokes its keys
//   POST   /admin/v1/users/enable      {username}: may log in again (its keys stay revoked)
//   POST   /admin/v1/users/unlock      {username}: clears its failure count and lock
//   POST   /admin/v1/users/reset-password  {username} -> a one-time password, once; must be changed
//                                       at the next sign-in; the user's sessions end
//
// Thread safety: each handler may run on many threads at once (the authenticator is thread-safe).
#pragma once

#include "auth/authenticator.h"
#include "http/routes.h"

namespace kimi::admin {

// The routes, bound to `auth`, which outlives the table.
void AddUserRoutes(http::RouteTable& table, auth::Authenticator* auth);

}  // namespace kimi::admin
