// ThreadPool: a fixed set of persistent worker threads that run one parallel_for at a time.
//
// The kernels split their output rows (or heads, or tokens) into one contiguous range per
// thread and run the ranges together; the calling thread works on range 0 and waits for the
// rest. A call allocates nothing: the work is passed as a pointer to the caller's callable,
// which outlives the call because ParallelFor returns only when every range is done.
//
// Waiting spins briefly before it sleeps. A decoded token opens about 60 parallel regions a
// few tens of microseconds apart; a worker that went to sleep on a condition variable after
// each one would be woken through the kernel every time (several microseconds, more on a
// virtual machine whose idle vCPU halts), and the caller would wait for that wake-up before
// the worker's range even starts. So a worker that has finished a range polls for the next one
// for up to `spin` (with the CPU's pause hint) and only then sleeps; the caller likewise polls
// for the workers' completion for up to `spin` before it sleeps. The spin is bounded, so an
// idle pool sleeps and costs nothing, and on an oversubscribed machine a spinning thread gives
// its core back after at most `spin`. spin = 0 sleeps at once (the behaviour before).
//
// Floating point: every range runs with the pool's subnormal mode (core/float_mode.h) —
// flush-to-zero unless the pool was built to keep subnormals. Workers set it once at start;
// the calling thread runs its range 0 under it and gets its own mode back on return.
//
// Owns: its worker threads (joined in the destructor).
// Thread safety: ParallelFor may be called from several threads; calls are serialised by an
// internal mutex (one parallel region at a time). It must not be called from inside a range
// function of the same pool (that would deadlock); nested parallelism is not supported.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <thread>
#include <type_traits>
#include <vector>

#include "core/float_mode.h"

namespace kimi {

class ThreadPool {
 public:
  // num_threads counts the calling thread: 1 means no worker threads at all.
  // 0 means one per hardware thread (std::thread::hardware_concurrency()).
  // The spin bound is DefaultSpin().
  explicit ThreadPool(int num_threads = 0);
  // The same with an explicit bound on each spin-wait (0: sleep at once), and the subnormal
  // mode the ranges run under (kKeep only to measure what flushing saves).
  ThreadPool(int num_threads, std::chrono::microseconds spin, Subnormals subnormals = Subnormals::kFlushToZero);
  ~ThreadPool();
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  int num_threads() const { return num_threads_; }
  std::chrono::microseconds spin() const { return spin_; }
  Subnormals subnormals() const { return subnormals_; }

  // The environment's KIMI_POOL_SPIN_US (microseconds, 0 disables spinning) when set to a
  // number, else 20 µs: longer than most gaps between a decode step's parallel regions,
  // short enough that an idle pool goes to sleep almost at once and that a thread which spins
  // on a core another thread needs (more threads than cores) gives it back soon
  // (docs/kernels.md).
  static std::chrono::microseconds DefaultSpin();

  // Splits [begin, end) into at most num_threads() contiguous ranges whose bounds (except
  // `end`) are multiples of `align` counted from `begin`, and calls fn(range_begin, range_end,
  // thread_index) once per non-empty range. Returns when every range has returned.
  // Precondition: begin <= end, align >= 1; fn does not throw.
  template <typename Fn>
  void ParallelFor(int64_t begin, int64_t end, int64_t align, Fn&& fn) {
    using F = std::remove_reference_t<Fn>;
    Run(begin, end, align, /*dynamic=*/false, &fn,
        [](void* ctx, int64_t b, int64_t e, int t) { (*static_cast<F*>(ctx))(b, e, t); });
  }

  // Splits [begin, end) into chunks of `chunk` (the last one shorter) that the threads take
  // one at a time, whichever is free: each thread, the caller included, calls
  // fn(chunk_begin, chunk_end, thread_index) for every chunk it takes, one after another,
  // until none remain. A thread that starts late (a worker waking up) or is descheduled (a
  // busy machine) takes fewer chunks, so the region ends when the work does instead of when
  // the slowest thread's fixed share does. A worker that arrives only after the caller has
  // found no chunk left is not waited for and does not touch the region. On a one-thread pool,
  // or when the whole range is one chunk, fn(begin, end, 0) runs once on the calling thread.
  // Returns when every chunk has returned. Precondition: begin <= end, chunk >= 1.
  template <typename Fn>
  void ParallelForChunks(int64_t begin, int64_t end, int64_t chunk, Fn&& fn) {
    using F = std::remove_reference_t<Fn>;
    Run(begin, end, chunk, /*dynamic=*/true, &fn,
        [](void* ctx, int64_t b, int64_t e, int t) { (*static_cast<F*>(ctx))(b, e, t); });
  }

 private:
  using Invoker = void (*)(void* ctx, int64_t begin, int64_t end, int thread_index);

  // align is ParallelFor's alignment, or with dynamic the chunk length.
  void Run(int64_t begin, int64_t end, int64_t align, bool dynamic, void* ctx, Invoker invoke);
  // Admits worker_index to the job of generation `seen`: false when that job is no longer the
  // current one or the caller has closed it (a chunked job whose chunks were all taken).
  bool JoinJob(uint64_t seen);
  // Runs the current job's share of thread t: its fixed range, or chunks until none remain.
  void RunShare(int t);
  void WorkerLoop(int worker_index);
  // Blocks until generation_ differs from `seen` or stop_ is set; returns false on stop.
  bool AwaitJob(uint64_t seen);
  // Blocks until every worker has finished the current job.
  void AwaitWorkers();
  // The range of thread t in the current job.
  void RangeOf(int t, int64_t* b, int64_t* e) const;

  const int num_threads_;
  const std::chrono::microseconds spin_;
  const Subnormals subnormals_;
  std::vector<std::thread> workers_;

  std::mutex call_mu_;  // serialises Run() callers

  // The current job; written by Run() before it bumps generation_ (release), read by workers
  // after they observe the new generation (acquire). Run() returns only when pending_ is 0, so
  // no worker reads these while the next job writes them.
  int64_t job_begin_ = 0;
  int64_t job_end_ = 0;
  int64_t job_chunk_ = 0;
  bool job_dynamic_ = false;
  std::atomic<int64_t> job_next_{0};  // dynamic jobs: the first chunk not yet taken
  void* job_ctx_ = nullptr;
  Invoker job_invoke_ = nullptr;
  std::atomic<uint64_t> generation_{0};
  // Who may still take part in the current job: (generation << kGateShift) | kGateClosed when
  // closed | number of workers that joined. A chunked job's caller closes it once it finds no
  // chunk left, so a worker that wakes after that does not touch the job and the caller waits
  // only for the workers that joined (on a busy machine the worker is often scheduled only
  // after the caller has taken every chunk; waiting for it cost the caller ~45 µs a region).
  static constexpr int kGateShift = 17;
  static constexpr uint64_t kGateClosed = uint64_t{1} << 16;
  static constexpr uint64_t kGateJoinedMask = kGateClosed - 1;
  std::atomic<uint64_t> job_gate_{0};
  std::atomic<int> pending_{0};  // workers still running the current job (or yet to join it)
  std::atomic<bool> stop_{false};

  // Sleeping. A sleeper announces itself (sleeping_workers_ / caller_sleeping_) under mu_ and
  // then re-checks its condition; the waker changes the condition first and then reads the
  // announcement (all sequentially consistent), so one of the two always sees the other and
  // no wake-up is lost. The waker takes mu_ before notifying.
  std::mutex mu_;
  std::condition_variable work_cv_;
  std::condition_variable done_cv_;
  std::atomic<int> sleeping_workers_{0};
  std::atomic<bool> caller_sleeping_{false};
};

}  // namespace kimi
