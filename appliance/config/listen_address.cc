#include "config/listen_address.h"

#include <arpa/inet.h>
#include <netinet/in.h>

#include <charconv>
#include <cstring>

namespace kimi::config {

std::string ListenAddress::ToString() const {
  return (ipv6 ? "[" + host + "]" : host) + ":" + std::to_string(port);
}

bool ListenAddress::IsLoopback() const {
  if (ipv6) {
    in6_addr a{};
    return inet_pton(AF_INET6, host.c_str(), &a) == 1 && IN6_IS_ADDR_LOOPBACK(&a);
  }
  in_addr a{};
  return inet_pton(AF_INET, host.c_str(), &a) == 1 && (ntohl(a.s_addr) >> 24) == 127;
}

Result<ListenAddress> ParseListenAddress(std::string_view text) {
  ListenAddress out;
  std::string_view host;
  std::string_view port;
  if (!text.empty() && text.front() == '[') {
    size_t close = text.find(']');
    if (close == std::string_view::npos || close + 1 >= text.size() || text[close + 1] != ':') {
      return Status::InvalidArgument("\"" + std::string(text) + "\" is not of the form [ipv6]:port");
    }
    host = text.substr(1, close - 1);
    port = text.substr(close + 2);
    out.ipv6 = true;
  } else {
    size_t colon = text.rfind(':');
    if (colon == std::string_view::npos || text.find(':') != colon) {
      return Status::InvalidArgument("\"" + std::string(text) +
                                     "\" is not of the form host:port (IPv6 hosts go in brackets: [::1]:8080)");
    }
    host = text.substr(0, colon);
    port = text.substr(colon + 1);
  }
  out.host = std::string(host);
  unsigned char buf[sizeof(in6_addr)];
  if (inet_pton(out.ipv6 ? AF_INET6 : AF_INET, out.host.c_str(), buf) != 1) {
    return Status::InvalidArgument("\"" + out.host + "\" is not a numeric IP" + (out.ipv6 ? "v6" : "v4") +
                                   " address (names such as localhost are not accepted)");
  }
  int value = -1;
  auto [end, ec] = std::from_chars(port.data(), port.data() + port.size(), value);
  if (port.empty() || ec != std::errc() || end != port.data() + port.size() || value < 0 || value > 65535) {
    return Status::InvalidArgument("\"" + std::string(port) + "\" is not a port number 0..65535");
  }
  out.port = value;
  return out;
}

}  // namespace kimi::config
