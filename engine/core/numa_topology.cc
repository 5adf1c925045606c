#include "core/numa_topology.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <thread>

namespace kimi {
namespace {

namespace fs = std::filesystem;

// Far above any real CPU number; stops a corrupt range from allocating gigabytes.
constexpr int kMaxCpu = 1 << 20;

std::string_view Trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

bool ParseInt(std::string_view s, int* out) {
  if (s.empty()) return false;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), *out);
  return ec == std::errc() && end == s.data() + s.size() && *out >= 0 && *out < kMaxCpu;
}

Result<std::string> ReadText(const fs::path& path) {
  std::ifstream in(path);
  if (!in) return Status::IOError(path.string() + ": cannot read");
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// "Node 0 MemTotal:       32768000 kB" → bytes.
Result<uint64_t> MemTotalBytes(const fs::path& path) {
  KIMI_ASSIGN_OR_RETURN(std::string text, ReadText(path));
  std::istringstream lines(text);
  std::string line;
  while (std::getline(lines, line)) {
    const size_t key = line.find("MemTotal:");
    if (key == std::string::npos) continue;
    std::istringstream fields(line.substr(key + 9));
    uint64_t kb = 0;
    std::string unit;
    if (!(fields >> kb >> unit) || unit != "kB") {
      return Status::InvalidArgument(path.string() + ": malformed MemTotal line '" + line + "'");
    }
    return kb * 1024;
  }
  return Status::InvalidArgument(path.string() + ": no MemTotal line");
}

Result<std::vector<int>> ReadCpuList(const fs::path& path) {
  KIMI_ASSIGN_OR_RETURN(std::string text, ReadText(path));
  auto cpus = ParseCpuList(text);
  if (!cpus.ok()) return Status::InvalidArgument(path.string() + ": " + cpus.status().message());
  return cpus;
}

}  // namespace

Result<std::vector<int>> ParseCpuList(std::string_view text) {
  std::set<int> cpus;
  text = Trim(text);
  if (text.empty()) return std::vector<int>{};
  while (true) {
    const size_t comma = text.find(',');
    const std::string_view piece = Trim(text.substr(0, comma));
    const size_t dash = piece.find('-');
    int first = 0, last = 0;
    const bool ok = dash == std::string_view::npos
                        ? ParseInt(piece, &first) && ParseInt(piece, &last)
                        : ParseInt(piece.substr(0, dash), &first) && ParseInt(piece.substr(dash + 1), &last);
    if (!ok || last < first) {
      return Status::InvalidArgument("malformed CPU list: '" + std::string(piece) + "' in '" + std::string(text) +
                                     "' (expected numbers and ranges like 0-3,8)");
    }
    for (int c = first; c <= last; ++c) cpus.insert(c);
    if (comma == std::string_view::npos) break;
    text.remove_prefix(comma + 1);
  }
  return std::vector<int>(cpus.begin(), cpus.end());
}

std::string FormatCpuList(const std::vector<int>& cpus) {
  std::string out;
  for (size_t i = 0; i < cpus.size();) {
    size_t j = i;
    while (j + 1 < cpus.size() && cpus[j + 1] == cpus[j] + 1) ++j;
    if (!out.empty()) out += ',';
    out += std::to_string(cpus[i]);
    if (j > i) out += '-' + std::to_string(cpus[j]);
    i = j + 1;
  }
  return out;
}

Result<NumaTopology> ReadNumaTopology(const std::string& root) {
  const fs::path node_root = fs::path(root) / "node", online_path = fs::path(root) / "cpu" / "online";
  std::error_code ec;
  std::vector<int> online;
  const bool have_online = fs::exists(online_path, ec);
  if (have_online) {
    KIMI_ASSIGN_OR_RETURN(online, ReadCpuList(online_path));
  }

  NumaTopology topo;
  if (fs::is_directory(node_root, ec)) {
    for (const auto& entry : fs::directory_iterator(node_root, ec)) {
      const std::string name = entry.path().filename().string();
      int id = 0;
      if (name.rfind("node", 0) != 0 || !ParseInt(std::string_view(name).substr(4), &id)) continue;
      NumaNode node;
      node.id = id;
      KIMI_ASSIGN_OR_RETURN(node.cpus, ReadCpuList(entry.path() / "cpulist"));
      if (have_online) {
        std::erase_if(node.cpus, [&](int c) { return !std::binary_search(online.begin(), online.end(), c); });
      }
      KIMI_ASSIGN_OR_RETURN(node.memory_bytes, MemTotalBytes(entry.path() / "meminfo"));
      topo.nodes.push_back(std::move(node));
    }
    if (ec) return Status::IOError(node_root.string() + ": " + ec.message());
  }
  if (topo.nodes.empty()) {
    // No NUMA information: one node with every online CPU.
    topo.from_sysfs = false;
    NumaNode all;
    if (have_online) {
      all.cpus = online;
    } else {
      for (unsigned c = 0; c < std::max(1u, std::thread::hardware_concurrency()); ++c) all.cpus.push_back(int(c));
    }
    topo.nodes.push_back(std::move(all));
  }
  std::sort(topo.nodes.begin(), topo.nodes.end(), [](const NumaNode& a, const NumaNode& b) { return a.id < b.id; });
  return topo;
}

}  // namespace kimi
