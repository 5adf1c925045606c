#include "http/transport.h"

#include <fcntl.h>
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <poll.h>
#include <sys/socket.h>

#include <algorithm>
#include <cerrno>

namespace kimi::http {
namespace {

// Waits for `events` on `fd` until `deadline`; false on timeout or error.
bool WaitFor(int fd, short events, Transport::Clock::time_point deadline) {
  return WaitForEvents(fd, events, deadline) == WaitEnd::kReady;
}

// The text of the newest OpenSSL error on this thread's queue, which it clears.
std::string OpenSslError() {
  unsigned long code = ERR_peek_last_error();
  char buf[256] = "unknown TLS error";
  if (code != 0) ERR_error_string_n(code, buf, sizeof buf);
  ERR_clear_error();
  return buf;
}

void SetNonBlocking(int fd) {
  const int flags = ::fcntl(fd, F_GETFL, 0);
  if (flags >= 0 && !(flags & O_NONBLOCK)) ::fcntl(fd, F_SETFL, flags | O_NONBLOCK);
}

}  // namespace

WaitEnd WaitForEvents(int fd, short events, Transport::Clock::time_point deadline, int other_fd, int last_fd,
                      int* which) {
  for (;;) {
    // poll() skips an entry with a negative descriptor.
    pollfd p[3] = {{fd, events, 0}, {other_fd, POLLIN, 0}, {last_fd, POLLIN, 0}};
    int r = ::poll(p, 3, PollTimeoutMs(deadline));
    if (r < 0 && errno == EINTR) continue;
    if (r < 0) return WaitEnd::kError;
    if (r == 0) {
      if (Transport::Clock::now() >= deadline) return WaitEnd::kTimeout;
      continue;  // woken early: nothing arrived, so nothing is ready
    }
    if (p[0].revents != 0) return WaitEnd::kReady;  // POLLHUP/POLLERR too: the next call reports them
    if (which != nullptr) *which = p[1].revents != 0 ? other_fd : last_fd;
    return WaitEnd::kOther;
  }
}

int PollTimeoutMs(Transport::Clock::time_point deadline) {
  const auto left = deadline - Transport::Clock::now();
  if (left <= Transport::Clock::duration::zero()) return 0;
  const auto ms = std::chrono::ceil<std::chrono::milliseconds>(left).count();
  return static_cast<int>(std::min<int64_t>(ms, INT32_MAX));
}

Transport::Transport(int fd) : fd_(fd) { SetNonBlocking(fd); }

Transport::Transport(int fd, SSL_CTX* ctx) : fd_(fd) {
  SetNonBlocking(fd);
  ssl_ = SSL_new(ctx);
  if (ssl_ == nullptr || SSL_set_fd(ssl_, fd) != 1) tls_unavailable_ = true;
}

Transport::~Transport() {
  if (ssl_ != nullptr) SSL_free(ssl_);
}

Transport::HandshakeResult Transport::Handshake(Clock::time_point deadline, std::string* why, bool* plain_http,
                                                int abort_fd) {
  *plain_http = false;
  if (tls_unavailable_) {
    *why = "cannot create a TLS session: " + OpenSslError();
    return HandshakeResult::kFailed;
  }
  if (!is_tls()) return HandshakeResult::kDone;
  ERR_clear_error();
  for (;;) {
    int rc = SSL_accept(ssl_);
    if (rc == 1) return HandshakeResult::kDone;
    int err = SSL_get_error(ssl_, rc);
    if (err == SSL_ERROR_WANT_READ || err == SSL_ERROR_WANT_WRITE) {
      switch (WaitForEvents(fd_, err == SSL_ERROR_WANT_READ ? POLLIN : POLLOUT, deadline, abort_fd)) {
        case WaitEnd::kReady:
          continue;
        case WaitEnd::kTimeout:
          *why = "TLS handshake did not finish in time";
          return HandshakeResult::kTimeout;
        case WaitEnd::kOther:
          *why = "the server took the worker back during the TLS handshake";
          return HandshakeResult::kAborted;
        case WaitEnd::kError:
          *why = "waiting for the TLS handshake failed";
          return HandshakeResult::kFailed;
      }
    }
    unsigned long code = ERR_peek_last_error();
    *plain_http = ERR_GET_LIB(code) == ERR_LIB_SSL && ERR_GET_REASON(code) == SSL_R_HTTP_REQUEST;
    *why = err == SSL_ERROR_SYSCALL && code == 0 ? "the client closed the connection during the TLS handshake"
                                                 : "TLS handshake failed: " + OpenSslError();
    return HandshakeResult::kFailed;
  }
}

bool Transport::PeerCertificateVerified() const {
  return ssl_ != nullptr && SSL_get0_peer_certificate(ssl_) != nullptr && SSL_get_verify_result(ssl_) == X509_V_OK;
}

bool Transport::Buffered() const { return ssl_ != nullptr && SSL_pending(ssl_) > 0; }

Transport::ReadResult Transport::Read(char* out, size_t size, Clock::time_point deadline, size_t* n) {
  *n = 0;
  if (!is_tls()) {
    for (;;) {
      // Never a blocking read: a peer that sends nothing holds this thread until the deadline,
      // not for ever, even where the caller's own wait said readable.
      ssize_t got = ::recv(fd_, out, size, MSG_DONTWAIT);
      if (got < 0 && errno == EINTR) continue;
      if (got < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
        if (!WaitFor(fd_, POLLIN, deadline)) {
          return Clock::now() >= deadline ? ReadResult::kTimeout : ReadResult::kError;
        }
        continue;
      }
      if (got < 0) return ReadResult::kError;
      if (got == 0) return ReadResult::kEof;
      *n = static_cast<size_t>(got);
      return ReadResult::kOk;
    }
  }
  for (;;) {
    int rc = SSL_read_ex(ssl_, out, size, n);
    if (rc == 1) return ReadResult::kOk;
    int err = SSL_get_error(ssl_, rc);
    if (err == SSL_ERROR_WANT_READ || err == SSL_ERROR_WANT_WRITE) {
      if (!WaitFor(fd_, err == SSL_ERROR_WANT_READ ? POLLIN : POLLOUT, deadline)) {
        return Clock::now() >= deadline ? ReadResult::kTimeout : ReadResult::kError;
      }
      continue;
    }
    ERR_clear_error();
    return err == SSL_ERROR_ZERO_RETURN ? ReadResult::kEof : ReadResult::kError;
  }
}

ssize_t Transport::Write(const char* data, size_t size, int64_t timeout_ms) {
  const Clock::time_point deadline = Clock::now() + std::chrono::milliseconds(timeout_ms);
  if (!is_tls()) {
    // The socket buffer has room almost always: send first, and wait only when it is full,
    // so that a streamed frame costs one system call, not two. The socket is non-blocking: a
    // full buffer is EAGAIN and the wait below, never a send blocked past the deadline. All
    // of `data` goes, as SSL_write sends it: the library writes "100 Continue" in one call
    // whose count it does not check.
    size_t done = 0;
    while (done < size) {
      ssize_t sent = ::send(fd_, data + done, size - done, MSG_NOSIGNAL);
      if (sent < 0 && errno == EINTR) continue;
      if (sent < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
        if (!WaitFor(fd_, POLLOUT, deadline)) return -1;
        continue;
      }
      if (sent <= 0) return -1;
      done += static_cast<size_t>(sent);
    }
    return static_cast<ssize_t>(size);
  }
  for (;;) {
    size_t written = 0;
    int rc = SSL_write_ex(ssl_, data, size, &written);
    if (rc == 1) return static_cast<ssize_t>(written);
    int err = SSL_get_error(ssl_, rc);
    if ((err == SSL_ERROR_WANT_READ || err == SSL_ERROR_WANT_WRITE) &&
        WaitFor(fd_, err == SSL_ERROR_WANT_READ ? POLLIN : POLLOUT, deadline)) {
      continue;
    }
    ERR_clear_error();
    return -1;
  }
}

void Transport::ShutdownWrite() {
  // One attempt: a close_notify that does not fit the socket buffer now is not worth a wait.
  if (ssl_ != nullptr && SSL_is_init_finished(ssl_)) {
    SSL_shutdown(ssl_);
    ERR_clear_error();
  }
  ::shutdown(fd_, SHUT_WR);
}

}  // namespace kimi::http
