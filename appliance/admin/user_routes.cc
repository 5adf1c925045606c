#include "admin/user_routes.h"

#include <httplib.h>

#include <nlohmann/json.hpp>

#include "admin/identity_fields.h"
#include "admin/reply.h"
#include "auth/lifecycle_state.h"
#include "http/admin_body.h"
#include "kimi/utc_time.h"

namespace kimi::admin {
namespace {

using http::RequestContext;
using nlohmann::json;

// The user routes whose body is {"username"}: `act` on that user, then `state` (the fields
// the act set) beside its name.
Status ActOnUser(auth::Authenticator* auth, RequestContext& ctx, const httplib::Request& req,
                 httplib::Response& res,
                 Status (auth::Authenticator::*act)(const auth::Actor&, const std::string&), json state) {
  KIMI_ASSIGN_OR_RETURN(json body, http::ParseBody(req.body, {"username"}, {}, {}, &ctx.error_param));
  KIMI_ASSIGN_OR_RETURN(std::string username, UsernameField(body, ctx));
  Status s = (auth->*act)(CallerOf(ctx), username);
  DrainAuthEvents(*auth, ctx);
  KIMI_RETURN_IF_ERROR(s);
  state["username"] = username;
  ReplyJson(res, 200, state);
  return Status::OK();
}

Status HandleUsersList(auth::Authenticator* auth, RequestContext& ctx, const httplib::Request& req,
                       httplib::Response& res) {
  KIMI_ASSIGN_OR_RETURN(auth::ListQuery query, ListQueryParams(req, ctx));
  KIMI_ASSIGN_OR_RETURN(auth::ListPage<auth::UserRecord> page, auth->ListUsers(query));
  const int64_t now = UnixMillisNow();
  json data = json::array();
  for (const auth::UserRecord& u : page.items) {
    data.push_back(
        json{{"username", u.username},
             {"role", u.role},
             {"state", auth::UserStateName(auth::UserStateOf(u, now))},
             {"disabled", u.disabled},
             {"must_change_password", u.must_change_password},
             {"locked_until", u.locked_until_ms ? json(FormatUtcMillis(u.locked_until_ms)) : json(nullptr)},
             {"last_login_at", u.last_login_ms ? json(FormatUtcMillis(u.last_login_ms)) : json(nullptr)}});
  }
  ReplyJson(res, 200, ListPageJson(std::move(data), page.total, query));
  return Status::OK();
}

Status HandleUsersAdd(auth::Authenticator* auth, RequestContext& ctx, const httplib::Request& req,
                      httplib::Response& res) {
  if (RefuseUnfitCredentials(req, res)) return Status::OK();
  KIMI_ASSIGN_OR_RETURN(json body, http::ParseBody(req.body, {"username", "role"}, {}, {}, &ctx.error_param));
  KIMI_ASSIGN_OR_RETURN(std::string username, UsernameField(body, ctx));
  ctx.error_param = "role";
  KIMI_ASSIGN_OR_RETURN(auth::Role role, RoleField(body));
  ctx.error_param.reset();
  Result<std::string> one_time = auth->AddUser(CallerOf(ctx), username, role);
  DrainAuthEvents(*auth, ctx);
  if (!one_time.ok()) return one_time.status();
  ReplyJson(res, 201,
            json{{"username", username},
                 {"role", auth::RoleName(role)},
                 {"one_time_password", *one_time},
                 {"must_change_password", true}});
  return Status::OK();
}

Status HandleUsersDisable(auth::Authenticator* auth, RequestContext& ctx, const httplib::Request& req,
                          httplib::Response& res) {
  return ActOnUser(auth, ctx, req, res, &auth::Authenticator::DisableUser, json{{"disabled", true}});
}

Status HandleUsersEnable(auth::Authenticator* auth, RequestContext& ctx, const httplib::Request& req,
                         httplib::Response& res) {
  return ActOnUser(auth, ctx, req, res, &auth::Authenticator::EnableUser, json{{"disabled", false}});
}

Status HandleUsersUnlock(auth::Authenticator* auth, RequestContext& ctx, const httplib::Request& req,
                         httplib::Response& res) {
  return ActOnUser(auth, ctx, req, res, &auth::Authenticator::UnlockUser, json{{"locked_until", nullptr}});
}

Status HandleUsersResetPassword(auth::Authenticator* auth, RequestContext& ctx, const httplib::Request& req,
                                httplib::Response& res) {
  KIMI_ASSIGN_OR_RETURN(json body, http::ParseBody(req.body, {"username"}, {}, {}, &ctx.error_param));
  KIMI_ASSIGN_OR_RETURN(std::string username, UsernameField(body, ctx));
  Result<std::string> one_time = auth->ResetPassword(CallerOf(ctx), username);
  DrainAuthEvents(*auth, ctx);
  if (!one_time.ok()) return one_time.status();
  ReplyJson(res, 200,
            json{{"username", username}, {"one_time_password", *one_time}, {"must_change_password", true}});
  return Status::OK();
}

}  // namespace

void AddUserRoutes(http::RouteTable& table, auth::Authenticator* auth) {
  using P = auth::Permission;
  const auto bind = [auth](auto handler) { return http::BindRoute(auth, handler); };
  table.Add({"GET", "/admin/v1/users", "admin_users_list", bind(&HandleUsersList), false, P::kUsersManage});
  table.Add({"POST", "/admin/v1/users", "admin_users_add", bind(&HandleUsersAdd), false, P::kUsersManage});
  table.Add({"POST", "/admin/v1/users/disable", "admin_users_disable", bind(&HandleUsersDisable), false,
             P::kUsersManage});
  table.Add({"POST", "/admin/v1/users/enable", "admin_users_enable", bind(&HandleUsersEnable), false,
             P::kUsersManage});
  table.Add({"POST", "/admin/v1/users/unlock", "admin_users_unlock", bind(&HandleUsersUnlock), false,
             P::kUsersManage});
  table.Add({"POST", "/admin/v1/users/reset-password", "admin_users_reset_password",
             bind(&HandleUsersResetPassword), false, P::kUsersManage});
}

}  // namespace kimi::admin
