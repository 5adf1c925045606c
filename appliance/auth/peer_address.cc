#include "auth/peer_address.h"

#include <arpa/inet.h>
#include <netinet/in.h>

#include <cstring>

namespace kimi::auth {

std::string_view PeerAddress(std::string_view peer) {
  if (!peer.empty() && peer.front() == '[') {
    size_t close = peer.find(']');
    return close == std::string_view::npos ? peer : peer.substr(1, close - 1);
  }
  size_t colon = peer.rfind(':');
  // A bare IPv6 address has several colons and no port.
  if (colon == std::string_view::npos || peer.find(':') != colon) return peer;
  return peer.substr(0, colon);
}

std::string PeerGroup(const sockaddr_storage& peer) {
  char text[INET6_ADDRSTRLEN] = {};
  if (peer.ss_family == AF_INET) {
    const auto& in = reinterpret_cast<const sockaddr_in&>(peer);
    return inet_ntop(AF_INET, &in.sin_addr, text, sizeof(text)) != nullptr ? text : "";
  }
  if (peer.ss_family != AF_INET6) return "";
  const auto& in6 = reinterpret_cast<const sockaddr_in6&>(peer);
  if (IN6_IS_ADDR_V4MAPPED(&in6.sin6_addr)) {
    in_addr v4;
    std::memcpy(&v4, in6.sin6_addr.s6_addr + 12, 4);
    return inet_ntop(AF_INET, &v4, text, sizeof(text)) != nullptr ? text : "";
  }
  in6_addr prefix = in6.sin6_addr;
  std::memset(prefix.s6_addr + 8, 0, 8);
  if (inet_ntop(AF_INET6, &prefix, text, sizeof(text)) == nullptr) return "";
  return std::string(text) + "/64";
}

std::string PeerGroup(std::string_view peer) {
  const std::string address(PeerAddress(peer));
  sockaddr_storage storage{};
  if (inet_pton(AF_INET, address.c_str(), &reinterpret_cast<sockaddr_in&>(storage).sin_addr) == 1) {
    storage.ss_family = AF_INET;
  } else if (inet_pton(AF_INET6, address.c_str(), &reinterpret_cast<sockaddr_in6&>(storage).sin6_addr) == 1) {
    storage.ss_family = AF_INET6;
  } else {
    return address;
  }
  return PeerGroup(storage);
}

}  // namespace kimi::auth
