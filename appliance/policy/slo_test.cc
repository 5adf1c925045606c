// Service-level attainment without the server: the tier and class counters SloMetrics keeps
// for the console, and the timing SloMeasuringBackend takes from a backend's events under a
// scripted clock.
#include "policy/slo_backend.h"

#include <gtest/gtest.h>

#include "policy/policy_test_util.h"

namespace kimi::policy {
namespace {

using testing::LoadShipped;
using testing::ScratchStore;
using namespace std::chrono_literals;

Policy DefaultPolicy() {
  Result<Policy> p = ParsePolicy(LoadShipped("default.json"));
  EXPECT_TRUE(p.ok()) << p.status().ToString();
  return *p;
}

double Value(metrics::Registry& registry, const char* name, const char* label, const std::string& value) {
  return registry.AddCounter(name, "", {label}).WithLabels({value}).Value();
}

TEST(SloMetricsTest, TiersAndClassesAreJudgedAgainstTheirTargets) {
  metrics::Registry registry;
  SloMetrics slo(&registry);
  const Policy policy = DefaultPolicy();  // tiers 4096: 500 ms, 32768: 2 s, ...; chat 50 ms
  const std::vector<double> gaps{0.010, 0.060, 0.050, 0.040};
  slo.Record(policy, {"", 100, 0.4, gaps});       // le_4096, met; default class: chat
  slo.Record(policy, {"chat", 4096, 0.6, {}});    // le_4096, missed
  slo.Record(policy, {"agentic", 4097, 1.9, std::vector<double>{0.09, 0.2}});  // le_32768 met; agentic 100 ms
  slo.Record(policy, {"chat", 2'000'000, 0.1, {}});  // above every tier: no tier
  EXPECT_EQ(Value(registry, "kimi_slo_ttft_requests_total", "tier", "le_4096"), 2);
  EXPECT_EQ(Value(registry, "kimi_slo_ttft_met_total", "tier", "le_4096"), 1);
  EXPECT_EQ(Value(registry, "kimi_slo_ttft_requests_total", "tier", "le_32768"), 1);
  EXPECT_EQ(Value(registry, "kimi_slo_ttft_met_total", "tier", "le_32768"), 1);
  EXPECT_EQ(Value(registry, "kimi_slo_ttft_requests_total", "tier", "le_1048576"), 0);
  EXPECT_EQ(Value(registry, "kimi_slo_itl_gaps_total", "class", "chat"), 4);
  EXPECT_EQ(Value(registry, "kimi_slo_itl_met_total", "class", "chat"), 3);
  EXPECT_EQ(Value(registry, "kimi_slo_itl_gaps_total", "class", "agentic"), 2);
  EXPECT_EQ(Value(registry, "kimi_slo_itl_met_total", "class", "agentic"), 1);
  EXPECT_EQ(registry.AddGauge("kimi_slo_ttft_target_seconds", "", {"tier"}).WithLabels({"le_32768"}).Value(), 2.0);
  EXPECT_EQ(registry.AddGauge("kimi_slo_itl_target_seconds", "", {"class"}).WithLabels({"chat"}).Value(), 0.05);
  const std::string text = registry.RenderText();
  EXPECT_NE(text.find("kimi_slo_ttft_met_total{tier=\"le_131072\"} 0"), std::string::npos) << text;
}

// Emits: answer, answer, reasoning, finish; the clock advances 30 ms per reading.
class ScriptedBackend : public api::Backend {
 public:
  std::string_view name() const override { return "scripted"; }
  std::vector<std::string> Models() const override { return {"m"}; }
  bool Healthy(std::string_view) const override { return true; }
  Status Generate(const api::BackendRequest&, api::EventSink& sink, api::BackendOutcome*) override {
    if (fail) return Status::Unavailable("down");
    for (auto kind : {api::StreamEventKind::kAnswer, api::StreamEventKind::kAnswer, api::StreamEventKind::kReasoning}) {
      api::StreamEvent e;
      e.kind = kind;
      e.text = "x";
      if (!sink.Emit(e)) return Status::Cancelled("gone");
    }
    api::StreamEvent finish;
    finish.kind = api::StreamEventKind::kFinish;
    finish.usage.prompt_tokens = 5000;
    sink.Emit(finish);
    return Status::OK();
  }
  bool fail = false;
};

struct NullSink : api::EventSink {
  int events = 0;
  bool Emit(const api::StreamEvent&) override { return ++events > 0; }
};

// A measuring backend over `inner`, with a policy service, a registry and a clock that moves
// 30 ms per reading.
class SloMeasuringBackendTest : public ::testing::Test {
 protected:
  void StartPolicy(const nlohmann::json& policy) {
    ASSERT_TRUE(service.Start(policy, {"t", "system", "", ""}).ok());
  }
  SloMeasuringBackend Measuring(api::Backend* inner) {
    return SloMeasuringBackend(inner, &service, &slo, [this] { return now += 30ms; });
  }

  ScratchStore db;
  PolicyStore store{db.get()};
  PolicyService service{&store, nullptr, [](sqlite3*, audit::AuditRecord) { return Status::OK(); }};
  metrics::Registry registry;
  SloMetrics slo{&registry};
  std::chrono::steady_clock::time_point now{};
};

TEST_F(SloMeasuringBackendTest, TimesEveryServedRequestAndSkipsFailedOnes) {
  StartPolicy(LoadShipped("default.json"));
  ScriptedBackend inner;
  SloMeasuringBackend backend = Measuring(&inner);

  NullSink sink;
  api::BackendRequest request;
  request.workload_class = "chat";
  ASSERT_TRUE(backend.Generate(request, sink, nullptr).ok());
  EXPECT_EQ(sink.events, 4) << "every event passes through";
  // TTFT 30 ms (le_32768: 2 s, met); two gaps of 30 ms (chat: 50 ms, met).
  EXPECT_EQ(Value(registry, "kimi_slo_ttft_requests_total", "tier", "le_32768"), 1);
  EXPECT_EQ(Value(registry, "kimi_slo_ttft_met_total", "tier", "le_32768"), 1);
  EXPECT_EQ(Value(registry, "kimi_slo_itl_gaps_total", "class", "chat"), 2);
  EXPECT_EQ(Value(registry, "kimi_slo_itl_met_total", "class", "chat"), 2);

  // A policy whose chat target is 10 ms: the same request's gaps miss it, at once.
  nlohmann::json strict = LoadShipped("default.json");
  strict["service_levels"]["itl_targets"]["chat"] = 10;
  ASSERT_TRUE(service.Submit(strict, {"t", "admin", "", ""}).ok());
  ASSERT_TRUE(backend.Generate(request, sink, nullptr).ok());
  EXPECT_EQ(Value(registry, "kimi_slo_itl_gaps_total", "class", "chat"), 4);
  EXPECT_EQ(Value(registry, "kimi_slo_itl_met_total", "class", "chat"), 2);

  inner.fail = true;
  EXPECT_FALSE(backend.Generate(request, sink, nullptr).ok());
  EXPECT_EQ(Value(registry, "kimi_slo_ttft_requests_total", "tier", "le_32768"), 2) << "a failed request is not counted";
}

// A backend that counts tokens per event, as the embedded engine does.
class TokenCountingBackend : public api::Backend {
 public:
  std::string_view name() const override { return "counting"; }
  std::vector<std::string> Models() const override { return {"m"}; }
  bool Healthy(std::string_view) const override { return true; }
  Status Generate(const api::BackendRequest&, api::EventSink& sink, api::BackendOutcome*) override {
    const std::pair<api::StreamEventKind, int64_t> script[] = {
        {api::StreamEventKind::kAnswer, 2},             // first output: TTFT
        {api::StreamEventKind::kAnswer, 0},             // released by the same token: no gap
        {api::StreamEventKind::kAnswer, 3},             // three tokens since the last output
        {api::StreamEventKind::kToolCallBegin, 2},      // markup tokens: counted on the next output
        {api::StreamEventKind::kToolCallArguments, 1},  // ... here, three gaps
        {api::StreamEventKind::kFinish, 1},
    };
    for (const auto& [kind, tokens] : script) {
      api::StreamEvent e;
      e.kind = kind;
      e.text = "x";
      e.tokens = tokens;
      if (kind == api::StreamEventKind::kFinish) e.usage.prompt_tokens = 100;
      if (!sink.Emit(e)) return Status::Cancelled("gone");
    }
    return Status::OK();
  }
};

TEST_F(SloMeasuringBackendTest, GapsArePerTokenWhenTheBackendCountsTokens) {
  nlohmann::json policy = LoadShipped("default.json");
  policy["service_levels"]["itl_targets"]["chat"] = 15;
  StartPolicy(policy);
  TokenCountingBackend inner;
  SloMeasuringBackend backend = Measuring(&inner);

  NullSink sink;
  api::BackendRequest request;
  request.workload_class = "chat";
  ASSERT_TRUE(backend.Generate(request, sink, nullptr).ok());
  // Clock readings: start, then one per output event. The third output event comes 60 ms
  // after the first (three gaps of 20 ms); the tool arguments 30 ms after that, for the two
  // markup tokens and its own (three gaps of 10 ms). Per event it would be three gaps.
  EXPECT_EQ(Value(registry, "kimi_slo_itl_gaps_total", "class", "chat"), 6);
  EXPECT_EQ(Value(registry, "kimi_slo_itl_met_total", "class", "chat"), 3) << "only the 10 ms gaps meet 15 ms";
  EXPECT_EQ(Value(registry, "kimi_slo_ttft_met_total", "tier", "le_4096"), 1);
}

}  // namespace
}  // namespace kimi::policy
