#include "tools/flags.h"

#include <charconv>
#include <cstdio>
#include <utility>

namespace kimi::tools {

Result<Flags> Flags::Parse(const std::vector<std::string>& args, const std::vector<FlagSpec>& specs) {
  Flags flags;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& arg = args[i];
    if (arg.rfind("--", 0) != 0 || arg.size() == 2) {
      return Status::InvalidArgument("unexpected argument '" + arg + "'");
    }
    std::string name = arg.substr(2);
    std::optional<std::string> inline_value;
    if (auto eq = name.find('='); eq != std::string::npos) {
      inline_value = name.substr(eq + 1);
      name = name.substr(0, eq);
    }
    const FlagSpec* spec = nullptr;
    for (const auto& s : specs) {
      if (s.name == name) spec = &s;
    }
    if (spec == nullptr) return Status::InvalidArgument("unknown flag --" + name);
    if (spec->takes_value) {
      if (inline_value) {
        flags.values_[name] = *inline_value;
      } else if (i + 1 < args.size()) {
        flags.values_[name] = args[++i];
      } else {
        return Status::InvalidArgument("--" + name + " needs a value");
      }
    } else {
      if (inline_value) return Status::InvalidArgument("--" + name + " takes no value");
      flags.values_[name] = "";
    }
  }
  return flags;
}

std::optional<std::string> Flags::Get(const std::string& name) const {
  auto it = values_.find(name);
  if (it == values_.end()) return std::nullopt;
  return it->second;
}

Result<std::string> Flags::Require(const std::string& name) const {
  auto v = Get(name);
  if (!v || v->empty()) return Status::InvalidArgument("--" + name + " is required");
  return *v;
}

Result<uint64_t> Flags::GetUint(const std::string& name, uint64_t fallback) const {
  auto v = Get(name);
  if (!v) return fallback;
  uint64_t out = 0;
  auto [end, ec] = std::from_chars(v->data(), v->data() + v->size(), out);
  if (ec != std::errc() || end != v->data() + v->size()) {
    return Status::InvalidArgument("--" + name + " expects a non-negative integer, got '" + *v + "'");
  }
  return out;
}

std::string Flags::Usage(const std::vector<FlagSpec>& specs) {
  std::string out;
  for (const auto& s : specs) {
    std::string left = "  --" + s.name;
    out += left;
    out += std::string(left.size() < 16 ? 16 - left.size() : 1, ' ');
    out += s.help + "\n";
  }
  return out;
}

int ReportError(const char* command, const Status& status, int exit_status) {
  std::fprintf(stderr, "kimi-engine %s: %s\n", command, status.ToString().c_str());
  return exit_status;
}

CommandLine ParseCommandLine(const char* command, const Args& args, const std::vector<FlagSpec>& specs,
                             const char* synopsis) {
  CommandLine line;
  Result<Flags> flags = Flags::Parse(args, specs);
  if (!flags.ok()) {
    line.exit_status = ReportError(command, flags.status(), kExitUsage);
  } else if (flags->Has("help")) {
    std::printf("usage: kimi-engine %s\n%s", synopsis, Flags::Usage(specs).c_str());
  } else {
    line.flags = std::move(*flags);
  }
  return line;
}

}  // namespace kimi::tools
