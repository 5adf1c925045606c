// Whole-file reads and writes: the tokenizer's files (rank files, configs, training text), a
// model directory's config and index when a model is rewritten.
//
// Thread safety: no shared state; concurrent calls on distinct paths are independent.
#pragma once

#include <string>
#include <string_view>

#include "kimi/status.h"

namespace kimi {

// The file's bytes, read through one descriptor (kimi/regular_file.h; a link is followed). Errors:
// NotFound when nothing is there; InvalidArgument when it is not a regular file (a FIFO is
// refused, not waited on); IOError otherwise.
Result<std::string> ReadWholeFile(const std::string& path);

// Replaces the file's contents, whole or not at all (kimi/durable_file.h), mode 0666 before the
// umask. Errors: IOError.
Status WriteWholeFile(const std::string& path, std::string_view contents);

}  // namespace kimi
