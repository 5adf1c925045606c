#include "http/routes.h"

#include "admin/model_routes.h"
#include "http/handlers.h"

namespace kimi::http {
namespace {

const Route kRoutes[] = {
    {"GET", "/healthz", "healthz", &HandleHealthz, /*probe=*/true},
    {"GET", "/readyz", "readyz", &HandleReadyz, /*probe=*/true},
    {"GET", "/metrics", "metrics", &HandleMetrics, /*probe=*/true},
    {"GET", "/admin/v1/models", "admin_models_list", &admin::HandleListModels},
    {"DELETE", "/admin/v1/models", "admin_models_remove", &admin::HandleRemoveModel},
    {"POST", "/admin/v1/models/import", "admin_models_import", &admin::HandleImportModel},
    {"GET", "/admin/v1/models/import", "admin_models_import_status", &admin::HandleImportStatus},
    {"POST", "/admin/v1/models/activate", "admin_models_activate", &admin::HandleActivateModel},
    {"POST", "/admin/v1/models/rollback", "admin_models_rollback", &admin::HandleRollbackModel},
};

}  // namespace

std::span<const Route> Routes() { return kRoutes; }

const Route* FindRoute(std::string_view method, std::string_view path) {
  if (method == "HEAD") method = "GET";
  for (const Route& r : kRoutes) {
    if (r.method == method && r.path == path) return &r;
  }
  return nullptr;
}

std::string AllowedMethods(std::string_view path) {
  std::string out;
  for (const Route& r : kRoutes) {
    if (r.path != path) continue;
    if (!out.empty()) out += ", ";
    out += r.method;
    if (r.method == "GET") out += ", HEAD";
  }
  return out;
}

}  // namespace kimi::http
