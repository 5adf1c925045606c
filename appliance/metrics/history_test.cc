#include "metrics/history.h"

#include <gtest/gtest.h>

#include <cmath>

#include "metrics/history_sampler.h"
#include "metrics/metrics.h"

namespace kimi::metrics {
namespace {

constexpr int64_t kStart = 1'700'000'000'000;

// A reading with `requests` requests (`errors` of them 5xx) and `tokens` tokens since start,
// and `fast` + `slow` time-to-first-token observations in the 0.1 s and 1 s buckets.
HistoryReading Reading(double requests, double errors, double tokens, double fast = 0, double slow = 0) {
  HistoryReading r;
  r.requests = requests;
  r.errors = errors;
  r.tokens = tokens;
  r.ttft = Buckets{{0.1, 1.0}, {fast, fast + slow, fast + slow}};
  r.queued = 2;
  r.memory_used = 100;
  r.memory_budget = 1000;
  r.models["m"] = ModelReading{requests, errors, {}};
  return r;
}

TEST(MetricsHistoryTest, TheFirstReadingIsOnlyTheBaseline) {
  MetricsHistory history;
  history.Record(kStart, Reading(5, 0, 50));
  EXPECT_TRUE(history.Points(kStart, 3'600'000).empty());
}

TEST(MetricsHistoryTest, APointHoldsWhatChangedInItsInterval) {
  MetricsHistory history;
  history.Record(kStart, Reading(5, 0, 50, 1, 0));
  history.Record(kStart + 10'000, Reading(25, 2, 250, 9, 1));
  std::vector<HistoryPoint> points = history.Points(kStart + 10'000, 900'000);
  ASSERT_EQ(points.size(), 1u);
  const HistoryPoint& p = points[0];
  EXPECT_EQ(p.end_ms, kStart + 10'000);
  EXPECT_DOUBLE_EQ(p.seconds, 10);
  EXPECT_DOUBLE_EQ(p.requests, 20);
  EXPECT_DOUBLE_EQ(p.errors, 2);
  EXPECT_DOUBLE_EQ(p.tokens, 200);
  // 8 observations at <= 0.1 s and 1 in (0.1, 1]: the median is inside the first bucket, the
  // p99 inside the second.
  EXPECT_NEAR(p.ttft.p50, 0.1 * (4.5 / 8), 1e-9);
  EXPECT_GT(p.ttft.p99, 0.1);
  EXPECT_LE(p.ttft.p99, 1.0);
  EXPECT_TRUE(std::isnan(p.itl.p50)) << "no inter-token observation: no value";
  EXPECT_DOUBLE_EQ(p.queued, 2);
  ASSERT_EQ(p.models.size(), 1u);
  EXPECT_EQ(p.models[0].model, "m");
  EXPECT_DOUBLE_EQ(p.models[0].requests, 20);
}

TEST(MetricsHistoryTest, ACounterThatWentDownCountsFromZero) {
  MetricsHistory history;
  history.Record(kStart, Reading(100, 0, 1000, 50, 0));
  history.Record(kStart + 10'000, Reading(3, 0, 30, 2, 0));  // the engine restarted
  std::vector<HistoryPoint> points = history.Points(kStart + 10'000, 900'000);
  ASSERT_EQ(points.size(), 1u);
  EXPECT_DOUBLE_EQ(points[0].requests, 3);
  EXPECT_DOUBLE_EQ(points[0].tokens, 30);
  EXPECT_NEAR(points[0].ttft.p50, 0.05, 1e-9);
}

TEST(MetricsHistoryTest, TheRingsAreBoundedAndRangesPickTheirResolution) {
  HistoryOptions options;
  options.interval_ms = 10'000;
  options.fine_points = 6;     // one minute of 10 s
  options.coarse_every = 3;    // 30 s
  options.coarse_points = 4;   // two minutes
  MetricsHistory history(options);
  int64_t now = kStart;
  for (int i = 0; i <= 30; ++i, now += 10'000) history.Record(now, Reading(10.0 * i, 0, 0));
  const int64_t last = now - 10'000;
  EXPECT_EQ(history.ResolutionMs(60'000), 10'000);
  EXPECT_EQ(history.ResolutionMs(120'000), 30'000);
  std::vector<HistoryPoint> fine = history.Points(last, 60'000);
  ASSERT_EQ(fine.size(), 6u);
  EXPECT_EQ(fine.back().end_ms, last);
  EXPECT_DOUBLE_EQ(fine.back().requests, 10);
  std::vector<HistoryPoint> coarse = history.Points(last, 10 * 60'000);
  ASSERT_EQ(coarse.size(), 4u) << "the coarse ring keeps its last 4 points";
  EXPECT_DOUBLE_EQ(coarse.back().requests, 30);
  EXPECT_DOUBLE_EQ(coarse.back().seconds, 30);
  EXPECT_EQ(coarse.back().end_ms, last);
  // A shorter range reads fewer points of the same ring.
  EXPECT_EQ(history.Points(last, 20'000).size(), 2u);
}

TEST(MetricsHistoryTest, QuantilesInterpolateInsideTheirBucket) {
  const Buckets b{{1, 2, 4}, {0, 10, 10, 10}};
  EXPECT_DOUBLE_EQ(QuantileOf(0.5, b), 1.5);
  EXPECT_TRUE(std::isnan(QuantileOf(0.5, Buckets{{1}, {0, 0}})));
  // Everything past the last bound: its lower bound is all that is known.
  EXPECT_DOUBLE_EQ(QuantileOf(0.5, Buckets{{1, 2}, {0, 0, 4}}), 2);
}

TEST(HistorySamplerTest, ReadsTheRegistryFamiliesAtAnInjectedTime) {
  Registry registry;
  auto& requests = registry.AddCounter(kModelRequestsFamily, "test", {"model", "code"});
  auto& duration = registry.AddHistogram(kModelDurationFamily, "test", {"model"}, {0.5, 1});
  registry.AddGauge("kimi_engine_tokens", "test", {"kind"}).WithLabels({"generated"}).Set(40);
  MetricsHistory history;
  int64_t now = kStart;
  int refreshed = 0;
  HistorySampler sampler(&history, &registry, [&] { ++refreshed; }, [&] { return now; });
  sampler.SampleOnce();
  requests.WithLabels({"kimi-k3", "200"}).Increment(8);
  requests.WithLabels({"kimi-k3", "503"}).Increment(2);
  requests.WithLabels({"other", "200"}).Increment(1);
  for (int i = 0; i < 10; ++i) duration.WithLabels({"kimi-k3"}).Observe(0.25);
  registry.AddGauge("kimi_engine_tokens", "test", {"kind"}).WithLabels({"generated"}).Set(140);
  now += 10'000;
  sampler.SampleOnce();
  EXPECT_EQ(refreshed, 2);
  std::vector<HistoryPoint> points = history.Points(now, 900'000);
  ASSERT_EQ(points.size(), 1u);
  EXPECT_DOUBLE_EQ(points[0].requests, 11);
  EXPECT_DOUBLE_EQ(points[0].errors, 2);
  EXPECT_DOUBLE_EQ(points[0].tokens, 100);
  EXPECT_NEAR(points[0].e2e.p50, 0.25, 1e-9);
  ASSERT_EQ(points[0].models.size(), 2u);
  EXPECT_EQ(points[0].models[0].model, "kimi-k3");
  EXPECT_DOUBLE_EQ(points[0].models[0].errors, 2);
  EXPECT_EQ(points[0].models[1].model, "other");
}

TEST(HistorySamplerTest, StopEndsTheThreadWithoutWaitingForTheInterval) {
  Registry registry;
  HistoryOptions options;
  options.interval_ms = 3'600'000;  // an hour: Stop() must not wait for it
  MetricsHistory history(options);
  HistorySampler sampler(&history, &registry, nullptr, [] { return kStart; });
  sampler.Start();
  sampler.Stop();
  sampler.Stop();  // a second stop is harmless
}

}  // namespace
}  // namespace kimi::metrics
