// IPv4 and IPv6 addresses: see detectors.h. IPv6 candidates are confirmed by inet_pton.
#include <arpa/inet.h>

#include <string>

#include "policy/detector_text.h"
#include "policy/detectors.h"

namespace kimi::policy {
namespace {

using namespace text;

// Dotted quad at text[begin]: four decimal octets 0..255 without leading zeros. Returns the
// end or 0.
size_t Ipv4At(std::string_view text, size_t begin) {
  size_t i = begin;
  for (int octet = 0; octet < 4; ++octet) {
    if (octet > 0) {
      if (i >= text.size() || text[i] != '.') return 0;
      ++i;
    }
    size_t start = i;
    int value = 0;
    while (i < text.size() && IsDigit(text[i]) && i - start < 3) value = value * 10 + (text[i++] - '0');
    if (i == start || value > 255 || (i - start > 1 && text[start] == '0')) return 0;
  }
  // Not part of a longer dotted number or word.
  if (i < text.size() && (IsAlnum(text[i]) || (text[i] == '.' && i + 1 < text.size() && IsDigit(text[i + 1])))) return 0;
  return i;
}

bool IsIpv6Char(char c) { return IsHex(c) || c == ':' || c == '.'; }

bool ValidIpv6(std::string_view candidate) {
  if (candidate.size() < 2 || candidate.size() > 45) return false;
  std::string copy(candidate);
  unsigned char buf[16];
  return inet_pton(AF_INET6, copy.c_str(), buf) == 1;
}

}  // namespace

void FindIpAddresses(std::string_view text, std::vector<Finding>* out) {
  size_t i = 0;
  while (i < text.size()) {
    const char c = text[i];
    const bool starts = i == 0 || !(IsAlnum(text[i - 1]) || text[i - 1] == ':' || text[i - 1] == '.');
    if (!starts || !(IsHex(c) || c == ':')) {
      ++i;
      continue;
    }
    size_t end = i;
    while (end < text.size() && IsIpv6Char(text[end])) ++end;
    std::string_view run = text.substr(i, end - i);
    if (run.find(':') != std::string_view::npos && BoundaryAt(text, end)) {
      // Trailing punctuation of the sentence is not part of the address.
      while (!run.empty() && (run.back() == '.' || (run.back() == ':' && !run.ends_with("::")))) run.remove_suffix(1);
      if (run.find(':') != run.rfind(':') && ValidIpv6(run)) {
        out->push_back({i, i + run.size(), kIpAddress});
        i = end;
        continue;
      }
    }
    if (IsDigit(c)) {
      if (size_t v4 = Ipv4At(text, i); v4 != 0) {
        out->push_back({i, v4, kIpAddress});
        i = v4;
        continue;
      }
    }
    // Skip the rest of this token.
    size_t skip = i + 1;
    while (skip < text.size() && IsAlnum(text[skip])) ++skip;
    i = skip;
  }
}

}  // namespace kimi::policy
