// ListenAddress: the "host:port" the daemon listens on, parsed and checked.
//
// Hosts are numeric IP addresses only ("127.0.0.1:8080", "[::1]:8080", "0.0.0.0:443"): a
// name such as "localhost" may resolve to several addresses, and a daemon that guards a
// network boundary should say exactly which one it binds. Port 0 asks the kernel for a free
// port (tests use it; the daemon logs the port it got).
// Public header of config/: other folders include it.
// Thread safety: plain values and pure functions.
#pragma once

#include <string>
#include <string_view>

#include "kimi/status.h"

namespace kimi::config {

struct ListenAddress {
  std::string host;  // numeric, without brackets
  int port = 0;
  bool ipv6 = false;

  // "127.0.0.1:8080" or "[::1]:8080".
  std::string ToString() const;
  // True for 127.0.0.0/8 and ::1: addresses no other machine can reach.
  bool IsLoopback() const;
};

// Parses "host:port" / "[v6host]:port". Returns InvalidArgument with a readable reason.
Result<ListenAddress> ParseListenAddress(std::string_view text);

}  // namespace kimi::config
