// Files written whole or not at all. The data goes to a new file beside the target (the same
// directory, so the rename cannot cross file systems), is synced, then renamed over the target
// (or linked to it where an existing file must be kept) and the directory synced: after a
// crash the target holds its old contents or the new ones, never part of either, and a call
// that fails leaves no temporary file behind. Used for every file the appliance and the
// engine's tools write outside a database: keys, certificates, signatures, trust entries,
// exports, model configs.
//
// Thread safety: no shared state; concurrent writers of one path each write a file of their
// own, and the last rename wins (with IfExists::kRefuse, the first link).
#pragma once

#include <fstream>
#include <memory>
#include <string>
#include <string_view>

#include "kimi/status.h"

namespace kimi {

enum class IfExists {
  kReplace,  // the new file takes the target's place
  kRefuse,   // AlreadyExists, and the target is left as it was
};

// For output produced piece by piece: write to stream(), then Commit(). Destroyed without a
// successful Commit(), it removes its temporary file and the target is untouched.
class AtomicFileWriter {
 public:
  // `mode` is the new file's (before the umask), whatever the target's was.
  static Result<std::unique_ptr<AtomicFileWriter>> Create(const std::string& path, unsigned mode = 0666);
  ~AtomicFileWriter();
  AtomicFileWriter(const AtomicFileWriter&) = delete;
  AtomicFileWriter& operator=(const AtomicFileWriter&) = delete;

  std::ostream& stream() { return stream_; }
  // Errors: IOError when a write, the sync or the rename failed; AlreadyExists (kRefuse).
  Status Commit(IfExists if_exists = IfExists::kReplace);

 private:
  AtomicFileWriter(std::string path, std::string temporary) : path_(std::move(path)), temporary_(std::move(temporary)) {}
  std::string path_, temporary_;
  std::ofstream stream_;
  bool committed_ = false;
};

Status WriteFileAtomically(const std::string& path, std::string_view data, unsigned mode = 0666,
                           IfExists if_exists = IfExists::kReplace);

}  // namespace kimi
