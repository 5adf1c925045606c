#include "metrics/metrics.h"

#include <thread>
#include <vector>

#include <gtest/gtest.h>

namespace kimi::metrics {
namespace {

TEST(MetricsTest, CounterAndGaugeRenderWithHelpTypeAndLabels) {
  Registry r;
  auto& requests = r.AddCounter("app_requests_total", "Requests.", {"route", "code"});
  requests.WithLabels({"healthz", "200"}).Increment();
  requests.WithLabels({"healthz", "200"}).Increment(2);
  requests.WithLabels({"metrics", "200"}).Increment();
  r.AddGauge("app_temperature", "Heat.").WithLabels(std::vector<std::string>{}).Set(-1.5);
  EXPECT_EQ(r.RenderText(),
            "# HELP app_requests_total Requests.\n"
            "# TYPE app_requests_total counter\n"
            "app_requests_total{route=\"healthz\",code=\"200\"} 3\n"
            "app_requests_total{route=\"metrics\",code=\"200\"} 1\n"
            "# HELP app_temperature Heat.\n"
            "# TYPE app_temperature gauge\n"
            "app_temperature -1.5\n");
}

TEST(MetricsTest, HistogramBucketsAreCumulativeWithInfSumAndCount) {
  Registry r;
  auto& h = r.AddHistogram("app_latency_seconds", "Latency.", {"route"}, {0.1, 1});
  h.WithLabels({"a"}).Observe(0.05);
  h.WithLabels({"a"}).Observe(0.1);  // on the bound: counts in le="0.1"
  h.WithLabels({"a"}).Observe(0.5);
  h.WithLabels({"a"}).Observe(7);
  EXPECT_EQ(r.RenderText(),
            "# HELP app_latency_seconds Latency.\n"
            "# TYPE app_latency_seconds histogram\n"
            "app_latency_seconds_bucket{route=\"a\",le=\"0.1\"} 2\n"
            "app_latency_seconds_bucket{route=\"a\",le=\"1\"} 3\n"
            "app_latency_seconds_bucket{route=\"a\",le=\"+Inf\"} 4\n"
            "app_latency_seconds_sum{route=\"a\"} 7.65\n"
            "app_latency_seconds_count{route=\"a\"} 4\n");
}

TEST(MetricsTest, AssignedHistogramRendersWhatItWasGiven) {
  Registry r;
  auto& h = r.AddHistogram("app_wait_seconds", "Wait.", {}, {0.1, 1});
  h.WithLabels({}).Observe(0.5);  // replaced by the assignment
  const uint64_t counts[] = {2, 0, 1};
  h.WithLabels({}).Assign(counts, 3.25);
  EXPECT_EQ(r.RenderText(),
            "# HELP app_wait_seconds Wait.\n"
            "# TYPE app_wait_seconds histogram\n"
            "app_wait_seconds_bucket{le=\"0.1\"} 2\n"
            "app_wait_seconds_bucket{le=\"1\"} 2\n"
            "app_wait_seconds_bucket{le=\"+Inf\"} 3\n"
            "app_wait_seconds_sum 3.25\n"
            "app_wait_seconds_count 3\n");
}

TEST(MetricsTest, EscapingAndValues) {
  EXPECT_EQ(EscapeLabelValue("a\"b\\c\nd"), "a\\\"b\\\\c\\nd");
  EXPECT_EQ(FormatValue(1.0 / 0.0), "+Inf");
  EXPECT_EQ(FormatValue(-1.0 / 0.0), "-Inf");
  EXPECT_EQ(FormatValue(0.0 / 0.0), "NaN");
  EXPECT_EQ(FormatValue(1e21), "1e+21");
  EXPECT_EQ(FormatValue(42), "42");
  Registry r;
  r.AddCounter("c_total", "Line one\nline \\ two").WithLabels(std::vector<std::string>{}).Increment();
  EXPECT_NE(r.RenderText().find("# HELP c_total Line one\\nline \\\\ two\n"), std::string::npos);
}

TEST(MetricsTest, NamesAreValidated) {
  EXPECT_TRUE(IsValidMetricName("kimi_http_requests_total"));
  EXPECT_TRUE(IsValidMetricName("a:b"));
  EXPECT_FALSE(IsValidMetricName("1abc"));
  EXPECT_FALSE(IsValidMetricName("a-b"));
  EXPECT_FALSE(IsValidMetricName(""));
  EXPECT_TRUE(IsValidLabelName("route"));
  EXPECT_FALSE(IsValidLabelName("__reserved"));
  EXPECT_FALSE(IsValidLabelName("a:b"));
}

TEST(MetricsTest, RegistrationIsGetOrCreate) {
  Registry r;
  auto& a = r.AddCounter("x_total", "X.", {"k"});
  auto& b = r.AddCounter("x_total", "X.", {"k"});
  EXPECT_EQ(&a, &b);
  EXPECT_DEATH(r.AddGauge("x_total", "X.", {"k"}), "registered twice");
  EXPECT_DEATH(r.AddCounter("bad-name", "X."), "invalid metric name");
}

TEST(MetricsTest, CountersAreExactUnderConcurrency) {
  Registry r;
  auto& c = r.AddCounter("n_total", "N.", {"t"});
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&c] {
      for (int i = 0; i < 10000; ++i) c.WithLabels({"same"}).Increment();
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(c.WithLabels({"same"}).Value(), 40000);
}

}  // namespace
}  // namespace kimi::metrics
