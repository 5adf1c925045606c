#include "admin/identity_fields.h"

#include <httplib.h>

#include "http/admin_body.h"
#include "http/error_response.h"
#include "kimi/log.h"

namespace kimi::admin {

using nlohmann::json;

void DrainAuthEvents(auth::Authenticator& auth, const http::RequestContext& ctx) {
  Status s = auth.DrainEvents();
  if (!s.ok())
    log::Warn("auth events not yet in the audit log",
              {{"request_id", ctx.request_id}, {"error", s.ToString()}});
}

Result<auth::Role> RoleField(const json& body) {
  KIMI_ASSIGN_OR_RETURN(std::string name, http::Required(body, "role"));
  std::optional<auth::Role> role = auth::ParseRole(name);
  if (!role)
    return Status::InvalidArgument("unknown role '" + name + "' (admin, operator, auditor, user, scrape)");
  return *role;
}

// A body that carries credentials is small: anything larger is refused (413) before it is
// parsed, hashed or written anywhere. Room for two passwords of kMaxPasswordBytes, each byte
// escaped as \u00XX, and a user name.
constexpr size_t kMaxCredentialBodyBytes = 16 * 1024;

bool RefuseOversizeCredentials(const httplib::Request& req, httplib::Response& res) {
  if (req.body.size() <= kMaxCredentialBodyBytes) return false;
  http::WriteError(http::PayloadTooLarge(static_cast<int64_t>(kMaxCredentialBodyBytes)), res);
  return true;
}

Result<std::string> UsernameField(const json& body, http::RequestContext& ctx) {
  return http::CheckedUsername(body, &ctx.error_param);
}

}  // namespace kimi::admin
