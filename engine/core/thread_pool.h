// ThreadPool: a fixed set of persistent worker threads that run one parallel_for at a time.
//
// The kernels split their output rows (or heads, or tokens) into one contiguous range per
// thread and run the ranges together; the calling thread works on range 0 and waits for the
// rest. A call allocates nothing: the work is passed as a pointer to the caller's callable,
// which outlives the call because ParallelFor returns only when every range is done.
//
// Owns: its worker threads (joined in the destructor).
// Thread safety: ParallelFor may be called from several threads; calls are serialised by an
// internal mutex (one parallel region at a time). It must not be called from inside a range
// function of the same pool (that would deadlock); nested parallelism is not supported.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <thread>
#include <type_traits>
#include <vector>

namespace kimi {

class ThreadPool {
 public:
  // num_threads counts the calling thread: 1 means no worker threads at all.
  // 0 means one per hardware thread (std::thread::hardware_concurrency()).
  explicit ThreadPool(int num_threads = 0);
  ~ThreadPool();
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  int num_threads() const { return num_threads_; }

  // Splits [begin, end) into at most num_threads() contiguous ranges whose bounds (except
  // `end`) are multiples of `align` counted from `begin`, and calls fn(range_begin, range_end,
  // thread_index) once per non-empty range. Returns when every range has returned.
  // Precondition: begin <= end, align >= 1; fn does not throw.
  template <typename Fn>
  void ParallelFor(int64_t begin, int64_t end, int64_t align, Fn&& fn) {
    using F = std::remove_reference_t<Fn>;
    Run(begin, end, align, &fn, [](void* ctx, int64_t b, int64_t e, int t) { (*static_cast<F*>(ctx))(b, e, t); });
  }

 private:
  using Invoker = void (*)(void* ctx, int64_t begin, int64_t end, int thread_index);

  void Run(int64_t begin, int64_t end, int64_t align, void* ctx, Invoker invoke);
  void WorkerLoop(int worker_index);
  // The range of thread t in the current job.
  void RangeOf(int t, int64_t* b, int64_t* e) const;

  const int num_threads_;
  std::vector<std::thread> workers_;

  std::mutex call_mu_;  // serialises Run() callers

  std::mutex mu_;
  std::condition_variable work_cv_;
  std::condition_variable done_cv_;
  // The current job; written under mu_ before generation_ is bumped, read by workers after
  // they observe the new generation under mu_.
  int64_t job_begin_ = 0;
  int64_t job_end_ = 0;
  int64_t job_chunk_ = 0;
  void* job_ctx_ = nullptr;
  Invoker job_invoke_ = nullptr;
  uint64_t generation_ = 0;  // guarded by mu_
  int pending_ = 0;          // guarded by mu_: workers still running the current job
  bool stop_ = false;        // guarded by mu_
};

}  // namespace kimi
