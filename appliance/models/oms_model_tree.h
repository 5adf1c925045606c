// Lists the files of a model on disk the way OMS serialization sees them: every regular file
// under the model directory (or the model file itself, named "."), with its '/'-separated
// path relative to the model root, minus ignored paths; in canonical resource order.
//
// Refused, with the path named: a symbolic link when the signature does not allow them, a
// symlink that resolves outside the model directory, a symlinked directory, and anything
// that is neither a file nor a directory (fifo, socket, device).
//
// Thread safety: pure function over the file system.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "kimi/regular_file.h"
#include "kimi/status.h"

namespace kimi::models {

struct ModelFile {
  std::string name;      // relative to the model root; "." for a single-file model
  std::string abs_path;  // what to open (a symlink's resolved target when links are allowed)
  uint64_t size = 0;
  // The file abs_path named when it was listed: what is hashed must be this very file, and what
  // the engine later opens too (a name may be renamed over in between).
  FileIdentity identity;
};

struct ModelTreeOptions {
  // Relative to the model root; a directory entry ignores everything below it.
  std::vector<std::string> ignore_paths;
  bool allow_symlinks = false;
};

Result<std::vector<ModelFile>> ListModelFiles(const std::string& model_path, const ModelTreeOptions& options);

// True when `name` is one of `ignore_paths` or lies below one of them.
bool IsIgnoredPath(const std::string& name, const std::vector<std::string>& ignore_paths);

}  // namespace kimi::models
