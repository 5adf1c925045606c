#include "admin/identity_fields.h"

#include <httplib.h>

#include <optional>
#include <string>

#include "http/admin_body.h"
#include "http/error_response.h"
#include "kimi/ascii_text.h"
#include "kimi/log.h"

namespace kimi::admin {

using nlohmann::json;

void DrainAuthEvents(auth::Authenticator& auth, http::RequestContext& ctx) {
  ctx.change_in_outbox = true;
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

bool RefuseUnfitCredentials(const httplib::Request& req, httplib::Response& res) {
  const std::string type = req.get_header_value("Content-Type");
  const std::string_view media = TrimSpacesAndTabs(std::string_view(type).substr(0, type.find(';')));
  if (!EqualsIgnoringAsciiCase(media, "application/json")) {
    http::WriteError(http::UnsupportedMediaType("application/json", type.substr(0, 64)), res);
    return true;
  }
  if (req.body.size() <= kMaxCredentialBodyBytes) return false;
  http::WriteError(http::PayloadTooLarge(static_cast<int64_t>(kMaxCredentialBodyBytes)), res);
  return true;
}

Result<std::string> UsernameField(const json& body, http::RequestContext& ctx) {
  return http::CheckedUsername(body, &ctx.error_param);
}

namespace {

// A whole, non-negative decimal number of at most 9 digits (every bound here is far smaller).
std::optional<int64_t> SmallCount(const std::string& text) {
  if (text.empty() || text.size() > 9) return std::nullopt;
  int64_t v = 0;
  for (char c : text) {
    if (c < '0' || c > '9') return std::nullopt;
    v = v * 10 + (c - '0');
  }
  return v;
}

}  // namespace

Result<auth::ListQuery> ListQueryParams(const httplib::Request& req, http::RequestContext& ctx) {
  auth::ListQuery q;
  q.limit = auth::kDefaultListPage;
  if (req.has_param("search")) {
    q.search = req.get_param_value("search");
    if (q.search.size() > auth::kMaxSearchBytes) {
      ctx.error_param = "search";
      return Status::InvalidArgument("query parameter 'search' is longer than " +
                                     std::to_string(auth::kMaxSearchBytes) + " bytes");
    }
  }
  if (req.has_param("limit")) {
    std::optional<int64_t> limit = SmallCount(req.get_param_value("limit"));
    if (!limit || *limit < 1 || *limit > auth::kMaxListPage) {
      ctx.error_param = "limit";
      return Status::InvalidArgument("query parameter 'limit' must be 1.." + std::to_string(auth::kMaxListPage));
    }
    q.limit = *limit;
  }
  if (req.has_param("offset")) {
    std::optional<int64_t> offset = SmallCount(req.get_param_value("offset"));
    if (!offset) {
      ctx.error_param = "offset";
      return Status::InvalidArgument("query parameter 'offset' must be a non-negative integer below 10^9");
    }
    q.offset = *offset;
  }
  return q;
}

json ListPageJson(json data, int64_t total, const auth::ListQuery& query) {
  const bool more = query.offset + static_cast<int64_t>(data.size()) < total;
  return json{{"object", "list"}, {"data", std::move(data)}, {"total", total},
              {"limit", query.limit}, {"offset", query.offset}, {"has_more", more}};
}

}  // namespace kimi::admin
