// HttpConnection: one keep-alive HTTP/1.1 client connection to an upstream server, read
// without a poll before every read: the streaming path of UpstreamBackend, which reads one
// small chunk per generated token, so a system call saved per read is saved per token.
//
// The socket is blocking with SO_RCVTIMEO / SO_SNDTIMEO set to the I/O timeout, so a recv()
// waits at most that long for the next byte (the upstream's "longest silence") and a silent
// upstream ends as DeadlineExceeded. The connect itself waits at most the connect timeout.
// A response is read as its head (status, Content-Type, framing, Connection), then its body:
// chunked (chunked_decoder.h), Content-Length, or until the server closes. The body goes to
// the caller's handler once per read from the socket, with all the data that read carried
// (so frames that arrived together can be forwarded together); the handler stops the read by
// answering false (a departed client), after which the connection must be closed.
//
// A connection may carry another request only when its last response was read to its end,
// neither side asked to close, and no stray byte followed (Reusable()).
//
// An exchange may also be given a deadline (SetDeadline): a read after it, or a wait that
// would pass it, ends as DeadlineExceeded, so an upstream that keeps a response going (pings,
// endless output) cannot hold it longer. Interrupt() ends the connection from another thread
// (a departed client): a read or write in progress returns at once.
//
// Errors: Open() -> Unavailable (name not resolved, refused, connect timeout); a read or
// write that waited the I/O timeout, or a read past the deadline -> DeadlineExceeded; the peer closing or resetting before
// the response ended -> Unavailable; a malformed head or chunk framing -> Corruption.
//
// Owns: the socket (closed by the destructor) and the read buffer.
// Thread safety: one thread at a time (the pool hands a connection to one request).
#pragma once

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "kimi/status.h"

namespace kimi::upstream {

// "http://host[:port][/]" split for connecting; an IPv6 host is written "[addr]".
struct HttpAddress {
  std::string host;  // without brackets
  std::string port;  // "80" when the URL names none
  std::string host_header;  // what the Host header says ("host:port" as written)
};
Result<HttpAddress> ParseHttpUrl(std::string_view url);

struct ResponseHead {
  enum class Framing { kChunked, kContentLength, kUntilClose };
  int status = 0;
  std::string content_type;
  Framing framing = Framing::kUntilClose;
  uint64_t content_length = 0;
  bool close = false;  // the server will close after this response
};

class HttpConnection {
 public:
  // Called with the body data of one read; false stops reading.
  using BodyHandler = std::function<bool(std::string_view data)>;

  static Result<std::unique_ptr<HttpConnection>> Open(const HttpAddress& address, int64_t connect_timeout_ms,
                                                      int64_t io_timeout_ms);
  ~HttpConnection();
  HttpConnection(const HttpConnection&) = delete;
  HttpConnection& operator=(const HttpConnection&) = delete;

  // Writes a whole request (head and body). Starts a new exchange.
  Status Send(std::string_view request);
  // Reads the next response's head (interim 1xx responses are skipped).
  Status ReadHead(ResponseHead* head);
  // Reads the body of the response whose head ReadHead() returned, passing it to `on_data`,
  // until its end; *stopped is set when the handler answered false (the body is then unread).
  Status ReadBody(const ResponseHead& head, const BodyHandler& on_data, bool* stopped);

  // Bounds the exchange that follows: no read waits past `deadline` (the wait for the next
  // byte is cut to what is left of it), none starts after it. A time_point of max(): none.
  void SetDeadline(std::chrono::steady_clock::time_point deadline);
  // Shuts the socket down: a read or write blocked on another thread returns at once, and the
  // connection is never reused. The only member that may be called from another thread.
  void Interrupt();

  // The last exchange ended cleanly and the connection may carry the next one.
  bool Reusable() const { return reusable_ && !interrupted_.load(); }
  // Any byte of a response arrived since the last Send(): when none did, a request sent on
  // a reused connection that failed was not answered and may be sent again on a new one.
  bool received_any() const { return received_any_; }
  // For a connection taken from the idle pool: the server has neither closed it nor sent
  // anything since (one non-blocking peek).
  bool StillIdle() const;

 private:
  HttpConnection(int fd, int64_t io_timeout_ms);
  // Sets the socket's receive timeout when it differs from the one set.
  void SetReceiveTimeout(int64_t ms);
  // Reads more bytes into the buffer; Unavailable at EOF unless *eof is given.
  Status Fill(bool* eof = nullptr);

  int fd_;
  std::vector<char> buffer_;
  size_t begin_ = 0;  // buffer_[begin_, end_) received and not yet consumed
  size_t end_ = 0;
  bool reusable_ = false;
  bool received_any_ = false;
  const int64_t io_timeout_ms_;
  int64_t receive_timeout_ms_;  // what SO_RCVTIMEO says now
  std::chrono::steady_clock::time_point deadline_ = std::chrono::steady_clock::time_point::max();
  std::atomic<bool> interrupted_{false};
};

}  // namespace kimi::upstream
