// docs/admin-api.yaml (OpenAPI 3) and the route table agree: every /admin/ route is documented
// under its path and method, and every documented path and method is a route.
#include <cstdlib>
#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <utility>

#include <gtest/gtest.h>

#include "admin/admin_routes.h"

namespace kimi::admin {
namespace {

// (METHOD, path) pairs of the document's "paths:" block, read by indentation: a path is a
// two-space-indented key starting with '/', an operation a four-space-indented HTTP verb.
std::set<std::pair<std::string, std::string>> DocumentedOperations(std::istream& in) {
  std::set<std::pair<std::string, std::string>> out;
  bool in_paths = false;
  std::string path;
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("paths:", 0) == 0) {
      in_paths = true;
      continue;
    }
    if (!in_paths) continue;
    if (!line.empty() && line[0] != ' ') break;  // the next top-level key
    if (line.rfind("  /", 0) == 0 && line.back() == ':') {
      path = line.substr(2, line.size() - 3);
      continue;
    }
    for (const char* verb : {"get", "post", "put", "patch", "delete"}) {
      if (line == std::string("    ") + verb + ":") {
        std::string method = verb;
        for (char& c : method) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
        out.insert({method, path});
      }
    }
  }
  return out;
}

TEST(AdminApiDocTest, DocumentAndRoutesAgree) {
  const char* source = std::getenv("KIMI_SOURCE_DIR");
  if (source == nullptr) GTEST_SKIP() << "KIMI_SOURCE_DIR is not set";
  std::ifstream in(std::string(source) + "/docs/admin-api.yaml");
  ASSERT_TRUE(in) << "docs/admin-api.yaml is missing";
  std::set<std::pair<std::string, std::string>> documented = DocumentedOperations(in);
  ASSERT_FALSE(documented.empty());
  std::set<std::pair<std::string, std::string>> routed;
  http::RouteTable table;
  AddAdminRoutes(table, AdminServices{});
  for (const http::Route& r : table.routes()) {
    if (r.path.rfind("/admin/", 0) == 0) routed.insert({std::string(r.method), std::string(r.path)});
  }
  for (const auto& op : routed) EXPECT_TRUE(documented.count(op)) << op.first << " " << op.second << " is not documented";
  for (const auto& op : documented) EXPECT_TRUE(routed.count(op)) << op.first << " " << op.second << " is not a route";
}

}  // namespace
}  // namespace kimi::admin
