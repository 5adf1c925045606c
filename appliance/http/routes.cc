#include "http/routes.h"

#include "http/handlers.h"

namespace kimi::http {
namespace {

const Route kRoutes[] = {
    {"GET", "/healthz", "healthz", &HandleHealthz, /*probe=*/true},
    {"GET", "/readyz", "readyz", &HandleReadyz, /*probe=*/true},
    {"GET", "/metrics", "metrics", &HandleMetrics, /*probe=*/true},
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
