// The machine's NUMA nodes as Linux describes them under /sys/devices/system: for each
// node/nodeN, its CPUs (nodeN/cpulist, kept only where cpu/online lists them) and its memory
// (MemTotal in nodeN/meminfo). The root is a parameter so tests can give a topology in files.
//
// Thread safety: pure functions (they read files).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "kimi/status.h"

namespace kimi {

inline constexpr std::string_view kSysDevicesSystem = "/sys/devices/system";

struct NumaNode {
  int id = 0;
  std::vector<int> cpus;      // online CPUs, ascending
  uint64_t memory_bytes = 0;  // 0: a memoryless node
};

struct NumaTopology {
  std::vector<NumaNode> nodes;  // ascending id
  // False when the root had no node directory (a kernel without NUMA support): `nodes` then
  // holds one node 0 with every online CPU and unknown (0) memory.
  bool from_sysfs = true;
};

// "0-3,8,10-11" → {0,1,2,3,8,10,11} (ascending, no repeats). An empty or all-space text is
// the empty list (a node without CPUs). InvalidArgument names the bad piece otherwise.
Result<std::vector<int>> ParseCpuList(std::string_view text);
// {0,1,2,3,8} → "0-3,8".
std::string FormatCpuList(const std::vector<int>& cpus);

// Reads `root`/node/node*/{cpulist,meminfo} and `root`/cpu/online (optional: without it every
// listed CPU counts as online). Errors (InvalidArgument, IOError) name the file.
Result<NumaTopology> ReadNumaTopology(const std::string& root = std::string(kSysDevicesSystem));

}  // namespace kimi
