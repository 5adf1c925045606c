#include "http/readiness.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

namespace kimi::http {
namespace {

TEST(ReadinessTest, ReadyOnlyWhenEveryDeclaredComponentIs) {
  metrics::Registry registry;
  Readiness r(&registry);
  EXPECT_TRUE(r.AllReady());  // nothing declared
  r.Declare("database", "not open yet");
  r.Declare("model", "not loaded: no model configured");
  EXPECT_FALSE(r.AllReady());
  r.MarkReady("database", "open: /x/appliance.db");
  EXPECT_FALSE(r.AllReady());
  auto snap = r.Snapshot();
  ASSERT_EQ(snap.size(), 2u);
  EXPECT_EQ(snap[0].name, "database");
  EXPECT_TRUE(snap[0].ready);
  EXPECT_EQ(snap[1].name, "model");
  EXPECT_FALSE(snap[1].ready);
  EXPECT_EQ(snap[1].detail, "not loaded: no model configured");
  r.MarkReady("model", "loaded");
  EXPECT_TRUE(r.AllReady());
  r.MarkNotReady("database", "closed");
  EXPECT_FALSE(r.AllReady());
  std::string text = registry.RenderText();
  EXPECT_NE(text.find("kimi_component_ready{component=\"database\"} 0\n"), std::string::npos) << text;
  EXPECT_NE(text.find("kimi_component_ready{component=\"model\"} 1\n"), std::string::npos) << text;
}

// Anonymous /readyz says which components are ready, never where their files are or which
// key signed the model: those details are for callers holding readiness.detail.
TEST(ReadinessTest, TheBodyCarriesDetailsOnlyWhenAsked) {
  Readiness r;
  r.MarkReady("database", "open: /var/lib/kimi-appliance/appliance.db");
  r.MarkNotReady("model", "verification failed: signer sha256:ab12 is not trusted");
  const nlohmann::json brief = nlohmann::json::parse(r.Body(false));
  EXPECT_EQ(brief, nlohmann::json::parse(
                       R"({"status":"not_ready","components":{"database":{"ready":true},"model":{"ready":false}}})"));
  const std::string text = r.Body(false);
  EXPECT_EQ(text.find("/var/lib"), std::string::npos);
  EXPECT_EQ(text.find("sha256"), std::string::npos);
  const nlohmann::json full = nlohmann::json::parse(r.Body(true));
  EXPECT_EQ(full["components"]["database"]["detail"], "open: /var/lib/kimi-appliance/appliance.db");
  EXPECT_EQ(full["components"]["model"]["detail"], "verification failed: signer sha256:ab12 is not trusted");
  EXPECT_EQ(full["status"], "not_ready");
}

}  // namespace
}  // namespace kimi::http
