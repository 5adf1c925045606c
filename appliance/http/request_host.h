// Which Host a plain-HTTP request may name. Plain HTTP is served on loopback only, and a web
// page the operator opens can still reach it by DNS rebinding: its own name, made to resolve
// to 127.0.0.1, turns the page into a same-origin client of the daemon, past CORS and past the
// JSON-only sign-in, so it can read every public answer, guess passwords and lock accounts.
// Such a request names the page's host; a browser that asked for this daemon names an address
// or localhost. Over HTTPS the certificate does this job: a browser asking for a name the
// certificate lacks never completes the handshake.
// Thread safety: pure functions.
#pragma once

#include <string_view>

namespace kimi::http {

// Whether a plain-HTTP request with this Host value may be served: none (not a browser: HTTP/1.0
// and hand-written clients), an IPv4 or a bracketed IPv6 address, or `localhost` and a name
// under it (RFC 6761: resolved to loopback without asking DNS), each with or without a port.
bool IsLoopbackSafeHost(std::string_view host);

}  // namespace kimi::http
