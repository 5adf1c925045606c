#include "chat/k3_tag.h"

namespace kimi::chat {
namespace {

std::string UnescapeAttribute(std::string_view value) {
  std::string out;
  for (size_t i = 0; i < value.size(); ++i) {
    if (value.substr(i).starts_with("&amp;")) {
      out.push_back('&');
      i += 4;
    } else if (value.substr(i).starts_with("&quot;")) {
      out.push_back('"');
      i += 5;
    } else {
      out.push_back(value[i]);
    }
  }
  return out;
}

}  // namespace

const std::string* K3TagHeader::Find(std::string_view key) const {
  for (const auto& [k, v] : attributes) {
    if (k == key) return &v;
  }
  return nullptr;
}

std::optional<K3TagHeader> ParseK3TagHeader(std::string_view header) {
  K3TagHeader tag;
  size_t pos = header.find(' ');
  tag.name = std::string(header.substr(0, pos));
  if (tag.name.empty() || tag.name.find_first_of("=\"") != std::string::npos) return std::nullopt;
  while (pos != std::string_view::npos && pos < header.size()) {
    ++pos;  // the space
    const size_t eq = header.find("=\"", pos);
    if (eq == std::string_view::npos) return std::nullopt;
    std::string_view key = header.substr(pos, eq - pos);
    if (key.empty() || key.find_first_of(" \"") != std::string_view::npos) return std::nullopt;
    const size_t value_begin = eq + 2;
    const size_t value_end = header.find('"', value_begin);
    if (value_end == std::string_view::npos) return std::nullopt;
    tag.attributes.emplace_back(std::string(key),
                                UnescapeAttribute(header.substr(value_begin, value_end - value_begin)));
    pos = value_end + 1;
    if (pos < header.size() && header[pos] != ' ') return std::nullopt;
  }
  return tag;
}

}  // namespace kimi::chat
