// What the identity routes (session_routes.h, key_routes.h, user_routes.h) read and do alike:
// the role and user-name fields of a body, the size bound of bodies with credentials, the
// search and page of a list, and moving the auth events of an act into the audit log before
// the response.
//
// Thread safety: pure functions, but DrainAuthEvents (the authenticator is thread-safe).
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "auth/authenticator.h"
#include "http/request_context.h"
#include "kimi/status.h"

namespace httplib {
struct Request;
struct Response;
}  // namespace httplib

namespace kimi::admin {

// The auth events of the change just made go into the audit log before the response does; a
// failure is logged (the outbox keeps them for its next pass). Marks the request as one whose
// change is recorded through the outbox (RequestContext::change_in_outbox).
void DrainAuthEvents(auth::Authenticator& auth, http::RequestContext& ctx);

// The required "role" field, one of auth/roles.h's names.
Result<auth::Role> RoleField(const nlohmann::json& body);

// A body that carries credentials is JSON, declared as such, and small: another is answered
// 415 or 413 (true) before it is parsed, hashed or written anywhere. A browser sends a
// cross-site form or a text/plain fetch without asking first, never application/json: the
// sign-in, which no CSRF token guards, cannot be made from another site's page (login CSRF).
bool RefuseUnfitCredentials(const httplib::Request& req, httplib::Response& res);

// The list query of GET /admin/v1/keys and /admin/v1/users: search (at most
// auth::kMaxSearchBytes), limit (1..auth::kMaxListPage, default auth::kDefaultListPage) and
// offset (>= 0, default 0). InvalidArgument naming the parameter (ctx.error_param) otherwise.
Result<auth::ListQuery> ListQueryParams(const httplib::Request& req, http::RequestContext& ctx);

// The page's envelope: {"object": "list", "data", "total", "limit", "offset", "has_more"}.
nlohmann::json ListPageJson(nlohmann::json data, int64_t total, const auth::ListQuery& query);

// The required user name of a body, checked (auth::CheckUsername) with the field named.
Result<std::string> UsernameField(const nlohmann::json& body, http::RequestContext& ctx);

}  // namespace kimi::admin
