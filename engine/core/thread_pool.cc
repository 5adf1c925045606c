#include "core/thread_pool.h"

#include <algorithm>

namespace kimi {

ThreadPool::ThreadPool(int num_threads)
    : num_threads_(num_threads > 0 ? num_threads
                                   : std::max(1, static_cast<int>(std::thread::hardware_concurrency()))) {
  workers_.reserve(num_threads_ - 1);
  for (int w = 1; w < num_threads_; ++w) workers_.emplace_back([this, w] { WorkerLoop(w); });
}

ThreadPool::~ThreadPool() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
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

void ThreadPool::Run(int64_t begin, int64_t end, int64_t align, void* ctx, Invoker invoke) {
  if (end <= begin) return;
  if (align < 1) align = 1;
  int64_t n = end - begin;
  int64_t units = (n + align - 1) / align;
  int64_t per_thread_units = (units + num_threads_ - 1) / num_threads_;
  int64_t chunk = per_thread_units * align;
  if (num_threads_ == 1 || chunk >= n) {
    invoke(ctx, begin, end, 0);
    return;
  }
  std::lock_guard<std::mutex> call_lock(call_mu_);
  {
    std::lock_guard<std::mutex> lock(mu_);
    job_begin_ = begin;
    job_end_ = end;
    job_chunk_ = chunk;
    job_ctx_ = ctx;
    job_invoke_ = invoke;
    pending_ = num_threads_ - 1;
    ++generation_;
  }
  work_cv_.notify_all();
  invoke(ctx, begin, std::min(begin + chunk, end), 0);
  std::unique_lock<std::mutex> lock(mu_);
  done_cv_.wait(lock, [this] { return pending_ == 0; });
}

void ThreadPool::WorkerLoop(int worker_index) {
  uint64_t seen = 0;
  for (;;) {
    int64_t b, e;
    void* ctx;
    Invoker invoke;
    {
      std::unique_lock<std::mutex> lock(mu_);
      work_cv_.wait(lock, [&] { return stop_ || generation_ != seen; });
      if (stop_) return;
      seen = generation_;
      RangeOf(worker_index, &b, &e);
      ctx = job_ctx_;
      invoke = job_invoke_;
    }
    if (b < e) invoke(ctx, b, e, worker_index);
    bool last;
    {
      std::lock_guard<std::mutex> lock(mu_);
      last = (--pending_ == 0);
    }
    if (last) done_cv_.notify_one();
  }
}

}  // namespace kimi
