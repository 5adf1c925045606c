#include "core/numa_placement.h"

#include <linux/mempolicy.h>
#include <pthread.h>
#include <sched.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>

namespace kimi {
namespace {

std::string Gib(uint64_t bytes) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f GiB", double(bytes) / double(1ull << 30));
  return buf;
}

std::string NodeText(const NumaNode& n) {
  return "node " + std::to_string(n.id) + " (CPUs " + (n.cpus.empty() ? "none" : FormatCpuList(n.cpus)) + ", " +
         Gib(n.memory_bytes) + ")";
}

int64_t ExpertsPerThread(int64_t num_experts, int threads) { return (num_experts + threads - 1) / threads; }

size_t PageSize() { return size_t(sysconf(_SC_PAGESIZE)); }

}  // namespace

int NumaPlan::GroupOfThread(int t) const {
  for (size_t g = 0; g + 1 < groups.size(); ++g) {
    if (t < groups[g + 1].first_thread) return int(g);
  }
  return int(groups.size()) - 1;
}

void NumaPlan::ExpertRange(int g, int64_t* begin, int64_t* end) const {
  const Group& group = groups[size_t(g)];
  int64_t unused = 0;
  ThreadExpertRange(group.first_thread, begin, &unused);
  ThreadExpertRange(group.first_thread + group.threads - 1, &unused, end);
}

void NumaPlan::ThreadExpertRange(int t, int64_t* begin, int64_t* end) const {
  const int64_t per = std::max<int64_t>(1, ExpertsPerThread(num_experts, total_threads));
  *begin = std::min(num_experts, per * t);
  *end = std::min(num_experts, per * (t + 1));
}

int NumaPlan::GroupOfExpert(int64_t expert) const {
  return GroupOfThread(int(expert / std::max<int64_t>(1, ExpertsPerThread(num_experts, total_threads))));
}

NumaPlan PlanNumaPlacement(const NumaTopology& topology, int threads, int64_t num_experts) {
  NumaPlan plan;
  plan.total_threads = threads;
  plan.num_experts = num_experts;
  auto say = [&](std::string line) { plan.decisions.push_back("NUMA: " + std::move(line)); };
  if (!topology.from_sysfs) {
    say("no NUMA nodes listed by the kernel: one node assumed, threads and experts left where the kernel puts them");
    return plan;
  }

  std::vector<const NumaNode*> usable;
  for (const NumaNode& n : topology.nodes) {
    if (!n.cpus.empty() && n.memory_bytes > 0) {
      usable.push_back(&n);
    } else if (n.memory_bytes > 0) {
      say(NodeText(n) + ": no online CPU, so no threads and no experts (every read of them would be remote)");
    } else if (!n.cpus.empty()) {
      say(NodeText(n) + ": no memory, so no threads and no experts (its CPUs would read every expert remotely)");
    } else {
      say(NodeText(n) + ": neither online CPUs nor memory: ignored");
    }
  }
  if (usable.size() <= 1) {
    say(usable.empty() ? std::string("no node has both memory and online CPUs: nothing placed")
                       : "one node with memory and CPUs, " + NodeText(*usable[0]) +
                             ": threads and experts left where the kernel puts them");
    return plan;
  }
  if (threads < 2) {
    say(std::to_string(usable.size()) + " nodes but " + std::to_string(threads) +
        " thread: nothing to spread, threads and experts left where the kernel puts them");
    return plan;
  }
  if (size_t(threads) < usable.size()) {
    for (size_t i = size_t(threads); i < usable.size(); ++i) {
      say(NodeText(*usable[i]) + ": fewer threads (" + std::to_string(threads) + ") than nodes: no threads, no experts");
    }
    usable.resize(size_t(threads));
  }

  // One thread per node, the rest in proportion to the nodes' CPUs (largest remainder first).
  size_t total_cpus = 0;
  for (const NumaNode* n : usable) total_cpus += n->cpus.size();
  const int spare = threads - int(usable.size());
  std::vector<int> share(usable.size(), 1);
  std::vector<std::pair<double, size_t>> remainder;
  int given = 0;
  for (size_t i = 0; i < usable.size(); ++i) {
    const double exact = double(spare) * double(usable[i]->cpus.size()) / double(total_cpus);
    share[i] += int(exact);
    given += int(exact);
    remainder.push_back({exact - double(int(exact)), i});
  }
  std::stable_sort(remainder.begin(), remainder.end(), [](const auto& a, const auto& b) { return a.first > b.first; });
  for (size_t k = 0; given < spare; ++k, ++given) ++share[remainder[k % remainder.size()].second];

  int first = 0;
  for (size_t i = 0; i < usable.size(); ++i) {
    plan.groups.push_back({usable[i]->id, usable[i]->cpus, first, share[i]});
    first += share[i];
  }
  for (size_t g = 0; g < plan.groups.size(); ++g) {
    const NumaPlan::Group& group = plan.groups[g];
    std::string line = NodeText(*usable[g]) + ": threads " + std::to_string(group.first_thread) + "-" +
                       std::to_string(group.first_thread + group.threads - 1) + " pinned to its CPUs";
    if (size_t(group.threads) > group.cpus.size()) line += " (more threads than CPUs)";
    if (group.first_thread == 0) line += " (thread 0 is the caller: pinned only while the weights are placed)";
    int64_t e0 = 0, e1 = 0;
    plan.ExpertRange(int(g), &e0, &e1);
    line += e1 > e0 ? "; experts " + std::to_string(e0) + "-" + std::to_string(e1 - 1) +
                          " of every MoE layer bound to its memory and computed there first"
                    : "; no experts";
    say(line);
  }
  return plan;
}

Status PinCurrentThread(const std::vector<int>& cpus, std::vector<int>* previous) {
  if (cpus.empty()) return Status::InvalidArgument("PinCurrentThread: no CPUs given");
  if (previous != nullptr) {
    KIMI_ASSIGN_OR_RETURN(*previous, CurrentThreadCpus());
  }
  const int max_cpu = *std::max_element(cpus.begin(), cpus.end());
  cpu_set_t* set = CPU_ALLOC(max_cpu + 1);
  if (set == nullptr) return Status::Internal("PinCurrentThread: CPU_ALLOC failed");
  const size_t size = CPU_ALLOC_SIZE(max_cpu + 1);
  CPU_ZERO_S(size, set);
  for (int c : cpus) CPU_SET_S(c, size, set);
  const int err = pthread_setaffinity_np(pthread_self(), size, set);
  CPU_FREE(set);
  if (err != 0) {
    return Status::Internal("pinning a thread to CPUs " + FormatCpuList(cpus) + ": " + std::strerror(err));
  }
  return Status::OK();
}

Result<std::vector<int>> CurrentThreadCpus() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (int err = pthread_getaffinity_np(pthread_self(), sizeof set, &set); err != 0) {
    return Status::Internal(std::string("reading a thread's CPUs: ") + std::strerror(err));
  }
  std::vector<int> cpus;
  for (int c = 0; c < CPU_SETSIZE; ++c) {
    if (CPU_ISSET(c, &set)) cpus.push_back(c);
  }
  return cpus;
}

Status PinPoolWorkers(const NumaPlan& plan, ThreadPool& pool) {
  std::vector<Status> results(size_t(pool.num_threads()));
  // One range per thread: ParallelFor's static split of [0, threads) gives thread t [t, t + 1).
  pool.ParallelFor(0, pool.num_threads(), 1, [&](int64_t, int64_t, int t) {
    if (t > 0) results[size_t(t)] = PinCurrentThread(plan.groups[size_t(plan.GroupOfThread(t))].cpus);
  });
  for (const Status& s : results) KIMI_RETURN_IF_ERROR(s);
  return Status::OK();
}

Status BindMemoryToNode(const void* data, size_t bytes, int node) {
  const size_t page = PageSize();
  const uintptr_t begin = (reinterpret_cast<uintptr_t>(data) + page - 1) / page * page;
  const uintptr_t end = (reinterpret_cast<uintptr_t>(data) + bytes) / page * page;
  if (end <= begin) return Status::OK();
  constexpr int kBits = 8 * sizeof(unsigned long);
  std::vector<unsigned long> mask(size_t(node / kBits + 1), 0);
  mask[size_t(node / kBits)] |= 1ul << (node % kBits);
  // The kernel reads maxnode − 1 bits.
  const unsigned long maxnode = mask.size() * kBits + 1;
  if (syscall(SYS_mbind, begin, end - begin, MPOL_BIND, mask.data(), maxnode, MPOL_MF_MOVE) != 0) {
    return Status::Internal("binding " + std::to_string(end - begin) + " bytes to NUMA node " + std::to_string(node) +
                            ": " + std::strerror(errno));
  }
  return Status::OK();
}

void TouchPages(const void* data, size_t bytes) {
  const size_t page = PageSize();
  const volatile uint8_t* p = static_cast<const volatile uint8_t*>(data);
  uint8_t sum = 0;
  for (size_t off = 0; off < bytes; off += page) sum = uint8_t(sum + p[off]);
  if (bytes > 0) sum = uint8_t(sum + p[bytes - 1]);
  static_cast<void>(sum);
}

}  // namespace kimi
