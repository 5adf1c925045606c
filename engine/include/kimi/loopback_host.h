// Which Host a plain-HTTP server on loopback may answer. Plain HTTP on loopback (the daemon
// under `make run`, a `kimi-engine serve` worker) can still be reached by a web page the
// operator opens, through DNS rebinding: the page's own name, made to resolve to 127.0.0.1,
// turns it into a same-origin client of the server, past CORS, so it reads every answer it
// gets. Such a request names the page's host; a client that asked for this server names an
// address or localhost. Over HTTPS the certificate does this job: a browser asking for a name
// the certificate lacks never completes the handshake.
// Thread safety: pure functions.
#pragma once

#include <span>
#include <string>
#include <string_view>

namespace kimi {

// Whether a plain-HTTP request with this Host value may be served: none (not a browser: HTTP/1.0
// and hand-written clients), an IPv4 or a bracketed IPv6 address, `localhost` and a name under
// it (RFC 6761: resolved to loopback without asking DNS), or one of `named` (compared without
// ASCII case: the names an operator's reverse proxy on this machine forwards), each with or
// without a port.
bool IsLoopbackSafeHost(std::string_view host, std::span<const std::string> named = {});

// Whether a listen address (no port) is a loopback one: 127.0.0.0/8, ::1 (bracketed or not) or
// `localhost`.
bool IsLoopbackListenAddress(std::string_view address);

}  // namespace kimi
