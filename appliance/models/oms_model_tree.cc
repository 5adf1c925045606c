#include "models/oms_model_tree.h"

#include <algorithm>
#include <filesystem>

#include "models/oms_statement.h"

namespace kimi::models {
namespace fs = std::filesystem;

namespace {

bool IsWithin(const fs::path& root, const fs::path& target) {
  auto r = root.begin();
  auto t = target.begin();
  for (; r != root.end(); ++r, ++t) {
    if (t == target.end() || *r != *t) return false;
  }
  return true;
}

}  // namespace

bool IsIgnoredPath(const std::string& name, const std::vector<std::string>& ignore_paths) {
  for (const auto& raw : ignore_paths) {
    std::string p = raw;
    while (p.size() > 1 && p.back() == '/') p.pop_back();
    if (p.rfind("./", 0) == 0) p = p.substr(2);
    if (p.empty()) continue;
    if (name == p || (name.size() > p.size() && name.compare(0, p.size(), p) == 0 && name[p.size()] == '/')) return true;
  }
  return false;
}

Result<std::vector<ModelFile>> ListModelFiles(const std::string& model_path, const ModelTreeOptions& options) {
  std::error_code ec;
  fs::file_status top = fs::symlink_status(model_path, ec);
  if (ec || !fs::exists(top)) return Status::NotFound("model path " + model_path + " does not exist");
  if (fs::is_symlink(top)) return Status::InvalidArgument("model path " + model_path + " is a symbolic link; give its target");
  if (fs::is_regular_file(top)) {
    KIMI_ASSIGN_OR_RETURN(FileIdentity seen, IdentityAt(model_path));
    return std::vector<ModelFile>{{".", model_path, seen.size, seen}};
  }
  if (!fs::is_directory(top)) return Status::InvalidArgument("model path " + model_path + " is neither a file nor a directory");

  fs::path root = fs::canonical(model_path, ec);
  if (ec) return Status::IOError("cannot resolve " + model_path + ": " + ec.message());
  std::vector<ModelFile> files;
  fs::recursive_directory_iterator it(root, fs::directory_options::none, ec);
  if (ec) return Status::IOError("cannot list " + model_path + ": " + ec.message());
  for (; it != fs::recursive_directory_iterator(); it.increment(ec)) {
    if (ec) return Status::IOError("cannot list " + model_path + ": " + ec.message());
    const fs::directory_entry& entry = *it;
    std::string name = entry.path().lexically_relative(root).generic_string();
    if (IsIgnoredPath(name, options.ignore_paths)) {
      if (entry.is_directory(ec) && !entry.is_symlink(ec)) it.disable_recursion_pending();
      continue;
    }
    fs::file_status st = entry.symlink_status(ec);
    if (ec) return Status::IOError("cannot stat " + name + ": " + ec.message());
    if (fs::is_symlink(st)) {
      if (!options.allow_symlinks)
        return Status::InvalidArgument("symbolic link \"" + name + "\" in the model, and the signature does not allow symlinks");
      fs::path target = fs::canonical(entry.path(), ec);
      if (ec) return Status::InvalidArgument("symbolic link \"" + name + "\" is dangling");
      if (!IsWithin(root, target))
        return Status::InvalidArgument("symbolic link \"" + name + "\" points outside the model directory");
      if (!fs::is_regular_file(target, ec))
        return Status::InvalidArgument("symbolic link \"" + name + "\" does not point to a regular file");
      KIMI_ASSIGN_OR_RETURN(FileIdentity seen, IdentityAt(target.string()));
      files.push_back({name, target.string(), seen.size, seen});
      continue;
    }
    if (fs::is_directory(st)) continue;
    if (!fs::is_regular_file(st)) return Status::InvalidArgument("\"" + name + "\" is not a regular file (fifo, socket or device)");
    KIMI_ASSIGN_OR_RETURN(FileIdentity seen, IdentityAt(entry.path().string()));
    files.push_back({name, entry.path().string(), seen.size, seen});
  }
  std::sort(files.begin(), files.end(), [](const ModelFile& a, const ModelFile& b) {
    ManifestResource ra, rb;
    ra.path = a.name;
    rb.path = b.name;
    return ResourceLess(ra, rb);
  });
  return files;
}

}  // namespace kimi::models
