// ConsoleAssets: the web console's static files (admin-ui/), read from one directory on disk
// and handed to the HTTP layer with their content type.
//
// Only plain files below the root whose extension is in the known table are served; every
// other name is NotFound, never an error that tells a client what exists. A request path is
// checked before it touches the file system (at most 256 bytes; no empty, "." or ".."
// segment; no backslash, colon, NUL or control byte; nothing hidden), and the file's resolved
// path must still lie below the resolved root, so neither "../" nor a symbolic link leads
// out of the directory.
// Files are read on each request: an upgrade that replaces the directory is served at once,
// and the console is a handful of small files.
// Public header of http/: other folders include it.
// Owns: the root path. Thread safety: immutable after construction; Read() may run on many
// threads at once.
#pragma once

#include <string>
#include <string_view>

#include "kimi/status.h"

namespace kimi::http {

struct ConsoleAsset {
  std::string body;
  std::string content_type;  // "text/html; charset=utf-8", ...
};

class ConsoleAssets {
 public:
  // `root` is the assets directory; it need not exist (then every Read() is NotFound).
  explicit ConsoleAssets(std::string root);

  const std::string& root() const { return root_; }
  // True when the root is a directory holding index.html.
  bool Installed() const;

  // The file at `relative_path` ("index.html", "js/api.js"); "" means index.html.
  // NotFound for anything that is not a servable file below the root; IOError when a
  // servable file cannot be read.
  Result<ConsoleAsset> Read(std::string_view relative_path) const;

 private:
  std::string root_;
};

// The content type served for a file name by its extension; "" when the extension is not
// one the console uses (such files are not served).
std::string_view ConsoleContentType(std::string_view file_name);

// Whether a request path below the root is well formed (see the header comment).
bool IsSafeAssetPath(std::string_view relative_path);

}  // namespace kimi::http
