// Who a connection's peer is, for the budgets that one client must not multiply (login
// attempts, anonymous audit records, the server's workers): its IPv4 address, or its IPv6 /64,
// since one host is routinely given a whole /64 and may speak from any address of it.
//
// Thread safety: pure functions.
//
// Public header of auth/: other folders include it (http/server.cc, http/anonymous_record_budget.cc).
#pragma once

#include <sys/socket.h>

#include <string>
#include <string_view>

namespace kimi::auth {

// The address part of a peer ("[::1]:4000" -> "::1", "127.0.0.1:4000" -> "127.0.0.1").
std::string_view PeerAddress(std::string_view peer);

// The client a peer counts as: "10.0.0.1" for IPv4 (an IPv4-mapped IPv6 address included),
// "2001:db8:1:2::/64" for IPv6; a peer that is neither, as written (less its port).
std::string PeerGroup(std::string_view peer);
std::string PeerGroup(const sockaddr_storage& peer);

}  // namespace kimi::auth
