// The route table of the whole daemon: the serving routes and every admin group.
#include <gtest/gtest.h>

#include "admin/admin_routes.h"
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

// The whole table: a `user` key reads the inference API and its own session, nothing else of
// the admin API (the model store's list and import jobs gave away digests, source paths and
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
    EXPECT_TRUE(api || own_session) << r.method << " " << r.path << " is open to the user role";
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

}  // namespace
}  // namespace kimi::admin
