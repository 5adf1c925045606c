#include "core/whole_file.h"

#include <limits>

#include "kimi/durable_file.h"
#include "kimi/regular_file.h"

namespace kimi {

Result<std::string> ReadWholeFile(const std::string& path) {
  return ReadRegularFile(path, std::numeric_limits<uint64_t>::max(), FinalLink::kFollow);
}

// 0666 before the umask, as a program's output usually is: a model directory written by
// `kimi-engine` is read by the appliance's own account when it is imported.
Status WriteWholeFile(const std::string& path, std::string_view contents) {
  return WriteFileAtomically(path, contents, 0666);
}

}  // namespace kimi
