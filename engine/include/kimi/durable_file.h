// Files written whole or not at all. The data goes to a new file beside the target (the same
// directory, so the rename cannot cross file systems), is synced, then renamed over the target
// (or linked to it where an existing file must be kept) and the directory synced: after a
// crash the target holds its old contents or the new ones, never part of either, and a call
// that fails leaves no temporary file behind. Used for every file the appliance and the
// engine's tools write outside a database: keys, certificates, signatures, trust entries,
// exports, model configs. The temporary file is created with O_EXCL and O_NOFOLLOW and
// written, synced and checked through that one descriptor, never opened by its name again: in a
// directory others can write, a link or a file renamed over the temporary name is neither
// written through nor published (Commit() then fails). New files are the owner's alone (0600)
// unless the caller gives another mode.
//
// Thread safety: no shared state; concurrent writers of one path each write a file of their
// own, and the last rename wins (with IfExists::kRefuse, the first link).
#pragma once

#include <memory>
#include <ostream>
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
  // `mode` is the new file's (before the umask), whatever the target's was; a file others must
  // read (a signature, a trust entry, a model's config) asks for 0644 or 0666.
  static Result<std::unique_ptr<AtomicFileWriter>> Create(const std::string& path, unsigned mode = 0600);
  ~AtomicFileWriter();
  AtomicFileWriter(const AtomicFileWriter&) = delete;
  AtomicFileWriter& operator=(const AtomicFileWriter&) = delete;

  std::ostream& stream() { return stream_; }
  // Errors: IOError when a write, the sync or the rename failed, or when the temporary name no
  // longer names the file written; AlreadyExists (kRefuse).
  Status Commit(IfExists if_exists = IfExists::kReplace);

 private:
  class Buffer;  // the stream's buffer, written to fd_
  AtomicFileWriter(std::string path, std::string temporary, int fd);
  std::string path_, temporary_;
  int fd_;
  std::unique_ptr<Buffer> buffer_;
  std::ostream stream_;
  bool committed_ = false;
};

Status WriteFileAtomically(const std::string& path, std::string_view data, unsigned mode = 0600,
                           IfExists if_exists = IfExists::kReplace);

}  // namespace kimi
