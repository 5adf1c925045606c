// kimi-appliance: the daemon. Parses the command line, loads the configuration, opens the
// daemon (daemon/daemon.h) and serves HTTP until SIGTERM or SIGINT, then drains in-flight
// requests, closes the database and exits 0. A second signal during the drain exits at once
// with status 1; so does a failed start, after one readable line saying why.
#include <cstdio>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "build_info.h"
#include "config/config.h"
#include "daemon/daemon.h"

namespace {

constexpr const char* kUsage =
    "usage: kimi-appliance [--config PATH] [--listen HOST:PORT] [--data-dir DIR]\n"
    "                      [--log-level debug|info|warn|error] [--log-format auto|json|text]\n"
    "                      [--console-assets DIR]\n"
    "                      [--version] [--help]\n"
    "Serves the appliance's HTTP API. The configuration file (default /etc/kimi-appliance/appliance.json)\n"
    "is described in docs/configuration.md; flags override its keys.\n";

// Startup failures before logging is set up are one plain line on stderr.
int Fail(const std::string& message, int code = 1) {
  std::fprintf(stderr, "kimi-appliance: %s\n", message.c_str());
  return code;
}

using Flags = kimi::daemon::DaemonArgs;

// Returns -1 to continue, otherwise the exit code.
int ParseFlags(int argc, char** argv, Flags* flags) {
  struct Known {
    const char* flag;
    std::vector<std::string> keys;
  };
  const Known known[] = {
      {"--listen", {"server", "listen"}},
      {"--data-dir", {"storage", "data_dir"}},
      {"--log-level", {"log", "level"}},
      {"--log-format", {"log", "format"}},
      {"--console-assets", {"console", "assets_dir"}},
  };
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    std::string value;
    bool has_value = false;
    if (size_t eq = arg.find('='); arg.rfind("--", 0) == 0 && eq != std::string::npos) {
      value = arg.substr(eq + 1);
      arg = arg.substr(0, eq);
      has_value = true;
    }
    if (arg == "--help" || arg == "-h") {
      std::fputs(kUsage, stdout);
      return 0;
    }
    if (arg == "--version") {
      std::printf("kimi-appliance %s\n", KIMI_APPLIANCE_VERSION);
      return 0;
    }
    auto take_value = [&]() -> bool {
      if (has_value) return true;
      if (i + 1 >= argc) return false;
      value = argv[++i];
      return true;
    };
    if (arg == "--config") {
      if (!take_value()) return Fail("--config needs a value (see --help)", 2);
      flags->config_path = value;
      continue;
    }
    bool matched = false;
    for (const Known& k : known) {
      if (arg != k.flag) continue;
      if (!take_value()) return Fail(arg + " needs a value (see --help)", 2);
      flags->overrides.push_back({arg, k.keys, value});
      matched = true;
    }
    if (!matched) return Fail("unknown argument " + arg + " (see --help)", 2);
  }
  return -1;
}

}  // namespace

int main(int argc, char** argv) {
  Flags flags;
  if (int code = ParseFlags(argc, argv, &flags); code >= 0) return code;

  kimi::Result<kimi::config::AppConfig> loaded = kimi::config::LoadConfigFile(flags.config_path, flags.overrides);
  if (!loaded.ok()) return Fail(loaded.status().message());

  // A step that fails has logged why.
  kimi::Result<std::unique_ptr<kimi::daemon::Daemon>> daemon =
      kimi::daemon::Daemon::Open(std::move(loaded).value(), std::move(flags));
  if (!daemon.ok()) return 1;
  return (*daemon)->Run().ok() ? 0 : 1;
}
