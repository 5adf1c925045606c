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

// The operator's question after an incident: what failed, when, and what is the state now.
// The last failure stays after the component recovered; loading and shutting down are not
// failures.
TEST(ReadinessTest, KeepsTheLastFailureWithItsTimeAfterRecovery) {
  int64_t now = 1'000;
  Readiness r(nullptr, [&now] { return now; });
  r.Declare("model", "not loaded yet");
  now = 2'000;
  r.MarkPending("model", "verifying /models/demo");
  ComponentState model = r.Snapshot()[0];
  EXPECT_FALSE(model.last_failure);
  EXPECT_EQ(model.since_unix_ms, 1'000);  // not ready since it was declared
  now = 3'000;
  r.MarkReady("model", "serving 1234");
  now = 4'000;
  r.MarkNotReady("model", "taken out of service: model-00001.safetensors changed");
  model = r.Snapshot()[0];
  EXPECT_FALSE(model.ready);
  EXPECT_EQ(model.since_unix_ms, 4'000);
  ASSERT_TRUE(model.last_failure);
  EXPECT_EQ(model.last_failure->reason, "taken out of service: model-00001.safetensors changed");
  EXPECT_EQ(model.last_failure->at_unix_ms, 4'000);
  now = 5'000;
  r.MarkPending("model", "loading version 2");
  now = 6'000;
  r.MarkReady("model", "serving 5678");
  model = r.Snapshot()[0];
  EXPECT_TRUE(model.ready);
  EXPECT_EQ(model.since_unix_ms, 6'000);
  ASSERT_TRUE(model.last_failure);
  EXPECT_EQ(model.last_failure->at_unix_ms, 4'000);

  // A failure that leaves the component serving is kept without changing its state.
  now = 7'000;
  r.MarkReady("tls", "serving CN=a");
  now = 8'000;
  r.RecordFailure("tls", "reload failed: key does not match the certificate");
  EXPECT_TRUE(r.AllReady());
  const nlohmann::json full = nlohmann::json::parse(r.Body(true));
  const nlohmann::json& tls = full["components"]["tls"];
  EXPECT_EQ(tls["ready"], true);
  EXPECT_EQ(tls["detail"], "serving CN=a");
  EXPECT_EQ(tls["since"], "1970-01-01T00:00:07.000Z");
  EXPECT_EQ(tls["last_failure"]["reason"], "reload failed: key does not match the certificate");
  EXPECT_EQ(tls["last_failure"]["at"], "1970-01-01T00:00:08.000Z");
  EXPECT_EQ(full["components"]["model"]["last_failure"]["at"], "1970-01-01T00:00:04.000Z");
  // None of it without readiness.detail.
  const nlohmann::json brief = nlohmann::json::parse(r.Body(false));
  EXPECT_EQ(brief["components"]["tls"], nlohmann::json::parse(R"({"ready":true})"));
}

}  // namespace
}  // namespace kimi::http
