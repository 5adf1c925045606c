// The NUMA topology reader and placement plan against sysfs-like trees in tests/data/numa, and
// the pieces that act on this machine (pinning, binding, the node-first loop).
#include "core/numa_placement.h"

#include <gtest/gtest.h>

#include <atomic>
#include <set>
#include <string>
#include <vector>

#include "core/numa_topology.h"
#include "core/thread_pool.h"

namespace kimi {
namespace {

std::string Fixture(const std::string& name) { return std::string(KIMI_NUMA_TESTDATA_DIR) + "/" + name; }

NumaTopology Read(const std::string& name) {
  auto t = ReadNumaTopology(Fixture(name));
  EXPECT_TRUE(t.ok()) << t.status().ToString();
  return t.ok() ? *t : NumaTopology{};
}

bool Mentions(const NumaPlan& plan, const std::string& text) {
  for (const auto& line : plan.decisions) {
    if (line.find(text) != std::string::npos) return true;
  }
  return false;
}

std::string Decisions(const NumaPlan& plan) {
  std::string out;
  for (const auto& line : plan.decisions) out += line + "\n";
  return out;
}

TEST(NumaTopology, ParsesCpuLists) {
  EXPECT_EQ(*ParseCpuList("0-3,8,10-11\n"), (std::vector<int>{0, 1, 2, 3, 8, 10, 11}));
  EXPECT_EQ(*ParseCpuList("5"), (std::vector<int>{5}));
  EXPECT_TRUE(ParseCpuList("\n")->empty());
  EXPECT_EQ(FormatCpuList({0, 1, 2, 3, 8, 10, 11}), "0-3,8,10-11");
  for (const char* bad : {"4-x", "3-1", "0,,2", "-1", "a", "0-"}) {
    auto r = ParseCpuList(bad);
    ASSERT_FALSE(r.ok()) << bad;
    EXPECT_EQ(r.status().code(), Status::Code::kInvalidArgument);
    EXPECT_NE(r.status().message().find("malformed CPU list"), std::string::npos) << r.status().message();
  }
}

TEST(NumaTopology, ReadsTwoSocketsAndIgnoresOtherEntries) {
  NumaTopology t = Read("two_nodes");
  ASSERT_EQ(t.nodes.size(), 2u);  // node/online, node/has_memory and node/power are not nodes
  EXPECT_TRUE(t.from_sysfs);
  EXPECT_EQ(t.nodes[0].id, 0);
  EXPECT_EQ(FormatCpuList(t.nodes[0].cpus), "0-7,16-23");
  EXPECT_EQ(FormatCpuList(t.nodes[1].cpus), "8-15,24-31");
  EXPECT_EQ(t.nodes[1].memory_bytes, 64ull << 30);
}

TEST(NumaTopology, DropsOfflineCpus) {
  NumaTopology t = Read("offline");
  ASSERT_EQ(t.nodes.size(), 2u);
  EXPECT_EQ(FormatCpuList(t.nodes[0].cpus), "0-2");
  EXPECT_EQ(FormatCpuList(t.nodes[1].cpus), "4-5");
}

TEST(NumaTopology, MalformedCpuListIsAClearError) {
  auto t = ReadNumaTopology(Fixture("malformed"));
  ASSERT_FALSE(t.ok());
  EXPECT_EQ(t.status().code(), Status::Code::kInvalidArgument);
  EXPECT_NE(t.status().message().find("node1/cpulist"), std::string::npos) << t.status().message();
  EXPECT_NE(t.status().message().find("'4-x'"), std::string::npos) << t.status().message();
}

TEST(NumaTopology, NoNodeDirectoryMeansOneNodeOfEveryOnlineCpu) {
  NumaTopology t = Read("no_numa");
  EXPECT_FALSE(t.from_sysfs);
  ASSERT_EQ(t.nodes.size(), 1u);
  EXPECT_EQ(FormatCpuList(t.nodes[0].cpus), "0-3");
  const NumaPlan plan = PlanNumaPlacement(t, 4, 64);
  EXPECT_FALSE(plan.active());
  EXPECT_TRUE(Mentions(plan, "no NUMA nodes listed")) << Decisions(plan);
}

TEST(NumaPlan, TwoNodesSplitThreadsAndExpertsInHalves) {
  const NumaPlan plan = PlanNumaPlacement(Read("two_nodes"), 8, 896);
  ASSERT_TRUE(plan.active()) << Decisions(plan);
  ASSERT_EQ(plan.groups.size(), 2u);
  EXPECT_EQ(plan.groups[0].first_thread, 0);
  EXPECT_EQ(plan.groups[0].threads, 4);
  EXPECT_EQ(plan.groups[1].first_thread, 4);
  EXPECT_EQ(plan.groups[1].threads, 4);
  EXPECT_EQ(FormatCpuList(plan.groups[1].cpus), "8-15,24-31");
  int64_t b = 0, e = 0;
  plan.ExpertRange(0, &b, &e);
  EXPECT_EQ(b, 0);
  EXPECT_EQ(e, 448);
  plan.ExpertRange(1, &b, &e);
  EXPECT_EQ(b, 448);
  EXPECT_EQ(e, 896);
  EXPECT_EQ(plan.GroupOfExpert(447), 0);
  EXPECT_EQ(plan.GroupOfExpert(448), 1);
  EXPECT_EQ(plan.GroupOfThread(3), 0);
  EXPECT_EQ(plan.GroupOfThread(4), 1);
  // One line per node, saying which threads and experts it took.
  EXPECT_EQ(plan.decisions.size(), 2u) << Decisions(plan);
  EXPECT_TRUE(Mentions(plan, "node 1 (CPUs 8-15,24-31, 64.0 GiB): threads 4-7 pinned to its CPUs")) << Decisions(plan);
  EXPECT_TRUE(Mentions(plan, "experts 448-895 of every MoE layer")) << Decisions(plan);
}

TEST(NumaPlan, FourNodesShareThreadsByCpus) {
  // Nodes of 4, 4, 4 and 8 CPUs; 10 threads: one each, the 6 spare in proportion (1.2 each for
  // the small nodes, 2.4 for the large one), largest remainders first.
  const NumaPlan plan = PlanNumaPlacement(Read("four_nodes"), 10, 64);
  ASSERT_EQ(plan.groups.size(), 4u) << Decisions(plan);
  std::vector<int> threads;
  int next = 0;
  for (const auto& g : plan.groups) {
    threads.push_back(g.threads);
    EXPECT_EQ(g.first_thread, next);
    next += g.threads;
  }
  EXPECT_EQ(next, 10);
  EXPECT_EQ(threads, (std::vector<int>{2, 2, 2, 4}));
  // Every expert has exactly one group, and the groups' ranges tile [0, 64).
  int64_t expected_begin = 0;
  for (int g = 0; g < 4; ++g) {
    int64_t b = 0, e = 0;
    plan.ExpertRange(g, &b, &e);
    EXPECT_EQ(b, expected_begin);
    for (int64_t x = b; x < e; ++x) EXPECT_EQ(plan.GroupOfExpert(x), g);
    expected_begin = e;
  }
  EXPECT_EQ(expected_begin, 64);
}

TEST(NumaPlan, MemorylessAndCpulessNodesTakeNothing) {
  const NumaPlan plan = PlanNumaPlacement(Read("memoryless"), 4, 16);
  ASSERT_EQ(plan.groups.size(), 2u) << Decisions(plan);
  EXPECT_EQ(plan.groups[0].node, 0);
  EXPECT_EQ(plan.groups[1].node, 2);
  EXPECT_TRUE(Mentions(plan, "node 1 (CPUs 4-7, 0.0 GiB): no memory")) << Decisions(plan);
  EXPECT_TRUE(Mentions(plan, "node 3 (CPUs none, 16.0 GiB): no online CPU")) << Decisions(plan);
}

TEST(NumaPlan, OneNodeOrOneThreadPlacesNothing) {
  const NumaPlan one = PlanNumaPlacement(Read("one_node"), 2, 64);
  EXPECT_FALSE(one.active());
  ASSERT_EQ(one.decisions.size(), 1u);
  EXPECT_TRUE(Mentions(one, "one node with memory and CPUs, node 0 (CPUs 0-1, 23.0 GiB)")) << Decisions(one);
  const NumaPlan single = PlanNumaPlacement(Read("two_nodes"), 1, 64);
  EXPECT_FALSE(single.active());
  EXPECT_TRUE(Mentions(single, "2 nodes but 1 thread")) << Decisions(single);
}

TEST(NumaPlan, FewerThreadsThanNodesUseTheFirstNodes) {
  const NumaPlan plan = PlanNumaPlacement(Read("four_nodes"), 2, 64);
  ASSERT_EQ(plan.groups.size(), 2u) << Decisions(plan);
  EXPECT_EQ(plan.groups[1].node, 1);
  EXPECT_TRUE(Mentions(plan, "node 3 (CPUs 12-19, 32.0 GiB): fewer threads (2) than nodes")) << Decisions(plan);
}

// The loop runs every item once, and each thread starts on its own group's items.
TEST(NumaPlan, ParallelForByNodeRunsEveryItemOnce) {
  const NumaPlan plan = PlanNumaPlacement(Read("two_nodes"), 2, 16);
  ASSERT_TRUE(plan.active());
  ThreadPool pool(2);
  std::vector<std::atomic<int>> runs(16);
  std::vector<int> first_item_group(2, -1);
  std::vector<std::atomic<bool>> started(2);
  ParallelForByNode(&pool, &plan, 16, [&](int64_t i) { return plan.GroupOfExpert(i); },
                    [&](int64_t i, int t) {
                      runs[size_t(i)].fetch_add(1);
                      if (!started[size_t(t)].exchange(true)) first_item_group[size_t(t)] = plan.GroupOfExpert(i);
                    });
  for (const auto& r : runs) EXPECT_EQ(r.load(), 1);
  // A thread that took any item began with its own group's (the other thread may have finished
  // both groups before this one woke).
  for (int t = 0; t < 2; ++t) {
    if (first_item_group[size_t(t)] >= 0) {
      EXPECT_EQ(first_item_group[size_t(t)], plan.GroupOfThread(t)) << t;
    }
  }
  // Without a plan: the same items, once each.
  std::vector<std::atomic<int>> plain(16);
  ParallelForByNode(&pool, nullptr, 16, [](int64_t) { return 0; }, [&](int64_t i, int) { plain[size_t(i)]++; });
  for (const auto& r : plain) EXPECT_EQ(r.load(), 1);
}

// Pinning the calling thread takes effect where the machine lets this process use two CPUs.
TEST(NumaPlacement, PinsTheCallingThread) {
  auto allowed = CurrentThreadCpus();
  ASSERT_TRUE(allowed.ok()) << allowed.status().ToString();
  if (allowed->size() < 2) GTEST_SKIP() << "this process may run on one CPU only: nothing to pin to";
  std::vector<int> before;
  ASSERT_TRUE(PinCurrentThread({allowed->back()}, &before).ok());
  EXPECT_EQ(before, *allowed);
  EXPECT_EQ(*CurrentThreadCpus(), std::vector<int>{allowed->back()});
  ASSERT_TRUE(PinCurrentThread(before).ok());
  EXPECT_EQ(*CurrentThreadCpus(), *allowed);
  EXPECT_FALSE(PinCurrentThread({}).ok());
}

// Binding memory to node 0 works on every Linux machine (node 0 always exists); a node that
// does not exist is refused with the node named.
TEST(NumaPlacement, BindsPagesToANode) {
  std::vector<uint8_t> buffer(1 << 20, 1);
  TouchPages(buffer.data(), buffer.size());
  Status s = BindMemoryToNode(buffer.data(), buffer.size(), 0);
  if (!s.ok() && s.message().find("Function not implemented") != std::string::npos) {
    GTEST_SKIP() << "mbind is not available here: " << s.message();
  }
  EXPECT_TRUE(s.ok()) << s.ToString();
  Status missing = BindMemoryToNode(buffer.data(), buffer.size(), 1000);
  EXPECT_FALSE(missing.ok());
  EXPECT_NE(missing.message().find("NUMA node 1000"), std::string::npos) << missing.message();
  EXPECT_TRUE(BindMemoryToNode(buffer.data(), 100, 0).ok());  // less than a page: nothing to do
}

}  // namespace
}  // namespace kimi

namespace kimi {
namespace {

// The plan's CPU masks reach the pool's workers. Two CPUs stand in for two nodes' CPU sets
// (pinning needs CPUs, not nodes), so this runs wherever the process may use two CPUs.
TEST(NumaPlacement, PinsPoolWorkersToTheirGroupsCpus) {
  auto allowed = CurrentThreadCpus();
  ASSERT_TRUE(allowed.ok()) << allowed.status().ToString();
  if (allowed->size() < 2) GTEST_SKIP() << "this process may run on one CPU only: no second CPU set to pin to";
  NumaTopology topology;
  topology.nodes = {{0, {allowed->front()}, 1ull << 30}, {1, {allowed->back()}, 1ull << 30}};
  const NumaPlan plan = PlanNumaPlacement(topology, 4, 8);
  ASSERT_TRUE(plan.active());
  ThreadPool pool(4);
  ASSERT_TRUE(PinPoolWorkers(plan, pool).ok());
  std::vector<std::vector<int>> seen(4);
  pool.ParallelFor(0, 4, 1, [&](int64_t, int64_t, int t) { seen[size_t(t)] = *CurrentThreadCpus(); });
  EXPECT_EQ(seen[0], *allowed) << "the caller keeps its own CPUs";
  for (int t = 1; t < 4; ++t) {
    EXPECT_EQ(seen[size_t(t)], plan.groups[size_t(plan.GroupOfThread(t))].cpus) << "worker " << t;
  }
  EXPECT_EQ(seen[1], std::vector<int>{allowed->front()});
  EXPECT_EQ(seen[3], std::vector<int>{allowed->back()});
}

}  // namespace
}  // namespace kimi
