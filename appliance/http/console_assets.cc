#include "http/console_assets.h"
#include "kimi/regular_file.h"

#include <algorithm>
#include <filesystem>
#include <utility>

namespace kimi::http {
namespace {

// The console's largest file is tens of KiB.
constexpr uint64_t kMaxConsoleFileBytes = 16u << 20;

namespace fs = std::filesystem;

struct ContentType {
  std::string_view extension;
  std::string_view type;
};

constexpr ContentType kContentTypes[] = {
    {".html", "text/html; charset=utf-8"},
    {".js", "text/javascript; charset=utf-8"},
    {".css", "text/css; charset=utf-8"},
    {".svg", "image/svg+xml"},
    {".png", "image/png"},
    {".json", "application/json"},
    {".txt", "text/plain; charset=utf-8"},
};

// Whether `path`, with every symbolic link resolved, lies below `root` (already canonical).
bool StaysBelow(const fs::path& root, const fs::path& path) {
  std::error_code ec;
  fs::path resolved = fs::canonical(path, ec);
  if (ec) return false;
  auto [root_end, unused] = std::mismatch(root.begin(), root.end(), resolved.begin(), resolved.end());
  return root_end == root.end();
}

}  // namespace

std::string_view ConsoleContentType(std::string_view file_name) {
  size_t dot = file_name.rfind('.');
  if (dot == std::string_view::npos) return {};
  std::string_view extension = file_name.substr(dot);
  for (const ContentType& c : kContentTypes) {
    if (c.extension == extension) return c.type;
  }
  return {};
}

bool IsSafeAssetPath(std::string_view path) {
  if (path.empty() || path.size() > 256) return false;
  size_t start = 0;
  while (start <= path.size()) {
    size_t slash = path.find('/', start);
    if (slash == std::string_view::npos) slash = path.size();
    std::string_view segment = path.substr(start, slash - start);
    // Empty segments ("a//b", a leading or trailing '/'), "." and ".." and hidden files
    // are all refused by the one leading-dot or empty test.
    if (segment.empty() || segment.front() == '.') return false;
    for (char c : segment) {
      unsigned char u = static_cast<unsigned char>(c);
      if (u < 0x20 || u == 0x7f || c == '\\' || c == ':') return false;
    }
    start = slash + 1;
  }
  return true;
}

ConsoleAssets::ConsoleAssets(std::string root) : root_(std::move(root)) {}

bool ConsoleAssets::Installed() const {
  std::error_code ec;
  return !root_.empty() && fs::is_regular_file(fs::path(root_) / "index.html", ec);
}

Result<ConsoleAsset> ConsoleAssets::Read(std::string_view relative_path) const {
  if (relative_path.empty()) relative_path = "index.html";
  const Status not_found = Status::NotFound("no console file '" + std::string(relative_path) + "'");
  if (root_.empty() || !IsSafeAssetPath(relative_path)) return not_found;
  std::string_view type = ConsoleContentType(relative_path);
  if (type.empty()) return not_found;

  std::error_code ec;
  fs::path root = fs::canonical(root_, ec);
  if (ec) return not_found;
  fs::path file = root / fs::path(std::string(relative_path));
  if (!fs::is_regular_file(file, ec) || !StaysBelow(root, file)) return not_found;

  KIMI_ASSIGN_OR_RETURN(std::string body,
                        ReadRegularFile(file.string(), kMaxConsoleFileBytes, FinalLink::kFollow));
  return ConsoleAsset{std::move(body), std::string(type)};
}

}  // namespace kimi::http
