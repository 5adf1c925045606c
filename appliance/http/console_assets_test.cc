// ConsoleAssets: what is served (known file types below the root, with their content type)
// and what is refused as not found (traversal, hidden files, symbolic links out of the root,
// unknown types, directories), and the console routes in the route table.
#include "http/console_assets.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "http/console_handlers.h"
#include "http/routes.h"

namespace kimi::http {
namespace {

namespace fs = std::filesystem;

class ConsoleAssetsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    base_ = fs::temp_directory_path() / ("kimi-console-test-" + std::to_string(::getpid()));
    fs::remove_all(base_);
    fs::create_directories(base_ / "ui" / "js");
    Write(base_ / "ui" / "index.html", "<!doctype html>");
    Write(base_ / "ui" / "js" / "app.js", "export {};");
    Write(base_ / "ui" / "style.css", "body{}");
    Write(base_ / "ui" / ".hidden.js", "secret");
    Write(base_ / "ui" / "notes.md", "# notes");
    Write(base_ / "outside.js", "outside");
    fs::create_directory_symlink(base_, base_ / "ui" / "up");
    fs::create_symlink(base_ / "outside.js", base_ / "ui" / "link.js");
  }
  void TearDown() override { fs::remove_all(base_); }

  static void Write(const fs::path& path, const std::string& text) { std::ofstream(path) << text; }

  ConsoleAssets Assets() const { return ConsoleAssets((base_ / "ui").string()); }
  fs::path base_;
};

TEST_F(ConsoleAssetsTest, ServesKnownFilesWithTheirContentType) {
  ConsoleAssets assets = Assets();
  EXPECT_TRUE(assets.Installed());
  Result<ConsoleAsset> index = assets.Read("");
  ASSERT_TRUE(index.ok()) << index.status().ToString();
  EXPECT_EQ(index->body, "<!doctype html>");
  EXPECT_EQ(index->content_type, "text/html; charset=utf-8");
  Result<ConsoleAsset> script = assets.Read("js/app.js");
  ASSERT_TRUE(script.ok()) << script.status().ToString();
  EXPECT_EQ(script->body, "export {};");
  EXPECT_EQ(script->content_type, "text/javascript; charset=utf-8");
  EXPECT_EQ(assets.Read("style.css")->content_type, "text/css; charset=utf-8");
}

TEST_F(ConsoleAssetsTest, RefusesEverythingElseAsNotFound) {
  ConsoleAssets assets = Assets();
  for (const char* path : {"../outside.js", "js/../../outside.js", "./index.html", "js//app.js", "/index.html",
                           "js/", ".hidden.js", "notes.md", "missing.js", "js", "up/outside.js", "link.js",
                           "js\\app.js", "index.html\n"}) {
    Result<ConsoleAsset> got = assets.Read(path);
    ASSERT_FALSE(got.ok()) << path;
    EXPECT_EQ(got.status().code(), Status::Code::kNotFound) << path;
  }
}

TEST_F(ConsoleAssetsTest, AMissingOrEmptyRootServesNothing) {
  EXPECT_FALSE(ConsoleAssets("").Installed());
  EXPECT_EQ(ConsoleAssets("").Read("index.html").status().code(), Status::Code::kNotFound);
  ConsoleAssets missing((base_ / "absent").string());
  EXPECT_FALSE(missing.Installed());
  EXPECT_EQ(missing.Read("index.html").status().code(), Status::Code::kNotFound);
}

TEST(ConsoleAssetPathTest, PathChecks) {
  EXPECT_TRUE(IsSafeAssetPath("index.html"));
  EXPECT_TRUE(IsSafeAssetPath("js/screens/keys.js"));
  EXPECT_FALSE(IsSafeAssetPath(""));
  EXPECT_FALSE(IsSafeAssetPath(".."));
  EXPECT_FALSE(IsSafeAssetPath("a/../b"));
  EXPECT_FALSE(IsSafeAssetPath(std::string("a\0b", 3)));
  EXPECT_FALSE(IsSafeAssetPath("c:/x"));
  EXPECT_EQ(ConsoleContentType("a.svg"), "image/svg+xml");
  EXPECT_EQ(ConsoleContentType("a.exe"), "");
  EXPECT_EQ(ConsoleContentType("Makefile"), "");
}

TEST(ConsoleRoutesTest, TheConsoleIsPublicAndTheRootRedirects) {
  RouteTable table;
  AddConsoleRoutes(table, nullptr);
  const Route* root = table.Find("GET", "/");
  ASSERT_NE(root, nullptr);
  EXPECT_EQ(root->name, "console_root");
  const Route* index = table.Find("GET", "/console/");
  ASSERT_NE(index, nullptr);
  EXPECT_EQ(index->name, "console_index");
  const Route* asset = table.Find("GET", "/console/js/app.js");
  ASSERT_NE(asset, nullptr);
  EXPECT_EQ(asset->name, "console_asset");
  EXPECT_TRUE(table.IsPublicPath("/console/js/app.js"));
  EXPECT_EQ(table.Find("POST", "/console/js/app.js"), nullptr);
}

}  // namespace
}  // namespace kimi::http
