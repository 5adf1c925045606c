// What every /admin/v1 handler writes back the same way: a JSON body with its status, and the
// caller of an act as the auth module records it.
//
// Thread safety: pure functions.
#pragma once

#include <nlohmann/json.hpp>

#include "auth/authenticator.h"
#include "http/request_context.h"

namespace httplib {
struct Response;
}

namespace kimi::admin {

// `body` as the response with `status`; invalid UTF-8 in strings is replaced, not refused.
void ReplyJson(httplib::Response& res, int status, const nlohmann::json& body);

// The authenticated caller of an admin act. Precondition: ctx.principal is set (the
// dispatcher authenticated the request).
auth::Actor CallerOf(const http::RequestContext& ctx);

}  // namespace kimi::admin
