// Whole-file reads and writes: the tokenizer's files (rank files, configs, training text), a
// model directory's config and index when a model is rewritten.
//
// Thread safety: no shared state; concurrent calls on distinct paths are independent.
#pragma once

#include <string>
#include <string_view>

#include "kimi/status.h"

namespace kimi {

// The file's bytes. Errors: NotFound when it cannot be opened, IOError when a read fails.
Result<std::string> ReadWholeFile(const std::string& path);

// Replaces the file's contents, whole or not at all (kimi/durable_file.h). Errors: IOError.
Status WriteWholeFile(const std::string& path, std::string_view contents);

}  // namespace kimi
