// kimictl version.
#include "build_info.h"
#include "cli/commands.h"

namespace kimi::cli {

int RunVersion(const std::vector<std::string>& args, const Io& io) {
  if (!ParseOptions("version", args, {}, io)) return 2;
  std::fprintf(io.out, "kimictl %s (%s, %s)\n", KIMI_APPLIANCE_VERSION, KIMI_APPLIANCE_BUILD_TYPE,
               KIMI_APPLIANCE_COMPILER);
  return 0;
}

}  // namespace kimi::cli
