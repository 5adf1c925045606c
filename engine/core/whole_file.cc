#include "core/whole_file.h"

#include "kimi/durable_file.h"

#include <fstream>
#include <sstream>

namespace kimi {

Result<std::string> ReadWholeFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return Status::NotFound("cannot open " + path);
  std::ostringstream contents;
  contents << in.rdbuf();
  if (in.bad()) return Status::IOError("cannot read " + path);
  return contents.str();
}

Status WriteWholeFile(const std::string& path, std::string_view contents) { return WriteFileAtomically(path, contents); }

}  // namespace kimi
