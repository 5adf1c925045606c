#include "kimi/loopback_host.h"

#include <arpa/inet.h>
#include <netinet/in.h>

#include <algorithm>
#include <string>

#include "kimi/ascii_text.h"

namespace kimi {
namespace {

bool IsPort(std::string_view s) {
  if (s.empty() || s.size() > 5) return false;
  for (char c : s) {
    if (c < '0' || c > '9') return false;
  }
  return true;
}

bool IsAddress(int family, std::string_view text, unsigned char (&out)[16]) {
  return inet_pton(family, std::string(text).c_str(), out) == 1;
}

bool IsAddress(int family, std::string_view text) {
  unsigned char out[16];
  return IsAddress(family, text, out);
}

// A name with every label of letters, digits and hyphens, ending in the label "localhost".
bool IsLocalhostName(std::string_view name) {
  constexpr std::string_view kLocalhost = "localhost";
  if (name.size() < kLocalhost.size() ||
      !EqualsIgnoringAsciiCase(name.substr(name.size() - kLocalhost.size()), kLocalhost)) {
    return false;
  }
  std::string_view rest = name.substr(0, name.size() - kLocalhost.size());
  if (rest.empty()) return true;
  if (rest.back() != '.') return false;
  rest.remove_suffix(1);
  size_t label = 0;
  for (char c : rest) {
    if (c == '.') {
      if (label == 0) return false;
      label = 0;
      continue;
    }
    const bool allowed = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-';
    if (!allowed) return false;
    ++label;
  }
  return label > 0;
}

}  // namespace

bool IsLoopbackSafeHost(std::string_view host, std::span<const std::string> named) {
  if (host.empty()) return true;
  if (host.front() == '[') {
    const size_t close = host.find(']');
    if (close == std::string_view::npos) return false;
    const std::string_view after = host.substr(close + 1);
    if (!after.empty() && (after.front() != ':' || !IsPort(after.substr(1)))) return false;
    return IsAddress(AF_INET6, host.substr(1, close - 1));
  }
  std::string_view name = host;
  if (const size_t colon = host.rfind(':'); colon != std::string_view::npos) {
    if (!IsPort(host.substr(colon + 1))) return false;
    name = host.substr(0, colon);
  }
  if (IsAddress(AF_INET, name) || IsLocalhostName(name)) return true;
  return !name.empty() && std::any_of(named.begin(), named.end(), [name](const std::string& allowed) {
    return EqualsIgnoringAsciiCase(name, allowed);
  });
}

bool IsLoopbackListenAddress(std::string_view address) {
  if (EqualsIgnoringAsciiCase(address, "localhost")) return true;
  if (address.size() >= 2 && address.front() == '[' && address.back() == ']') {
    address = address.substr(1, address.size() - 2);
  }
  unsigned char bytes[16];
  if (IsAddress(AF_INET, address, bytes)) return bytes[0] == 127;
  static const unsigned char kV6Loopback[16] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1};
  return IsAddress(AF_INET6, address, bytes) && std::equal(bytes, bytes + 16, kV6Loopback);
}

}  // namespace kimi
