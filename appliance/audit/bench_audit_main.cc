// kimi-bench-audit: audited requests per second with synchronous=FULL and group commit,
// against the same simulated requests with auditing off, at several numbers of concurrent
// producers. Prints one table row per configuration and the audited/baseline ratio.
//
//   kimi-bench-audit [--dir DIR] [--seconds S] [--producers 1,8,64] [--work-us 0,2000]
//
// A simulated request: build a ~2 KiB request body and hash it, wait work_us (the model's
// time; a sleep, since the model runs elsewhere), build a ~4 KiB response and hash it, build
// the audit record. Audited requests then Record() it and wait for the commit before
// "responding", as the daemon does. DIR should be on the disk the appliance will use: the
// figure is dominated by its fsync latency.
#include <stdlib.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "audit/audit_sink.h"
#include "audit/hash.h"

namespace {

using namespace kimi::audit;
using Clock = std::chrono::steady_clock;

struct Config {
  std::string dir;
  double seconds = 2.0;
  std::vector<int> producers = {1, 8, 64};
  std::vector<int> work_us = {0, 2000};
};

std::vector<int> ParseList(const std::string& text) {
  std::vector<int> out;
  std::stringstream ss(text);
  for (std::string item; std::getline(ss, item, ',');) out.push_back(std::stoi(item));
  return out;
}

AuditRecord SimulateRequest(int producer, uint64_t n, int work_us) {
  std::string request = R"({"model":"kimi-k3","messages":[{"role":"user","content":")";
  request.append(2000, static_cast<char>('a' + (n % 26)));
  request += "\"}]}";
  AuditRecord r;
  r.request_sha256 = ToHex(Sha256(request));
  if (work_us > 0) std::this_thread::sleep_for(std::chrono::microseconds(work_us));
  std::string response = R"({"choices":[{"message":{"content":")";
  response.append(4000, static_cast<char>('A' + (n % 26)));
  response += "\"}}]}";
  r.response_sha256 = ToHex(Sha256(response));
  r.actor = "key_bench_" + std::to_string(producer);
  r.role = "user";
  r.source = "127.0.0.1:5" + std::to_string(producer);
  r.request_id = "req-" + std::to_string(producer) + "-" + std::to_string(n);
  r.action = "chat.completions";
  r.model = "kimi-k3";
  r.model_digest = "sha256:bench";
  r.outcome = "ok";
  r.http_status = 200;
  r.prompt_tokens = 512;
  r.completion_tokens = 1024;
  r.ttft_us = work_us / 4;
  r.total_us = work_us;
  r.policy = {"allow"};
  return r;
}

// Requests completed per second by `producers` closed-loop clients.
double Run(AuditSink* sink, int producers, int work_us, double seconds, uint64_t* failures) {
  std::atomic<bool> stop{false};
  std::atomic<uint64_t> done{0};
  std::atomic<uint64_t> failed{0};
  std::vector<std::thread> threads;
  const auto start = Clock::now();
  for (int p = 0; p < producers; ++p) {
    threads.emplace_back([&, p] {
      for (uint64_t n = 0; !stop.load(std::memory_order_relaxed); ++n) {
        AuditRecord r = SimulateRequest(p, n, work_us);
        if (sink != nullptr && !sink->Record(std::move(r)).WaitCommitted().ok()) {
          failed.fetch_add(1, std::memory_order_relaxed);
          continue;
        }
        done.fetch_add(1, std::memory_order_relaxed);
      }
    });
  }
  std::this_thread::sleep_for(std::chrono::duration<double>(seconds));
  stop = true;
  for (std::thread& t : threads) t.join();
  const double elapsed = std::chrono::duration<double>(Clock::now() - start).count();
  *failures += failed.load();
  return static_cast<double>(done.load()) / elapsed;
}

}  // namespace

int main(int argc, char** argv) {
  Config cfg;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string flag = argv[i];
    const std::string value = argv[i + 1];
    if (flag == "--dir") {
      cfg.dir = value;
    } else if (flag == "--seconds") {
      cfg.seconds = std::stod(value);
    } else if (flag == "--producers") {
      cfg.producers = ParseList(value);
    } else if (flag == "--work-us") {
      cfg.work_us = ParseList(value);
    } else {
      std::fprintf(stderr, "usage: kimi-bench-audit [--dir DIR] [--seconds S] [--producers 1,8,64] [--work-us 0,2000]\n");
      return 2;
    }
  }
  bool own_dir = false;
  if (cfg.dir.empty()) {
    const char* tmp = std::getenv("TMPDIR");
    std::string tmpl = std::string(tmp != nullptr && *tmp != '\0' ? tmp : "/tmp") + "/kimi-bench-audit-XXXXXX";
    if (::mkdtemp(tmpl.data()) == nullptr) {
      std::perror("mkdtemp");
      return 1;
    }
    cfg.dir = tmpl;
    own_dir = true;
  }
  AuditSinkOptions options;
  options.data_dir = cfg.dir;
  options.sign_interval_ms = 1000;
  kimi::Result<std::unique_ptr<AuditSink>> sink = AuditSink::Open(options);
  if (!sink.ok()) {
    std::fprintf(stderr, "cannot open the audit sink in %s: %s\n", cfg.dir.c_str(), sink.status().ToString().c_str());
    return 1;
  }
  std::printf("audit benchmark: dir=%s synchronous=FULL journal=WAL, %.1f s a configuration\n", cfg.dir.c_str(),
              cfg.seconds);
  std::printf("%9s %9s %14s %14s %7s %13s\n", "producers", "work_us", "baseline_rps", "audited_rps", "ratio",
              "records/txn");
  uint64_t failures = 0;
  for (int work : cfg.work_us) {
    for (int producers : cfg.producers) {
      const double base = Run(nullptr, producers, work, cfg.seconds, &failures);
      const AuditSinkStats before = (*sink)->Stats();
      const double audited = Run(sink->get(), producers, work, cfg.seconds, &failures);
      const AuditSinkStats after = (*sink)->Stats();
      const double txns = static_cast<double>(after.transactions - before.transactions);
      const double per_txn = txns > 0 ? static_cast<double>(after.records_committed - before.records_committed) / txns : 0;
      std::printf("%9d %9d %14.0f %14.0f %7.3f %13.1f\n", producers, work, base, audited, audited / base, per_txn);
      std::fflush(stdout);
    }
  }
  const uint64_t records = (*sink)->TreeSize();
  const kimi::Status closed = (*sink)->Close();
  std::printf("records committed: %llu, failed: %llu, close: %s\n", static_cast<unsigned long long>(records),
              static_cast<unsigned long long>(failures), closed.ToString().c_str());
  if (own_dir) {
    std::error_code ec;
    std::filesystem::remove_all(cfg.dir, ec);
  }
  return failures == 0 && closed.ok() ? 0 : 1;
}
