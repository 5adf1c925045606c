#include "admin/reply.h"

#include <httplib.h>

namespace kimi::admin {

void ReplyJson(httplib::Response& res, int status, const nlohmann::json& body) {
  res.status = status;
  res.set_content(body.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace), "application/json");
}

auth::Actor CallerOf(const http::RequestContext& ctx) {
  return auth::Actor::Of(*ctx.principal, ctx.remote_addr);
}

}  // namespace kimi::admin
