// Where the routed experts and the threads that compute them live on a machine with several
// NUMA nodes. The plan gives every node that has both memory and online CPUs a contiguous group
// of the pool's threads (in proportion to its CPUs) and, in every MoE layer, the contiguous
// range of experts that a static split of [0, E) over the pool's threads gives that group. The
// forward pass runs each chosen expert on a thread of its node first (ParallelForByNode), and
// Model::Load binds each node's expert bytes to that node and pins the node's threads to its
// CPUs. With one such node the plan is inactive and nothing is placed; every decision is one
// line of `decisions`, which the engine logs at start.
//
// Thread safety: a plan is immutable after PlanNumaPlacement; the functions that act on the
// calling thread or on memory are safe to call from any thread.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "core/numa_topology.h"
#include "core/thread_pool.h"
#include "kimi/status.h"

namespace kimi {

struct NumaPlan {
  struct Group {
    int node = 0;
    std::vector<int> cpus;
    int first_thread = 0;
    int threads = 0;
  };
  std::vector<Group> groups;  // in thread order; empty or one group when inactive
  int total_threads = 0;
  int64_t num_experts = 0;  // routed experts per MoE layer
  std::vector<std::string> decisions;  // one start-up log line each

  bool active() const { return groups.size() > 1; }
  // The group of pool thread t. Precondition: active(), 0 <= t < total_threads.
  int GroupOfThread(int t) const;
  // Experts [begin, end) of every MoE layer that group g holds and computes: the experts a
  // static split of [0, num_experts) over the threads gives to g's threads.
  void ExpertRange(int g, int64_t* begin, int64_t* end) const;
  int GroupOfExpert(int64_t expert) const;
  // Experts [begin, end) that pool thread t places (its part of its group's range).
  void ThreadExpertRange(int t, int64_t* begin, int64_t* end) const;
};

// The plan for a pool of `threads` threads (the caller counts as thread 0) on `topology`, for
// MoE layers of `num_experts` routed experts.
NumaPlan PlanNumaPlacement(const NumaTopology& topology, int threads, int64_t num_experts);

// Pins the calling thread to `cpus` (pthread_setaffinity_np). `previous`, when given, receives
// the mask it had, for RestoreCurrentThreadCpus.
Status PinCurrentThread(const std::vector<int>& cpus, std::vector<int>* previous = nullptr);
// The CPUs the calling thread may run on.
Result<std::vector<int>> CurrentThreadCpus();

// Pins every worker of `pool` (threads 1..n−1) to the CPUs of its group. Thread 0 is whichever
// thread calls the pool, so it is left alone. Precondition: plan.active(), the pool has
// plan.total_threads threads.
Status PinPoolWorkers(const NumaPlan& plan, ThreadPool& pool);

// Binds the whole pages inside [data, data + bytes) to `node` (mbind MPOL_BIND with
// MPOL_MF_MOVE through the raw system call: pages already resident move, pages read later come
// from that node). A range shorter than a page is left alone.
Status BindMemoryToNode(const void* data, size_t bytes, int node);

// Reads one byte of every page of [data, data + bytes), so the page is resident and mapped.
void TouchPages(const void* data, size_t bytes);

// Runs fn(i, thread_index) for every i in [0, n), each once. Without an active plan it is
// pool->ParallelForChunks with chunks of 1 (or a plain loop when pool is null). With one, each
// thread first takes the items whose group_of(i) is its own group, then helps the others.
// Precondition: the pool has plan->total_threads threads.
template <typename GroupOf, typename Fn>
void ParallelForByNode(ThreadPool* pool, const NumaPlan* plan, int64_t n, GroupOf&& group_of, Fn&& fn);

}  // namespace kimi

#include "core/numa_placement_inl.h"
