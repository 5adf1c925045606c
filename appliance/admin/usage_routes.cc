#include "admin/usage_routes.h"

#include <httplib.h>

#include <charconv>
#include <map>
#include <nlohmann/json.hpp>

#include "admin/identity_fields.h"
#include "admin/reply.h"
#include "auth/usage_meter.h"
#include "auth/usage_report.h"
#include "http/admin_body.h"
#include "kimi/utc_time.h"

namespace kimi::admin {
namespace {

using http::RequestContext;
using nlohmann::json;

constexpr int kDefaultDays = 30;
constexpr int kMaxDays = 90;  // the ranges the console offers: 7, 30, 90
constexpr int kDefaultTop = 10;
constexpr int kMaxTop = 100;

Status Available(const UsageServices& s) {
  if (s.auth == nullptr || s.store == nullptr || s.budgets == nullptr)
    return Status::Unavailable("usage reports need the auth store");
  return Status::OK();
}

// The integer query parameter `name` in 1..max; `fallback` when absent.
Result<int> BoundedParam(const httplib::Request& req, const char* name, int fallback, int max,
                         RequestContext& ctx) {
  if (!req.has_param(name)) return fallback;
  const std::string text = req.get_param_value(name);
  int v = 0;
  const auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (text.empty() || ec != std::errc() || ptr != text.data() + text.size() || v < 1 || v > max) {
    ctx.error_param = name;
    return Status::InvalidArgument(std::string("query parameter '") + name + "' must be 1.." +
                                   std::to_string(max));
  }
  return v;
}

Result<auth::UsageGrouping> GroupingParam(const httplib::Request& req, RequestContext& ctx) {
  const std::string by = req.has_param("by") ? req.get_param_value("by") : "key";
  if (by == "key") return auth::UsageGrouping::kKey;
  if (by == "owner") return auth::UsageGrouping::kOwner;
  ctx.error_param = "by";
  return Status::InvalidArgument("query parameter 'by' must be key or owner");
}

// The lines of the `days` UTC days ending today, and the first day's start.
struct Report {
  int days = 0;
  int64_t first_day_ms = 0;
  std::vector<auth::UsageLine> lines;
};

Result<Report> ReadReport(const UsageServices& s, const httplib::Request& req, RequestContext& ctx,
                          auth::UsageGrouping* by) {
  KIMI_RETURN_IF_ERROR(Available(s));
  KIMI_ASSIGN_OR_RETURN(*by, GroupingParam(req, ctx));
  Report report;
  KIMI_ASSIGN_OR_RETURN(report.days, BoundedParam(req, "days", kDefaultDays, kMaxDays, ctx));
  report.first_day_ms = auth::UtcDayStartMs(s.budgets->NowMs()) - (report.days - 1) * auth::kDayMs;
  KIMI_ASSIGN_OR_RETURN(std::vector<auth::KeyRecord> keys, s.auth->ListKeys());
  KIMI_ASSIGN_OR_RETURN(std::vector<auth::UsageRowDelta> rows,
                        s.store->UsageRows(auth::UsagePeriod::kDay, report.first_day_ms,
                                           report.first_day_ms + report.days * auth::kDayMs));
  report.lines = auth::DailyUsageLines(rows, keys, report.first_day_ms, report.days, *by);
  return report;
}

json RangeJson(const Report& r, auth::UsageGrouping by) {
  json dates = json::array();
  for (int i = 0; i < r.days; ++i)
    dates.push_back(FormatUtcMillis(r.first_day_ms + i * auth::kDayMs).substr(0, 10));
  return json{{"by", by == auth::UsageGrouping::kKey ? "key" : "owner"},
              {"days", r.days},
              {"from", FormatUtcMillis(r.first_day_ms)},
              {"until", FormatUtcMillis(r.first_day_ms + r.days * auth::kDayMs)},
              {"dates", dates}};
}

json BudgetStateJson(const auth::BudgetState& st) {
  const auth::Budget& b = st.budget;
  return json{{"scope", auth::BudgetScopeName(b.scope)},
              {"subject", b.subject},
              {"name", st.name},
              {"tokens_per_month", b.tokens_per_month},
              {"alert_percent", b.alert_percent},
              {"threshold_tokens", b.threshold_tokens()},
              {"used_tokens", st.used_tokens},
              {"alerting", st.alerting},
              {"exceeded", st.exceeded},
              {"updated_at", FormatUtcMillis(b.updated_ms)}};
}

// Checks the budgets (recording first crossings) and moves any alert's event into the audit log.
Result<std::vector<auth::BudgetState>> CheckBudgets(const UsageServices& s, RequestContext& ctx) {
  Result<std::vector<auth::BudgetState>> states = s.budgets->Check();
  DrainAuthEvents(*s.auth, ctx);
  return states;
}

Status HandleUsage(const UsageServices& s, RequestContext& ctx, const httplib::Request& req,
                   httplib::Response& res) {
  auth::UsageGrouping by;
  KIMI_ASSIGN_OR_RETURN(Report report, ReadReport(s, req, ctx, &by));
  json data = json::array();
  for (const auth::UsageLine& l : report.lines) {
    data.push_back(json{{"id", l.id},
                        {"name", l.name},
                        {"owner", l.owner},
                        {"requests", l.requests},
                        {"prompt_tokens", l.prompt_tokens},
                        {"completion_tokens", l.completion_tokens},
                        {"total_requests", l.total_requests},
                        {"total_tokens", l.total_tokens()}});
  }
  json out = RangeJson(report, by);
  out["object"] = "usage";
  out["data"] = data;
  ReplyJson(res, 200, out);
  return Status::OK();
}

Status HandleTop(const UsageServices& s, RequestContext& ctx, const httplib::Request& req,
                 httplib::Response& res) {
  auth::UsageGrouping by;
  KIMI_ASSIGN_OR_RETURN(Report report, ReadReport(s, req, ctx, &by));
  KIMI_ASSIGN_OR_RETURN(int limit, BoundedParam(req, "limit", kDefaultTop, kMaxTop, ctx));
  KIMI_ASSIGN_OR_RETURN(std::vector<auth::BudgetState> states, CheckBudgets(s, ctx));
  const auth::BudgetScope scope =
      by == auth::UsageGrouping::kKey ? auth::BudgetScope::kKey : auth::BudgetScope::kOwner;
  std::map<std::string, const auth::BudgetState*> budget_of;
  for (const auth::BudgetState& st : states) {
    if (st.budget.scope == scope) budget_of[st.budget.subject] = &st;
  }
  int64_t total_tokens = 0, total_requests = 0;
  for (const auth::UsageLine& l : report.lines) {
    total_tokens += l.total_tokens();
    total_requests += l.total_requests;
  }
  json data = json::array();
  for (size_t i = 0; i < report.lines.size() && i < static_cast<size_t>(limit); ++i) {
    const auth::UsageLine& l = report.lines[i];
    auto budget = budget_of.find(l.id);
    data.push_back(
        json{{"id", l.id},
             {"name", l.name},
             {"owner", l.owner},
             {"requests", l.total_requests},
             {"prompt_tokens", l.total_prompt_tokens},
             {"completion_tokens", l.total_completion_tokens},
             {"total_tokens", l.total_tokens()},
             {"share", total_tokens == 0 ? 0.0 : static_cast<double>(l.total_tokens()) / total_tokens},
             {"budget", budget == budget_of.end() ? json(nullptr) : BudgetStateJson(*budget->second)}});
  }
  json out = RangeJson(report, by);
  out["object"] = "list";
  out["total_tokens"] = total_tokens;
  out["total_requests"] = total_requests;
  out["data"] = data;
  ReplyJson(res, 200, out);
  return Status::OK();
}

Status HandleBudgets(const UsageServices& s, RequestContext& ctx, const httplib::Request&,
                     httplib::Response& res) {
  KIMI_RETURN_IF_ERROR(Available(s));
  KIMI_ASSIGN_OR_RETURN(std::vector<auth::BudgetState> states, CheckBudgets(s, ctx));
  KIMI_ASSIGN_OR_RETURN(std::vector<auth::BudgetAlert> alerts, s.budgets->RecentAlerts());
  json data = json::array();
  int alerting = 0;
  for (const auth::BudgetState& st : states) {
    data.push_back(BudgetStateJson(st));
    alerting += st.alerting ? 1 : 0;
  }
  json alert_list = json::array();
  for (const auth::BudgetAlert& a : alerts) {
    alert_list.push_back(json{{"scope", auth::BudgetScopeName(a.scope)},
                              {"subject", a.subject},
                              {"month", FormatUtcMillis(a.month_start_ms).substr(0, 7)},
                              {"time", FormatUtcMillis(a.time_ms)},
                              {"tokens", a.tokens},
                              {"threshold_tokens", a.threshold_tokens}});
  }
  ReplyJson(res, 200,
            json{{"object", "list"}, {"alerting", alerting}, {"data", data}, {"alerts", alert_list}});
  return Status::OK();
}

Result<auth::BudgetScope> ScopeParam(RequestContext& ctx) {
  std::optional<auth::BudgetScope> scope = auth::ParseBudgetScope(ctx.path_params["scope"]);
  if (!scope) return Status::NotFound("no budget scope '" + ctx.path_params["scope"] + "' (key, owner)");
  return *scope;
}

Status HandleBudgetPut(const UsageServices& s, RequestContext& ctx, const httplib::Request& req,
                       httplib::Response& res) {
  KIMI_RETURN_IF_ERROR(Available(s));
  KIMI_ASSIGN_OR_RETURN(auth::BudgetScope scope, ScopeParam(ctx));
  KIMI_ASSIGN_OR_RETURN(json body, http::ParseBody(req.body, {"tokens_per_month", "alert_percent"}, {},
                                                   {"tokens_per_month", "alert_percent"}, &ctx.error_param));
  auth::Budget budget{scope, ctx.path_params["subject"]};
  if (!body.contains("tokens_per_month")) {
    ctx.error_param = "tokens_per_month";
    return Status::InvalidArgument("field 'tokens_per_month' is required");
  }
  budget.tokens_per_month = body["tokens_per_month"].get<int64_t>();
  if (body.contains("alert_percent")) budget.alert_percent = body["alert_percent"].get<int64_t>();
  Result<auth::Budget> stored = s.budgets->Set(CallerOf(ctx), budget);
  DrainAuthEvents(*s.auth, ctx);
  if (!stored.ok()) {
    // BudgetWatch::Set's refusals start with the field they are about.
    const std::string& why = stored.status().message();
    if (stored.status().code() == Status::Code::kInvalidArgument) {
      ctx.error_param = why.rfind("alert_percent", 0) == 0 ? "alert_percent" : "tokens_per_month";
    }
    return stored.status();
  }
  // Its state now, and the alert when the new budget is already crossed.
  KIMI_ASSIGN_OR_RETURN(std::vector<auth::BudgetState> states, CheckBudgets(s, ctx));
  for (const auth::BudgetState& st : states) {
    if (st.budget.scope == scope && st.budget.subject == budget.subject) {
      ReplyJson(res, 200, BudgetStateJson(st));
      return Status::OK();
    }
  }
  // Removed by a DELETE that came in between: both changes were made and recorded, and the
  // answer says so rather than that this one failed.
  return Status::AlreadyExists("the budget was stored (its record is in the audit log) and then removed by another "
                               "request; there is no budget for " + budget.subject + " now");
}

Status HandleBudgetDelete(const UsageServices& s, RequestContext& ctx, const httplib::Request&,
                          httplib::Response& res) {
  KIMI_RETURN_IF_ERROR(Available(s));
  KIMI_ASSIGN_OR_RETURN(auth::BudgetScope scope, ScopeParam(ctx));
  const std::string& subject = ctx.path_params["subject"];
  Status removed = s.budgets->Remove(CallerOf(ctx), scope, subject);
  DrainAuthEvents(*s.auth, ctx);
  KIMI_RETURN_IF_ERROR(removed);
  ReplyJson(res, 200, json{{"scope", auth::BudgetScopeName(scope)}, {"subject", subject}, {"removed", true}});
  return Status::OK();
}

}  // namespace

void AddUsageRoutes(http::RouteTable& table, const UsageServices& services) {
  using P = auth::Permission;
  const auto bind = [services](auto handler) { return http::BindRoute(services, handler); };
  table.Add({"GET", "/admin/v1/usage", "admin_usage", bind(&HandleUsage), false, P::kUsageRead});
  table.Add({"GET", "/admin/v1/usage/top", "admin_usage_top", bind(&HandleTop), false, P::kUsageRead});
  table.Add({"GET", "/admin/v1/budgets", "admin_budgets_list", bind(&HandleBudgets), false, P::kUsageRead});
  table.Add({"PUT", "/admin/v1/budgets/{scope}/{subject}", "admin_budgets_set", bind(&HandleBudgetPut), false,
             P::kKeysManage});
  table.Add({"DELETE", "/admin/v1/budgets/{scope}/{subject}", "admin_budgets_remove",
             bind(&HandleBudgetDelete), false, P::kKeysManage});
}

}  // namespace kimi::admin
