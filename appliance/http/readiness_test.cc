#include "http/readiness.h"

#include <gtest/gtest.h>

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

}  // namespace
}  // namespace kimi::http
