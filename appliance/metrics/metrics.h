// A small metrics registry: counters, gauges and histograms with labels, rendered in the
// Prometheus text exposition format (version 0.0.4) for GET /metrics.
//
// The registry owns every family; families own their labelled series. Registration is
// get-or-create by name, so modules may look their families up at start-up; registering a
// name twice with another type, label set or buckets, or an invalid name, is a programming
// error and aborts with a message (start-up code and tests find it at once). References
// returned by Add*() and WithLabels() stay valid for the registry's lifetime: keep them
// rather than looking series up on hot paths.
// Public header of metrics/: other folders include it.
// Thread safety: everything may be called from any thread. Updates are lock-free atomics;
// WithLabels() takes the family's mutex; RenderText() takes each family's mutex in turn, so
// a scrape sees each series consistently, not the whole registry at one instant.
#pragma once

#include <atomic>
#include <cstdint>
#include <initializer_list>
#include <map>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace kimi::metrics {

class Counter {
 public:
  // Precondition: by >= 0 (counters only go up).
  void Increment(double by = 1.0);
  // Raises the counter to `total`, a count kept elsewhere and copied when scraped; a smaller
  // total (or NaN) leaves it as it is.
  void RaiseTo(double total);
  double Value() const { return value_.load(std::memory_order_relaxed); }

 private:
  std::atomic<double> value_{0.0};
};

class Gauge {
 public:
  void Set(double v) { value_.store(v, std::memory_order_relaxed); }
  void Add(double by);
  double Value() const { return value_.load(std::memory_order_relaxed); }

 private:
  std::atomic<double> value_{0.0};
};

class Histogram {
 public:
  // `bounds`: strictly increasing upper bounds, without +Inf.
  explicit Histogram(std::vector<double> bounds);
  void Observe(double value);
  // Replaces the buckets and sum with those of a histogram kept elsewhere (read when scraped).
  // `counts`: observations per bucket, not cumulative, one per bound then +Inf; another size is
  // a programming error and aborts.
  void Assign(std::span<const uint64_t> counts, double sum);

  struct Snapshot {
    std::vector<double> bounds;
    std::vector<uint64_t> cumulative;  // one per bound, then +Inf (== count)
    double sum = 0;
  };
  Snapshot Read() const;

 private:
  std::vector<double> bounds_;
  std::unique_ptr<std::atomic<uint64_t>[]> buckets_;  // bounds_.size() + 1, not cumulative
  std::atomic<double> sum_{0.0};
};

// Latency buckets in seconds suited to an API whose requests last from microseconds
// (health probes) to minutes (long generations).
std::vector<double> DefaultLatencyBuckets();

enum class Type { kCounter, kGauge, kHistogram };

// One series as read at one instant: its label values (in the family's label order) and its
// value (counters, gauges) or its histogram.
struct SeriesReading {
  std::vector<std::string> labels;
  double value = 0;
  Histogram::Snapshot histogram;  // histograms only
};

class FamilyBase {
 public:
  FamilyBase(std::string name, std::string help, Type type, std::vector<std::string> label_names);
  virtual ~FamilyBase() = default;
  FamilyBase(const FamilyBase&) = delete;
  FamilyBase& operator=(const FamilyBase&) = delete;

  const std::string& name() const { return name_; }
  Type type() const { return type_; }
  const std::vector<std::string>& label_names() const { return label_names_; }
  // Appends "# HELP", "# TYPE" and one line per series (several for histograms).
  virtual void Render(std::string* out) const = 0;
  // Appends every series as it is now.
  virtual void Read(std::vector<SeriesReading>* out) const = 0;

 protected:
  std::string name_;
  std::string help_;
  Type type_;
  std::vector<std::string> label_names_;
};

// One metric name and its series, one per distinct tuple of label values.
template <typename M>
class Family : public FamilyBase {
 public:
  using FamilyBase::FamilyBase;
  // Precondition: as many values as label names. Creates the series on first use.
  M& WithLabels(std::initializer_list<std::string_view> values);
  M& WithLabels(const std::vector<std::string>& values);
  void Render(std::string* out) const override;
  void Read(std::vector<SeriesReading>* out) const override;

  std::vector<double> histogram_bounds;  // histograms only

 private:
  mutable std::mutex mu_;
  std::map<std::vector<std::string>, std::unique_ptr<M>> series_;  // guarded by mu_
};

class Registry {
 public:
  Registry() = default;
  Registry(const Registry&) = delete;
  Registry& operator=(const Registry&) = delete;

  Family<Counter>& AddCounter(const std::string& name, const std::string& help,
                              std::vector<std::string> label_names = {});
  Family<Gauge>& AddGauge(const std::string& name, const std::string& help, std::vector<std::string> label_names = {});
  Family<Histogram>& AddHistogram(const std::string& name, const std::string& help,
                                  std::vector<std::string> label_names, std::vector<double> bounds);

  // The whole registry in the Prometheus text format, families in registration order.
  std::string RenderText() const;
  // Every series of the family `name` as it is now, and its label names; empty when no family
  // has that name. For readers inside the daemon (metrics/history.h) that need figures, not text.
  std::vector<SeriesReading> Read(const std::string& name, std::vector<std::string>* label_names = nullptr) const;

 private:
  FamilyBase* Find(const std::string& name, Type type, const std::vector<std::string>& label_names);

  mutable std::mutex mu_;
  std::vector<std::unique_ptr<FamilyBase>> families_;  // guarded by mu_
};

// Helpers shared with tests.
bool IsValidMetricName(std::string_view name);
bool IsValidLabelName(std::string_view name);
std::string FormatValue(double v);
std::string EscapeLabelValue(std::string_view v);

}  // namespace kimi::metrics
