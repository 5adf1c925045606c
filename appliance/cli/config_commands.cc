// kimictl config check / config defaults: the daemon's own configuration loader and
// checks, run without starting anything.
#include <nlohmann/json.hpp>

#include "audit/audit_text.h"
#include "cli/commands.h"
#include "config/config.h"

namespace kimi::cli {

int RunConfigCheck(const std::vector<std::string>& args, const Io& io) {
  std::string path = config::kDefaultConfigPath;
  const OptionSpec specs[] = {{"--config", &path}};
  if (!ParseOptions("config check", args, specs, io)) return 2;
  Result<config::AppConfig> loaded = config::LoadConfigFile(path, {});
  if (!loaded.ok()) {
    std::fprintf(io.err, "kimictl config check: %s\n", audit::ShownText(loaded.status().message()).c_str());
    return 1;
  }
  std::fprintf(io.out, "%s: ok (listen %s, data_dir %s)\n", path.c_str(), loaded->server.listen.c_str(),
               loaded->storage.data_dir.c_str());
  return 0;
}

int RunConfigDefaults(const std::vector<std::string>& args, const Io& io) {
  if (!ParseOptions("config defaults", args, {}, io)) return 2;
  std::string text = config::AppConfigSchema().ToJson(config::AppConfig{}).dump(2);
  std::fprintf(io.out, "%s\n", text.c_str());
  return 0;
}

}  // namespace kimi::cli
