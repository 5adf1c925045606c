// One client connection, served by one worker thread from accept to close.
//
// For each request on the connection the loop: waits for its first byte (up to
// limits.idle_timeout_ms between requests, until the server stops, or until the server takes
// the worker back for a connection waiting for one: ReclaimableWait), reads the head itself
// within limits.max_header_bytes and the request deadline (limits.read_timeout_ms), refuses
// bad heads on the raw socket (431, 413, 415, 400), and hands good ones to the Dispatcher
// through a ConnectionStream, as ParseRequestHead rewrote them for the library (without Range,
// If-Range and percent-encoded cookies). The stream serves the buffered bytes, then the
// socket, stops the body at its framing (so a POST without Content-Length has an empty body
// instead of reading to EOF), caps chunked bodies at the request's cap (the chunk framing
// counts): limits.max_body_bytes, or kAnonymousBodyBytes once the dispatcher has found no
// principal in the head (dispatcher.h), and enforces the request deadline on every read and
// limits.write_timeout_ms on every write.
// A connection whose next request could not be found reliably (a refused body, an error
// before the body was read) is closed.
//
// Thread safety: a Connection belongs to one thread; `stop_fd` is only polled.
#pragma once

#include <atomic>
#include <chrono>
#include <string>

#include "config/config.h"
#include "http/access_log.h"
#include "http/dispatcher.h"
#include "http/transport.h"

namespace kimi::http {

// The server's hold on a connection that waits for its client: between requests (keep-alive),
// and while a request is still arriving kReclaimableArrivalAfter after it began (a head or a
// body that trickles in, as slowloris clients send them). While it waits, the server may take
// its worker back for a connection that has none (server.h). Called by the connection's worker
// only; Enter() and Leave() alternate.
class ReclaimableWait {
 public:
  virtual ~ReclaimableWait() = default;
  // The connection waits for its client. Returns a descriptor that becomes readable when the
  // server wants the worker back (-1: it never will).
  virtual int Enter() = 0;
  // The wait is over: a request has started arriving (between requests) or has arrived (it
  // will be served), or the connection ends (timeout, close, server stopping, or the worker
  // taken back).
  virtual void Leave(bool request_arrived) = 0;
};

// How long a request may take to arrive before its worker may be taken back for a waiting
// connection. Heads and bodies of API requests arrive in one or a few packets; 64 clients that
// each kept a head open held every worker for the whole read timeout (30 s), over and over.
inline constexpr std::chrono::milliseconds kReclaimableArrivalAfter{1000};

struct ConnectionEnv {
  Dispatcher* dispatcher;
  HttpMetrics* metrics;
  config::LimitsConfig limits;
  int stop_fd;                    // readable once the server is stopping
  const std::atomic<bool>* stopping;
  ReclaimableWait* reclaim = nullptr;  // null: a waiting connection keeps its worker until its timeout
};

// Serves the connection (after its TLS handshake, when it is TLS) until it closes; does not
// close the descriptor (the caller does).
void ServeConnection(Transport& transport, const ConnectionEnv& env);

// After refusing a request the client may still be sending; closing with unread bytes would
// reset the connection and can destroy the response before the client reads it. So: stop
// writing, then read and discard until the client closes, 16 MiB, or `max_ms`. A body refused
// from its head (413, 401) may be megabytes on its way; it is read into a small buffer and
// dropped, never held.
void LingeringClose(Transport& transport, int64_t max_ms);

// Sends all of `data` within `timeout_ms` per wait. Returns false on error or timeout.
bool SendAll(Transport& transport, std::string_view data, int64_t timeout_ms);

}  // namespace kimi::http
