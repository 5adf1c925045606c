#include "metrics/metrics.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstdlib>

namespace kimi::metrics {
namespace {

[[noreturn]] void Fatal(const std::string& message) {
  std::fprintf(stderr, "metrics registry: %s\n", message.c_str());
  std::abort();
}

void AtomicAdd(std::atomic<double>& target, double by) {
  double current = target.load(std::memory_order_relaxed);
  while (!target.compare_exchange_weak(current, current + by, std::memory_order_relaxed)) {
  }
}

std::string EscapeHelp(std::string_view help) {
  std::string out;
  for (char c : help) {
    if (c == '\\') out += "\\\\";
    else if (c == '\n') out += "\\n";
    else out += c;
  }
  return out;
}

std::string_view TypeName(Type t) {
  switch (t) {
    case Type::kCounter: return "counter";
    case Type::kGauge: return "gauge";
    case Type::kHistogram: return "histogram";
  }
  return "untyped";
}

// {a="x",b="y"} with an optional extra label (for "le"); "" when there are no labels.
std::string LabelSet(const std::vector<std::string>& names, const std::vector<std::string>& values,
                     std::string_view extra_name = {}, std::string_view extra_value = {}) {
  if (names.empty() && extra_name.empty()) return "";
  std::string out = "{";
  for (size_t i = 0; i < names.size(); ++i) {
    if (i) out += ',';
    out += names[i] + "=\"" + EscapeLabelValue(values[i]) + "\"";
  }
  if (!extra_name.empty()) {
    if (!names.empty()) out += ',';
    out += std::string(extra_name) + "=\"" + std::string(extra_value) + "\"";
  }
  out += '}';
  return out;
}

}  // namespace

void Counter::Increment(double by) {
  if (!(by >= 0)) return;  // a counter never goes down; NaN is dropped too
  AtomicAdd(value_, by);
}

void Counter::RaiseTo(double total) {
  double current = value_.load(std::memory_order_relaxed);
  while (total > current && !value_.compare_exchange_weak(current, total, std::memory_order_relaxed)) {
  }
}

void Gauge::Add(double by) { AtomicAdd(value_, by); }

Histogram::Histogram(std::vector<double> bounds)
    : bounds_(std::move(bounds)), buckets_(new std::atomic<uint64_t>[bounds_.size() + 1]) {
  for (size_t i = 0; i <= bounds_.size(); ++i) buckets_[i].store(0);
}

void Histogram::Observe(double value) {
  // Bucket i counts values <= bounds_[i] and > bounds_[i-1]; the last one is +Inf.
  size_t i = static_cast<size_t>(std::lower_bound(bounds_.begin(), bounds_.end(), value) - bounds_.begin());
  buckets_[i].fetch_add(1, std::memory_order_relaxed);
  AtomicAdd(sum_, value);
}

void Histogram::Assign(std::span<const uint64_t> counts, double sum) {
  if (counts.size() != bounds_.size() + 1) {
    Fatal("histogram assigned " + std::to_string(counts.size()) + " buckets, has " + std::to_string(bounds_.size() + 1));
  }
  for (size_t i = 0; i < counts.size(); ++i) buckets_[i].store(counts[i], std::memory_order_relaxed);
  sum_.store(sum, std::memory_order_relaxed);
}

Histogram::Snapshot Histogram::Read() const {
  Snapshot s;
  s.bounds = bounds_;
  uint64_t running = 0;
  for (size_t i = 0; i <= bounds_.size(); ++i) {
    running += buckets_[i].load(std::memory_order_relaxed);
    s.cumulative.push_back(running);
  }
  s.sum = sum_.load(std::memory_order_relaxed);
  return s;
}

std::vector<double> DefaultLatencyBuckets() {
  return {0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300};
}

FamilyBase::FamilyBase(std::string name, std::string help, Type type, std::vector<std::string> label_names)
    : name_(std::move(name)), help_(std::move(help)), type_(type), label_names_(std::move(label_names)) {}

template <typename M>
M& Family<M>::WithLabels(const std::vector<std::string>& values) {
  if (values.size() != label_names_.size()) {
    Fatal(name_ + ": " + std::to_string(values.size()) + " label values for " + std::to_string(label_names_.size()) +
          " label names");
  }
  std::lock_guard<std::mutex> lock(mu_);
  auto it = series_.find(values);
  if (it == series_.end()) {
    std::unique_ptr<M> series;
    if constexpr (std::is_same_v<M, Histogram>) {
      series = std::make_unique<Histogram>(histogram_bounds);
    } else {
      series = std::make_unique<M>();
    }
    it = series_.emplace(values, std::move(series)).first;
  }
  return *it->second;
}

template <typename M>
M& Family<M>::WithLabels(std::initializer_list<std::string_view> values) {
  return WithLabels(std::vector<std::string>(values.begin(), values.end()));
}

template <typename M>
void Family<M>::Render(std::string* out) const {
  *out += "# HELP " + name_ + " " + EscapeHelp(help_) + "\n";
  *out += "# TYPE " + name_ + " " + std::string(TypeName(type_)) + "\n";
  std::lock_guard<std::mutex> lock(mu_);
  for (const auto& [values, series] : series_) {
    if constexpr (std::is_same_v<M, Histogram>) {
      Histogram::Snapshot s = series->Read();
      for (size_t i = 0; i < s.bounds.size(); ++i) {
        *out += name_ + "_bucket" + LabelSet(label_names_, values, "le", FormatValue(s.bounds[i])) + " " +
                std::to_string(s.cumulative[i]) + "\n";
      }
      *out += name_ + "_bucket" + LabelSet(label_names_, values, "le", "+Inf") + " " +
              std::to_string(s.cumulative.back()) + "\n";
      *out += name_ + "_sum" + LabelSet(label_names_, values) + " " + FormatValue(s.sum) + "\n";
      *out += name_ + "_count" + LabelSet(label_names_, values) + " " + std::to_string(s.cumulative.back()) + "\n";
    } else {
      *out += name_ + LabelSet(label_names_, values) + " " + FormatValue(series->Value()) + "\n";
    }
  }
}

template <typename M>
void Family<M>::Read(std::vector<SeriesReading>* out) const {
  std::lock_guard<std::mutex> lock(mu_);
  for (const auto& [values, series] : series_) {
    SeriesReading r;
    r.labels = values;
    if constexpr (std::is_same_v<M, Histogram>) {
      r.histogram = series->Read();
      r.value = double(r.histogram.cumulative.back());
    } else {
      r.value = series->Value();
    }
    out->push_back(std::move(r));
  }
}

template class Family<Counter>;
template class Family<Gauge>;
template class Family<Histogram>;

FamilyBase* Registry::Find(const std::string& name, Type type, const std::vector<std::string>& label_names) {
  if (!IsValidMetricName(name)) Fatal("invalid metric name \"" + name + "\"");
  for (const std::string& l : label_names) {
    if (!IsValidLabelName(l)) Fatal(name + ": invalid label name \"" + l + "\"");
  }
  for (const auto& f : families_) {
    if (f->name() != name) continue;
    if (f->type() != type || f->label_names() != label_names) {
      Fatal(name + " registered twice with different types or labels");
    }
    return f.get();
  }
  return nullptr;
}

Family<Counter>& Registry::AddCounter(const std::string& name, const std::string& help,
                                      std::vector<std::string> label_names) {
  std::lock_guard<std::mutex> lock(mu_);
  if (FamilyBase* f = Find(name, Type::kCounter, label_names)) return static_cast<Family<Counter>&>(*f);
  families_.push_back(std::make_unique<Family<Counter>>(name, help, Type::kCounter, std::move(label_names)));
  return static_cast<Family<Counter>&>(*families_.back());
}

Family<Gauge>& Registry::AddGauge(const std::string& name, const std::string& help,
                                  std::vector<std::string> label_names) {
  std::lock_guard<std::mutex> lock(mu_);
  if (FamilyBase* f = Find(name, Type::kGauge, label_names)) return static_cast<Family<Gauge>&>(*f);
  families_.push_back(std::make_unique<Family<Gauge>>(name, help, Type::kGauge, std::move(label_names)));
  return static_cast<Family<Gauge>&>(*families_.back());
}

Family<Histogram>& Registry::AddHistogram(const std::string& name, const std::string& help,
                                          std::vector<std::string> label_names, std::vector<double> bounds) {
  for (size_t i = 0; i < bounds.size(); ++i) {
    if (!std::isfinite(bounds[i]) || (i > 0 && bounds[i] <= bounds[i - 1])) {
      Fatal(name + ": histogram bounds must be finite and strictly increasing");
    }
  }
  for (const std::string& l : label_names) {
    if (l == "le") Fatal(name + ": \"le\" is reserved for histogram buckets");
  }
  std::lock_guard<std::mutex> lock(mu_);
  if (FamilyBase* f = Find(name, Type::kHistogram, label_names)) {
    auto& h = static_cast<Family<Histogram>&>(*f);
    if (h.histogram_bounds != bounds) Fatal(name + " registered twice with different buckets");
    return h;
  }
  auto family = std::make_unique<Family<Histogram>>(name, help, Type::kHistogram, std::move(label_names));
  family->histogram_bounds = std::move(bounds);
  families_.push_back(std::move(family));
  return static_cast<Family<Histogram>&>(*families_.back());
}

std::string Registry::RenderText() const {
  std::string out;
  std::lock_guard<std::mutex> lock(mu_);
  for (const auto& f : families_) f->Render(&out);
  return out;
}

std::vector<SeriesReading> Registry::Read(const std::string& name, std::vector<std::string>* label_names) const {
  std::vector<SeriesReading> out;
  std::lock_guard<std::mutex> lock(mu_);
  for (const auto& f : families_) {
    if (f->name() != name) continue;
    if (label_names != nullptr) *label_names = f->label_names();
    f->Read(&out);
    break;
  }
  return out;
}

bool IsValidMetricName(std::string_view name) {
  if (name.empty()) return false;
  for (size_t i = 0; i < name.size(); ++i) {
    char c = name[i];
    bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || c == ':' || (i > 0 && c >= '0' && c <= '9');
    if (!ok) return false;
  }
  return true;
}

bool IsValidLabelName(std::string_view name) {
  if (name.empty() || name.substr(0, 2) == "__") return false;
  for (size_t i = 0; i < name.size(); ++i) {
    char c = name[i];
    bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || (i > 0 && c >= '0' && c <= '9');
    if (!ok) return false;
  }
  return true;
}

std::string FormatValue(double v) {
  if (std::isnan(v)) return "NaN";
  if (std::isinf(v)) return v > 0 ? "+Inf" : "-Inf";
  char buf[64];
  auto [end, ec] = std::to_chars(buf, buf + sizeof buf, v);
  if (ec != std::errc()) return "NaN";
  return std::string(buf, end);
}

std::string EscapeLabelValue(std::string_view v) {
  std::string out;
  for (char c : v) {
    if (c == '\\') out += "\\\\";
    else if (c == '"') out += "\\\"";
    else if (c == '\n') out += "\\n";
    else out += c;
  }
  return out;
}

}  // namespace kimi::metrics
