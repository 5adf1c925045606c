#include "kimi/kimi_data.h"

#include <cstdlib>

namespace kimi {

std::string KimiDataDir() {
  if (const char* env = std::getenv("KIMI_DATA_DIR"); env != nullptr && *env != '\0') return env;
  return KIMI_DATA_DIR_DEFAULT;
}

}  // namespace kimi
