// Transport: the byte stream of one accepted connection, plain TCP or TLS over it, so the
// connection loop reads and writes without knowing which.
//
// The socket is switched to non-blocking, plain or TLS: a read or write that cannot go on at
// once waits for the socket until its deadline (reads: the caller's; writes: limits.
// write_timeout_ms), so a client that sends nothing, or stops reading, holds its worker no
// longer than that. A blocking plain socket made ::send wait until the whole response was
// queued, past any timeout, for a client that never read. Every OpenSSL call that wants more
// bytes (or room to write) polls the same way. TLS bytes already decrypted inside OpenSSL are
// visible through Buffered(), which the caller checks before it polls.
//
// Owns the SSL object (freed by the destructor), not the descriptor (the server closes it).
// Thread safety: one Transport belongs to one thread.
#pragma once

#include <openssl/types.h>
#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <string>

namespace kimi::http {

// Milliseconds for poll() to wait until `deadline`, rounded up so that a poll that times out
// has reached it (rounded down, a poll 0.7 ms short of it returned "nothing yet, not late",
// which a caller read as readable and then blocked in recv() for as long as the peer liked);
// 0 once it has passed.
int PollTimeoutMs(std::chrono::steady_clock::time_point deadline);

// How a wait for a descriptor ended.
enum class WaitEnd { kReady, kTimeout, kOther, kError };
// Waits until `fd` has one of `events`, `deadline` passes, or `other_fd` or `last_fd` (each
// ignored when < 0) is readable: kOther, with *which (when given) the one that was, other_fd
// when both. `fd` wins over the others. A poll woken before the deadline with nothing ready
// polls again: no caller reads a timeout as readiness.
WaitEnd WaitForEvents(int fd, short events, std::chrono::steady_clock::time_point deadline, int other_fd = -1,
                      int last_fd = -1, int* which = nullptr);

class Transport {
 public:
  using Clock = std::chrono::steady_clock;

  // A plain TCP connection.
  explicit Transport(int fd);
  // A TLS server connection over `fd` (handshake not yet done). `ctx` must outlive it.
  Transport(int fd, SSL_CTX* ctx);
  ~Transport();
  Transport(const Transport&) = delete;
  Transport& operator=(const Transport&) = delete;

  int fd() const { return fd_; }
  bool is_tls() const { return ssl_ != nullptr; }

  // TLS: runs (or resumes) the server handshake until `deadline`, or until `abort_fd` (when
  // >= 0) becomes readable. kFailed (with *why set): a client that does not speak TLS, no
  // shared protocol version or cipher, a closed connection; *plain_http is true when the client
  // sent a plain HTTP request instead of a ClientHello. kTimeout and kAborted (*why set too)
  // leave the handshake where it was: a later call resumes it. Plain: kDone at once.
  enum class HandshakeResult { kDone, kTimeout, kAborted, kFailed };
  HandshakeResult Handshake(Clock::time_point deadline, std::string* why, bool* plain_http, int abort_fd = -1);

  // TLS: the client presented a certificate and it verified against the client CA.
  bool PeerCertificateVerified() const;

  // Decrypted bytes waiting inside the TLS layer (always false for plain TCP).
  bool Buffered() const;

  enum class ReadResult { kOk, kEof, kTimeout, kError };
  // Precondition: the socket is readable or Buffered(). Reads at most `size` bytes into
  // `out`, waiting until `deadline` at most for the rest of a TLS record.
  ReadResult Read(char* out, size_t size, Clock::time_point deadline, size_t* n);

  // Writes all of `data`, waiting until `timeout_ms` after the call at most for room. Returns
  // `size`, or -1 on error or timeout (some bytes may have gone: the connection is done).
  ssize_t Write(const char* data, size_t size, int64_t timeout_ms);

  // Ends the sending side: a TLS close_notify (best effort), then a TCP half-close.
  void ShutdownWrite();

 private:
  int fd_;
  SSL* ssl_ = nullptr;
  bool tls_unavailable_ = false;  // TLS was asked for and SSL_new failed: never serve plain
};

}  // namespace kimi::http
