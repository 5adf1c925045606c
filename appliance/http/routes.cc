#include "http/routes.h"

#include <vector>

namespace kimi::http {
namespace {

std::vector<std::string_view> Segments(std::string_view path) {
  std::vector<std::string_view> out;
  size_t pos = 0;
  while (pos <= path.size()) {
    size_t slash = path.find('/', pos);
    if (slash == std::string_view::npos) slash = path.size();
    out.push_back(path.substr(pos, slash - pos));
    pos = slash + 1;
  }
  return out;
}

bool IsParameter(std::string_view segment) {
  return segment.size() > 2 && segment.front() == '{' && segment.back() == '}';
}

bool IsRestParameter(std::string_view segment) {
  return IsParameter(segment) && segment.size() > 5 && segment.ends_with("...}");
}

std::string ParameterName(std::string_view segment) {
  std::string_view name = segment.substr(1, segment.size() - 2);
  if (name.size() >= 3 && name.substr(name.size() - 3) == "...") name.remove_suffix(3);
  return std::string(name);
}

}  // namespace

const Route* RouteTable::Find(std::string_view method, std::string_view path) const {
  if (method == "HEAD") method = "GET";
  for (const Route& r : routes_) {
    if (r.method == method && MatchRoutePath(r.path, path, nullptr)) return &r;
  }
  return nullptr;
}

std::string RouteTable::AllowedMethods(std::string_view path) const {
  std::string out;
  for (const Route& r : routes_) {
    if (!MatchRoutePath(r.path, path, nullptr)) continue;
    if (!out.empty()) out += ", ";
    out += r.method;
    if (r.method == "GET") out += ", HEAD";
  }
  return out;
}

bool MatchRoutePath(std::string_view pattern, std::string_view path, std::map<std::string, std::string>* params) {
  const std::vector<std::string_view> want = Segments(pattern);
  const std::vector<std::string_view> got = Segments(path);
  std::map<std::string, std::string> found;
  size_t offset = 0;  // of got[i] in path
  for (size_t i = 0; i < want.size(); ++i) {
    if (i >= got.size()) return false;
    if (IsRestParameter(want[i]) && i + 1 == want.size()) {
      std::string_view rest = path.substr(offset);
      if (rest.empty()) return false;
      found[ParameterName(want[i])] = std::string(rest);
      if (params != nullptr) *params = std::move(found);
      return true;
    }
    if (IsParameter(want[i])) {
      if (got[i].empty()) return false;
      found[ParameterName(want[i])] = std::string(got[i]);
    } else if (want[i] != got[i]) {
      return false;
    }
    offset += got[i].size() + 1;
  }
  if (got.size() != want.size()) return false;
  if (params != nullptr) *params = std::move(found);
  return true;
}

std::string RoutePathRegex(std::string_view pattern) {
  static const std::string kSpecial = R"(\^$.|?*+()[]{})";
  std::string out;
  const std::vector<std::string_view> segments = Segments(pattern);
  for (size_t i = 0; i < segments.size(); ++i) {
    if (i > 0) out += '/';
    if (IsRestParameter(segments[i]) && i + 1 == segments.size()) {
      out += "(.+)";
    } else if (IsParameter(segments[i])) {
      out += "([^/]+)";
    } else {
      for (char c : segments[i]) {
        if (kSpecial.find(c) != std::string::npos) out += '\\';
        out += c;
      }
    }
  }
  return out;
}

bool RouteTable::IsPublicPath(std::string_view path) const {
  bool any = false;
  for (const Route& r : routes_) {
    if (!MatchRoutePath(r.path, path, nullptr)) continue;
    if (r.permission != auth::Permission::kPublic) return false;
    any = true;
  }
  return any;
}

}  // namespace kimi::http
