// The route table of the whole daemon: the serving routes and every admin group.
#include <gtest/gtest.h>

#include "admin/admin_routes.h"

#include <httplib.h>

#include "api/model_rules_table.h"
#include "auth/roles.h"
#include "http/console_handlers.h"
#include "http/handlers.h"
#include "http/openai_handlers.h"

namespace kimi::admin {
namespace {

// The routes the daemon serves besides the admin API, in its order, with no services.
void AddServingRoutesForTest(http::RouteTable& table) {
  http::AddProbeRoutes(table, http::ReadinessServices{}, http::MetricsServices{});
  http::AddConsoleRoutes(table, nullptr);
  http::AddOpenAiRoutes(table, http::GenerationServices{}, http::ModelListServices{});
}

// The whole table: a `user` key reads the inference API, its own session and the request rules
// of a model (what a refused request's 400 would tell it anyway), nothing else of the admin API (the model store's list and import jobs gave away digests, source paths and
// signers of models its key may not even see).
TEST(RouteTableTest, UserReachesOnlyTheApiAndItsOwnSession) {
  http::RouteTable table;
  AddServingRoutesForTest(table);
  AddAdminRoutes(table, AdminServices{});
  for (const http::Route& r : table.routes()) {
    if (r.permission == auth::Permission::kPublic || !auth::RoleAllows(auth::Role::kUser, r.permission))
      continue;
    const bool api = r.path.starts_with("/v1/");
    const bool own_session = r.path.starts_with("/admin/v1/session");
    const bool request_rules = r.path == "/admin/v1/request-rules";
    EXPECT_TRUE(api || own_session || request_rules) << r.method << " " << r.path << " is open to the user role";
  }
  EXPECT_FALSE(auth::RoleAllows(auth::Role::kUser, table.Find("GET", "/admin/v1/models")->permission));
  EXPECT_FALSE(auth::RoleAllows(auth::Role::kUser, table.Find("GET", "/admin/v1/models/import")->permission));
}

// Every admin group registers its routes under /admin/v1 with a permission, in the order the
// daemon serves them; none is left to the serving table.
TEST(AdminRoutesTest, EveryAdminRouteIsUnderAdminV1AndNamed) {
  http::RouteTable table;
  AddAdminRoutes(table, AdminServices{});
  ASSERT_FALSE(table.routes().empty());
  for (const http::Route& r : table.routes()) {
    EXPECT_TRUE(r.path.starts_with("/admin/v1/")) << r.path;
    EXPECT_TRUE(r.name.starts_with("admin_")) << r.name;
    EXPECT_TRUE(r.handler != nullptr) << r.name;
  }
  http::RouteTable serving;
  AddServingRoutesForTest(serving);
  for (const http::Route& r : serving.routes()) EXPECT_FALSE(r.path.starts_with("/admin/")) << r.path;
}

// The playground asks which sampling settings a model accepts: the configured entry, else K3's.
TEST(RequestRulesRouteTest, AnswersTheRulesOfTheNamedModel) {
  api::ModelRulesTable rules;
  ASSERT_TRUE(rules.Add("open-model", nlohmann::json{{"temperature", {0, 2}}, {"top_p", nullptr}}).ok());
  AdminServices services;
  services.request_rules = &rules;
  http::RouteTable table;
  AddAdminRoutes(table, services);
  const http::Route* route = table.Find("GET", "/admin/v1/request-rules");
  ASSERT_NE(route, nullptr);
  EXPECT_EQ(route->permission, auth::Permission::kInference);
  auto ask = [&](const std::string& model) {
    httplib::Request req;
    if (!model.empty()) req.params.emplace("model", model);
    httplib::Response res;
    http::RequestContext ctx;
    Status s = route->handler(ctx, req, res);
    return std::pair{s, s.ok() ? nlohmann::json::parse(res.body) : nlohmann::json()};
  };
  auto [open_ok, open] = ask("open-model");
  ASSERT_TRUE(open_ok.ok()) << open_ok.ToString();
  EXPECT_EQ(open["model"], "open-model");
  EXPECT_EQ(open["rules"]["temperature"], nlohmann::json::array({0.0, 2.0}));
  EXPECT_TRUE(open["rules"]["top_p"].is_null());
  auto [k3_ok, k3] = ask("kimi-k3");
  ASSERT_TRUE(k3_ok.ok());
  EXPECT_EQ(k3["rules"], api::ModelRequestRules::K3().ToJson());
  EXPECT_EQ(ask("").first.code(), Status::Code::kInvalidArgument);
}

}  // namespace
}  // namespace kimi::admin
