#include "daemon/engine_metrics.h"

#include <chrono>
#include <iterator>
#include <memory>
#include <string>
#include <vector>

#include "build_info.h"
#include "kimi/runtime.h"

namespace kimi::daemon {

void RegisterProcessMetrics(metrics::Registry& registry) {
  double start = std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
  registry
      .AddGauge("process_start_time_seconds", "Start time of the process since the Unix epoch, in seconds.")
      .WithLabels(std::vector<std::string>{})
      .Set(start);
  registry
      .AddGauge("kimi_build_info", "Build of the running daemon; the value is always 1.",
                {"version", "build_type", "compiler"})
      .WithLabels({KIMI_APPLIANCE_VERSION, KIMI_APPLIANCE_BUILD_TYPE, KIMI_APPLIANCE_COMPILER})
      .Set(1);
}

// Engine figures on /metrics, read from the runtime when scraped.
std::function<void()> EngineMetricsRefresher(metrics::Registry& registry,
                                             const api::EmbeddedBackend& backend) {
  auto& requests = registry.AddGauge("kimi_engine_requests", "Engine requests now, by state.", {"state"});
  auto& totals = registry.AddGauge("kimi_engine_requests_ended", "Engine requests ended since start, by how.",
                                   {"outcome"});
  auto& memory =
      registry.AddGauge("kimi_engine_memory_bytes", "Engine sequence-state memory, by kind.", {"kind"});
  auto& tokens =
      registry.AddGauge("kimi_engine_tokens", "Tokens the engine processed since start.", {"kind"});
  auto& pages =
      registry.AddGauge("kimi_engine_mla_pages", "MLA latent-cache pages of the pool, by state.", {"state"});
  auto& kda_slots =
      registry.AddGauge("kimi_engine_kda_slots_used", "KDA state slots held by running sequences.");
  auto& prefix = registry.AddGauge("kimi_engine_prefix_cache",
                                   "Prefix cache since start: lookups and hits in requests "
                                   "and prompt tokens, evictions; held pages, snapshots and bytes now.",
                                   {"kind"});
  auto& preemptions = registry.AddGauge("kimi_engine_preemptions",
                                        "Sequences preempted since start: state freed "
                                        "when memory ran out, recomputed when readmitted.");
  const std::vector<double> bounds(std::begin(LatencyHistogram::kUpperBounds),
                                   std::end(LatencyHistogram::kUpperBounds));
  auto latency = [&](const char* name, const char* help) -> metrics::Histogram& {
    return registry.AddHistogram(name, help, {}, bounds).WithLabels({});
  };
  auto& ttft = latency("kimi_engine_time_to_first_token_seconds",
                       "Engine requests: submitted to first token sampled.");
  auto& itl =
      latency("kimi_engine_inter_token_latency_seconds", "Engine requests: between consecutive tokens.");
  auto& queue = latency("kimi_engine_queue_time_seconds",
                        "Engine requests: submitted to admitted into the running batch.");
  auto& e2e = latency("kimi_engine_e2e_request_latency_seconds",
                      "Engine requests that finished (stop or length): "
                      "submitted to last token.");
  return [&, &backend = backend] {
    std::shared_ptr<ChatService> service = backend.service();
    if (service == nullptr) return;
    const RuntimeCounters c = service->Counters();
    requests.WithLabels({"running"}).Set(double(c.running));
    requests.WithLabels({"waiting"}).Set(double(c.waiting));
    totals.WithLabels({"finished"}).Set(double(c.requests_finished));
    totals.WithLabels({"cancelled"}).Set(double(c.requests_cancelled));
    totals.WithLabels({"refused"}).Set(double(c.requests_refused));
    memory.WithLabels({"budget"}).Set(double(c.memory_budget_bytes));
    memory.WithLabels({"reserved"}).Set(double(c.memory_reserved_bytes));
    memory.WithLabels({"used"}).Set(double(c.memory_used_bytes));
    tokens.WithLabels({"generated"}).Set(double(c.tokens_generated));
    tokens.WithLabels({"prompt"}).Set(double(c.prompt_tokens_processed));
    pages.WithLabels({"capacity"}).Set(double(c.mla_pages_capacity));
    pages.WithLabels({"used"}).Set(double(c.mla_pages_used));
    kda_slots.WithLabels({}).Set(double(c.kda_slots_used));
    prefix.WithLabels({"query_requests"}).Set(double(c.prefix_cache_queries));
    prefix.WithLabels({"hit_requests"}).Set(double(c.prefix_cache_hits));
    prefix.WithLabels({"query_tokens"}).Set(double(c.prefix_cache_query_tokens));
    prefix.WithLabels({"hit_tokens"}).Set(double(c.prefix_cache_hit_tokens));
    prefix.WithLabels({"evictions"}).Set(double(c.prefix_cache_evictions));
    prefix.WithLabels({"pages"}).Set(double(c.prefix_cache_pages));
    prefix.WithLabels({"snapshots"}).Set(double(c.prefix_cache_snapshots));
    prefix.WithLabels({"bytes"}).Set(double(c.prefix_cache_bytes));
    preemptions.WithLabels({}).Set(double(c.preemptions));
    auto assign = [](metrics::Histogram& to, const LatencyHistogram& from) {
      uint64_t counts[LatencyHistogram::kBuckets];
      for (size_t i = 0; i < LatencyHistogram::kBuckets; ++i) counts[i] = uint64_t(from.counts[i]);
      to.Assign(counts, from.sum_seconds);
    };
    assign(ttft, c.time_to_first_token);
    assign(itl, c.inter_token);
    assign(queue, c.queue_time);
    assign(e2e, c.end_to_end);
  };
}

}  // namespace kimi::daemon
