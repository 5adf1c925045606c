#include "core/thread_pool.h"

#include <algorithm>
#include <cstdlib>

namespace kimi {
namespace {

inline void CpuRelax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  __asm__ __volatile__("yield");
#endif
}

// Polls `done` until it returns true or `budget` has passed; returns the last value of done().
// The clock is read every 64 polls (a pause is ~40–150 cycles: a few microseconds apart).
// It never calls sched_yield: on a busy machine that hands the core to another process for a
// whole time slice, after which the job has long been waiting; a sleeping thread is at least
// scheduled promptly when woken. (A yielding spin was the slowest pool variant in interleaved
// decode runs at load ~14, docs/benchmarks.md.)
template <typename Done>
bool SpinFor(std::chrono::microseconds budget, Done&& done) {
  if (done()) return true;
  if (budget.count() <= 0) return false;
  const auto deadline = std::chrono::steady_clock::now() + budget;
  for (;;) {
    for (int i = 0; i < 64; ++i) {
      CpuRelax();
      if (done()) return true;
    }
    if (std::chrono::steady_clock::now() >= deadline) return done();
  }
}

}  // namespace

std::chrono::microseconds ThreadPool::DefaultSpin() {
  static const std::chrono::microseconds spin = [] {
    const char* env = std::getenv("KIMI_POOL_SPIN_US");
    if (env != nullptr && *env != '\0') {
      char* end = nullptr;
      const long v = std::strtol(env, &end, 10);
      if (*end == '\0' && v >= 0) return std::chrono::microseconds(std::min(v, 1000000L));
    }
    return std::chrono::microseconds(20);
  }();
  return spin;
}

ThreadPool::ThreadPool(int num_threads) : ThreadPool(num_threads, DefaultSpin()) {}

ThreadPool::ThreadPool(int num_threads, std::chrono::microseconds spin, Subnormals subnormals)
    : num_threads_(num_threads > 0 ? num_threads
                                   : std::max(1, static_cast<int>(std::thread::hardware_concurrency()))),
      spin_(std::max(spin, std::chrono::microseconds(0))),
      subnormals_(subnormals) {
  workers_.reserve(num_threads_ - 1);
  for (int w = 1; w < num_threads_; ++w) workers_.emplace_back([this, w] { WorkerLoop(w); });
}

ThreadPool::~ThreadPool() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_.store(true);
  }
  work_cv_.notify_all();
  for (auto& t : workers_) t.join();
}

void ThreadPool::RangeOf(int t, int64_t* b, int64_t* e) const {
  int64_t lo = job_begin_ + job_chunk_ * t;
  int64_t hi = lo + job_chunk_;
  *b = std::min(lo, job_end_);
  *e = std::min(hi, job_end_);
}

void ThreadPool::Run(int64_t begin, int64_t end, int64_t align, bool dynamic, void* ctx, Invoker invoke) {
  if (end <= begin) return;
  if (align < 1) align = 1;
  const ScopedSubnormals mode(subnormals_);
  int64_t n = end - begin;
  int64_t chunk = align;
  if (!dynamic) {
    int64_t units = (n + align - 1) / align;
    int64_t per_thread_units = (units + num_threads_ - 1) / num_threads_;
    chunk = per_thread_units * align;
  }
  if (num_threads_ == 1 || chunk >= n) {
    invoke(ctx, begin, end, 0);
    return;
  }
  std::lock_guard<std::mutex> call_lock(call_mu_);
  job_begin_ = begin;
  job_end_ = end;
  job_chunk_ = chunk;
  job_dynamic_ = dynamic;
  job_next_.store(begin, std::memory_order_relaxed);
  job_ctx_ = ctx;
  job_invoke_ = invoke;
  pending_.store(num_threads_ - 1, std::memory_order_relaxed);
  job_gate_.store((generation_.load(std::memory_order_relaxed) + 1) << kGateShift, std::memory_order_relaxed);
  generation_.fetch_add(1);  // seq_cst: publishes the job, then read sleeping_workers_
  if (sleeping_workers_.load() > 0) {
    std::lock_guard<std::mutex> lock(mu_);
    work_cv_.notify_all();
  }
  RunShare(0);
  if (dynamic) {
    // No chunk is left: workers that have not joined yet are not waited for.
    const uint64_t gate = job_gate_.fetch_or(kGateClosed);
    const int absent = num_threads_ - 1 - static_cast<int>(gate & kGateJoinedMask);
    if (absent > 0) pending_.fetch_sub(absent);
  }
  AwaitWorkers();
}

bool ThreadPool::JoinJob(uint64_t seen) {
  uint64_t gate = job_gate_.load();
  for (;;) {
    if (gate >> kGateShift != (seen << kGateShift) >> kGateShift || (gate & kGateClosed) != 0) return false;
    if (job_gate_.compare_exchange_weak(gate, gate + 1)) return true;
  }
}

void ThreadPool::RunShare(int t) {
  if (job_dynamic_) {
    for (;;) {
      const int64_t b = job_next_.fetch_add(job_chunk_, std::memory_order_relaxed);
      if (b >= job_end_) return;
      job_invoke_(job_ctx_, b, std::min(b + job_chunk_, job_end_), t);
    }
  }
  int64_t b, e;
  RangeOf(t, &b, &e);
  if (b < e) job_invoke_(job_ctx_, b, e, t);
}

void ThreadPool::AwaitWorkers() {
  // Sequentially consistent loads: the sleeping path relies on them (see caller_sleeping_).
  auto finished = [this] { return pending_.load() == 0; };
  if (SpinFor(spin_, finished)) return;
  std::unique_lock<std::mutex> lock(mu_);
  caller_sleeping_.store(true);
  done_cv_.wait(lock, finished);
  caller_sleeping_.store(false);
}

bool ThreadPool::AwaitJob(uint64_t seen) {
  auto ready = [&] { return stop_.load() || generation_.load() != seen; };
  if (!SpinFor(spin_, ready)) {
    std::unique_lock<std::mutex> lock(mu_);
    sleeping_workers_.fetch_add(1);
    work_cv_.wait(lock, ready);
    sleeping_workers_.fetch_sub(1);
  }
  return !stop_.load(std::memory_order_acquire);
}

void ThreadPool::WorkerLoop(int worker_index) {
  SetThreadSubnormals(subnormals_);
  uint64_t seen = 0;
  while (AwaitJob(seen)) {
    seen = generation_.load(std::memory_order_acquire);
    if (!JoinJob(seen)) continue;
    RunShare(worker_index);
    if (pending_.fetch_sub(1) == 1 && caller_sleeping_.load()) {
      std::lock_guard<std::mutex> lock(mu_);
      done_cv_.notify_one();
    }
  }
}

}  // namespace kimi
