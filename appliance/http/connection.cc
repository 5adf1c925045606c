#include "http/connection.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>

#include "http/request_audit.h"
#include "http/request_head.h"
#include "http/request_id.h"
#include "kimi/log.h"
#include "upstream/chunked_decoder.h"

namespace kimi::http {
namespace {

using Clock = std::chrono::steady_clock;

enum class Wait { kReadable, kTimeout, kStop, kReclaimed, kError };

// Waits until `fd` is readable, the deadline passes, or one of stop_fd and reclaim_fd (each
// ignored when < 0) becomes readable: the server stops (kStop) or wants the worker back
// (kReclaimed).
Wait WaitReadable(int fd, int stop_fd, Clock::time_point deadline, int reclaim_fd = -1) {
  // Bytes from the client win over the stop: a request that has started arriving is in
  // flight and gets served; only a connection with nothing to read is closed.
  int which = -1;
  switch (WaitForEvents(fd, POLLIN, deadline, reclaim_fd, stop_fd, &which)) {
    case WaitEnd::kReady:
      return Wait::kReadable;
    case WaitEnd::kTimeout:
      return Wait::kTimeout;
    case WaitEnd::kOther:
      return which == reclaim_fd ? Wait::kReclaimed : Wait::kStop;
    case WaitEnd::kError:
      break;
  }
  return Wait::kError;
}

void Address(int fd, bool peer, std::string* ip, int* port) {
  sockaddr_storage addr{};
  socklen_t len = sizeof addr;
  int rc = peer ? getpeername(fd, reinterpret_cast<sockaddr*>(&addr), &len)
                : getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
  char buf[INET6_ADDRSTRLEN] = "?";
  *port = 0;
  if (rc == 0 && addr.ss_family == AF_INET) {
    auto* a = reinterpret_cast<sockaddr_in*>(&addr);
    inet_ntop(AF_INET, &a->sin_addr, buf, sizeof buf);
    *port = ntohs(a->sin_port);
  } else if (rc == 0 && addr.ss_family == AF_INET6) {
    auto* a = reinterpret_cast<sockaddr_in6*>(&addr);
    inet_ntop(AF_INET6, &a->sin6_addr, buf, sizeof buf);
    *port = ntohs(a->sin6_port);
  }
  *ip = buf;
}

// The bytes of a connection as the HTTP library sees them, one request at a time.
class ConnectionStream : public httplib::Stream {
 public:
  ConnectionStream(Transport& transport, int64_t write_timeout_ms, ReclaimableWait* reclaim)
      : transport_(transport), fd_(transport.fd()), write_timeout_ms_(write_timeout_ms), reclaim_(reclaim) {
    Address(fd_, true, &remote_ip_, &remote_port_);
    Address(fd_, false, &local_ip_, &local_port_);
  }

  std::string RemoteAddress() const {
    return (remote_ip_.find(':') != std::string::npos ? "[" + remote_ip_ + "]" : remote_ip_) + ":" +
           std::to_string(remote_port_);
  }

  // Bytes received and not yet handed out.
  std::string_view Unconsumed() const { return std::string_view(buffer_).substr(pos_); }
  // Bytes received, or decrypted inside the TLS layer, not yet handed out.
  bool HasPending() const { return pos_ < buffer_.size() || transport_.Buffered(); }

  // A request begins to arrive at `start`: from kReclaimableArrivalAfter later until
  // EndArrival(), a wait for its bytes lets the server take the worker back (kReclaimed).
  void BeginArrival(Clock::time_point start) {
    arriving_ = true;
    reclaimable_from_ = start + kReclaimableArrivalAfter;
  }
  // The request has arrived whole (`arrived`), or the connection ends without it. Idempotent.
  void EndArrival(bool arrived) {
    arriving_ = false;
    if (entered_) reclaim_->Leave(arrived);
    entered_ = false;
  }

  enum class Fill { kOk, kEof, kTimeout, kReclaimed, kError };
  // Receives more bytes into the buffer, waiting until `deadline` at most.
  // With stop_fd >= 0 the wait also ends (kError) when the server stops.
  Fill ReceiveMore(Clock::time_point deadline, int stop_fd = -1) {
    if (pos_ > 0 && pos_ == buffer_.size()) {
      buffer_.clear();
      pos_ = 0;
    }
    while (!transport_.Buffered()) {
      int reclaim_fd = -1;
      Clock::time_point until = deadline;
      if (arriving_ && reclaim_ != nullptr) {
        if (!entered_ && Clock::now() >= reclaimable_from_) {
          reclaim_fd_ = reclaim_->Enter();
          entered_ = true;
        }
        if (entered_) {
          reclaim_fd = reclaim_fd_;
        } else {
          until = std::min(deadline, reclaimable_from_);
        }
      }
      Wait w = WaitReadable(fd_, stop_fd, until, reclaim_fd);
      if (w == Wait::kReadable) break;
      if (w == Wait::kTimeout && Clock::now() < deadline) continue;  // now reclaimable
      if (w == Wait::kTimeout) return Fill::kTimeout;
      if (w == Wait::kReclaimed) return Fill::kReclaimed;
      return Fill::kError;
    }
    char chunk[16384];
    size_t n = 0;
    switch (transport_.Read(chunk, sizeof chunk, deadline, &n)) {
      case Transport::ReadResult::kOk:
        buffer_.append(chunk, n);
        return Fill::kOk;
      case Transport::ReadResult::kEof:
        return Fill::kEof;
      case Transport::ReadResult::kTimeout:
        return Fill::kTimeout;
      case Transport::ReadResult::kError:
        break;
    }
    return Fill::kError;
  }

  // Starts a request whose head is the first `head_bytes` unconsumed bytes; the library reads
  // `library_head` in their place when it is not empty (request_head.h). A chunked body is
  // capped at ctx->max_body_bytes as it stands when each byte is read: the dispatcher lowers it
  // once the head authenticates no principal.
  void BeginRequest(size_t head_bytes, std::string_view library_head, BodyFraming framing, uint64_t content_length,
                    Clock::time_point deadline, RequestContext* ctx) {
    buffer_.erase(0, pos_);
    if (!library_head.empty()) {
      buffer_.replace(0, head_bytes, library_head);
      head_bytes = library_head.size();
    }
    pos_ = 0;
    consumed_ = 0;
    head_bytes_ = head_bytes;
    framing_ = framing;
    limit_ = head_bytes + (framing == BodyFraming::kContentLength ? content_length : 0);
    deadline_ = deadline;
    ctx_ = ctx;
    chunked_ = upstream::ChunkedDecoder(upstream::ChunkedDecoder::Framing::kStrict);
    chunked_ended_ = false;
  }

  // The chunked body was read to its last byte (RFC framing, checked).
  bool ChunkedBodyEnded() const { return chunked_ended_; }

  uint64_t BodyConsumed() const { return consumed_ > head_bytes_ ? consumed_ - head_bytes_ : 0; }

  bool is_readable() const override {
    if (HasPending()) return true;
    pollfd p{fd_, POLLIN, 0};
    return ::poll(&p, 1, PollTimeoutMs(deadline_)) > 0;
  }

  bool is_writable() const override {
    pollfd p{fd_, POLLOUT, 0};
    return ::poll(&p, 1, static_cast<int>(write_timeout_ms_)) > 0 && !(p.revents & (POLLERR | POLLHUP));
  }

  ssize_t read(char* ptr, size_t size) override {
    const uint64_t limit = Limit();
    if (consumed_ >= limit) {
      if (framing_ == BodyFraming::kChunked && !chunked_ended_) {  // a chunked body ran past the cap
        if (ctx_) ctx_->body_limit_hit = true;
        return -1;
      }
      return 0;  // the end of this request's body: the next bytes belong to the next request
    }
    size = std::min<uint64_t>(size, limit - consumed_);
    if (size == 0) return 0;
    if (pos_ == buffer_.size()) {
      Fill f = ReceiveMore(deadline_);
      // A body still trickling in when its worker is wanted elsewhere is answered as one that
      // missed its deadline.
      if ((f == Fill::kTimeout || f == Fill::kReclaimed) && ctx_) ctx_->read_deadline_hit = true;
      if (f == Fill::kEof) return 0;
      if (f != Fill::kOk) return -1;
    }
    size_t n = std::min(size, buffer_.size() - pos_);
    if (framing_ == BodyFraming::kChunked && consumed_ + n > head_bytes_) {
      // The body's bytes pass the RFC check before the library's decoder sees them, and none
      // past its end is handed out: those belong to the next request.
      const size_t head_part = consumed_ < head_bytes_ ? size_t(head_bytes_ - consumed_) : 0;
      scratch_.assign(buffer_, pos_ + head_part, n - head_part);  // decoded in place, then dropped
      size_t decoded = scratch_.size(), taken = 0;
      if (!chunked_.Decode(scratch_.data(), &decoded, &taken).ok()) {
        if (ctx_) ctx_->malformed_chunk = true;
        return -1;
      }
      n = head_part + taken;
      if (chunked_.done()) {
        chunked_ended_ = true;
        limit_ = consumed_ + n;
        EndArrival(true);
      }
    }
    std::memcpy(ptr, buffer_.data() + pos_, n);
    pos_ += n;
    consumed_ += n;
    if (consumed_ == limit_ && framing_ == BodyFraming::kContentLength) EndArrival(true);
    return static_cast<ssize_t>(n);
  }

  ssize_t write(const char* ptr, size_t size) override { return transport_.Write(ptr, size, write_timeout_ms_); }

  void get_remote_ip_and_port(std::string& ip, int& port) const override {
    ip = remote_ip_;
    port = remote_port_;
  }
  void get_local_ip_and_port(std::string& ip, int& port) const override {
    ip = local_ip_;
    port = local_port_;
  }
  socket_t socket() const override { return fd_; }

 private:
  // Where consumed_ stops: the end of the body, or the cap on a chunked body still arriving.
  uint64_t Limit() const {
    if (framing_ != BodyFraming::kChunked || chunked_ended_) return limit_;
    return head_bytes_ + static_cast<uint64_t>(std::max<int64_t>(ctx_ != nullptr ? ctx_->max_body_bytes : 0, 0));
  }

  Transport& transport_;
  int fd_;
  int64_t write_timeout_ms_;
  ReclaimableWait* reclaim_;
  bool arriving_ = false;  // a request is arriving (BeginArrival .. EndArrival)
  bool entered_ = false;   // reclaim_->Enter() called and not yet left
  int reclaim_fd_ = -1;
  Clock::time_point reclaimable_from_;
  std::string remote_ip_, local_ip_;
  int remote_port_ = 0, local_port_ = 0;
  std::string buffer_;
  size_t pos_ = 0;             // buffer_[pos_..] not yet handed out
  uint64_t consumed_ = 0;      // bytes of the current request handed out
  uint64_t head_bytes_ = 0;
  uint64_t limit_ = 0;         // the end of the body (Limit())
  BodyFraming framing_ = BodyFraming::kNone;
  upstream::ChunkedDecoder chunked_{upstream::ChunkedDecoder::Framing::kStrict};
  std::string scratch_;
  bool chunked_ended_ = false;
  Clock::time_point deadline_ = Clock::now();
  RequestContext* ctx_ = nullptr;
};

std::string_view PathOf(std::string_view target) { return target.substr(0, target.find('?')); }

// Answers on the raw socket, records the request, and closes the connection's reading side.
// Refusals are audited like routed responses: committed before the first byte is sent.
void Refuse(Transport& transport, const ConnectionEnv& env, RequestContext& ctx, ApiError error, std::string_view method,
            std::string_view path, const char* reason) {
  const RequestAuditor* auditor = env.dispatcher->auditor();
  if (auditor != nullptr) {
    Status audited = auditor->Commit(Exchange{&ctx, method.empty() ? "-" : method, path, error.http_status, {},
                                              RenderErrorBody(error)});
    if (!audited.ok()) error = AuditUnavailable(audited.message());
  }
  SendAll(transport, RenderRawErrorResponse(error, ctx.request_id), env.limits.write_timeout_ms);
  RecordRequest(*env.metrics, ctx, method, auditor ? auditor->ClientText(path) : std::string(path), error.http_status);
  env.metrics->connections_closed.WithLabels({reason}).Increment();
  LingeringClose(transport, 500);
}

// Method and target of a request line that may be all that arrived.
void PeekRequestLine(std::string_view received, std::string* method, std::string* path) {
  size_t eol = received.find("\r\n");
  std::string_view line = received.substr(0, std::min(eol, kLibraryMaxLineBytes));
  size_t sp1 = line.find(' ');
  if (sp1 == std::string_view::npos) return;
  size_t sp2 = line.find(' ', sp1 + 1);
  *method = std::string(line.substr(0, std::min<size_t>(sp1, 16)));
  *path = std::string(PathOf(line.substr(sp1 + 1, sp2 == std::string_view::npos ? sp2 : sp2 - sp1 - 1)));
}

}  // namespace

void LingeringClose(Transport& transport, int64_t max_ms) {
  const int fd = transport.fd();
  transport.ShutdownWrite();
  auto until = Clock::now() + std::chrono::milliseconds(max_ms);
  char sink[16384];
  size_t drained = 0;
  while (drained < (16u << 20) && WaitReadable(fd, -1, until) == Wait::kReadable) {
    ssize_t n = ::recv(fd, sink, sizeof sink, MSG_DONTWAIT);
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)) continue;
    if (n <= 0) break;
    drained += static_cast<size_t>(n);
  }
}

bool SendAll(Transport& transport, std::string_view data, int64_t timeout_ms) {
  while (!data.empty()) {
    ssize_t n = transport.Write(data.data(), data.size(), timeout_ms);
    if (n <= 0) return false;
    data.remove_prefix(static_cast<size_t>(n));
  }
  return true;
}

// The handshake, under the first request's deadline; from kReclaimableArrivalAfter on, the server
// may take the worker back for a waiting connection (a client that stalls its handshake is a
// slowloris like one that stalls its head).
static bool StartTls(Transport& transport, HttpMetrics& metrics, Clock::time_point deadline, int64_t write_timeout_ms,
                     ReclaimableWait* reclaim) {
  using Result = Transport::HandshakeResult;
  std::string why;
  bool plain_http = false;
  const Clock::time_point reclaimable_from = Clock::now() + kReclaimableArrivalAfter;
  Result result = transport.Handshake(reclaim != nullptr ? std::min(deadline, reclaimable_from) : deadline, &why,
                                      &plain_http);
  if (result == Result::kTimeout && reclaim != nullptr && Clock::now() < deadline) {
    result = transport.Handshake(deadline, &why, &plain_http, reclaim->Enter());
    reclaim->Leave(result == Result::kDone);
  }
  if (result == Result::kDone) return true;
  metrics.connections_closed.WithLabels({result == Result::kAborted ? "reclaimed" : "tls_handshake"}).Increment();
  if (plain_http) {
    // A plain-HTTP client is told so in its own protocol, on the bare socket.
    Transport bare(transport.fd());
    const std::string body = "This port serves HTTPS, not plain HTTP.\n";
    SendAll(bare,
            "HTTP/1.1 400 Bad Request\r\nContent-Type: text/plain\r\nConnection: close\r\nContent-Length: " +
                std::to_string(body.size()) + "\r\n\r\n" + body,
            write_timeout_ms);
    LingeringClose(bare, 200);
  }
  std::string remote;
  int port = 0;
  Address(transport.fd(), true, &remote, &port);
  log::Debug("TLS handshake failed", {{"remote", remote + ":" + std::to_string(port)}, {"reason", why}});
  return false;
}

void ServeConnection(Transport& transport, const ConnectionEnv& env) {
  const config::LimitsConfig& limits = env.limits;
  auto read_timeout = std::chrono::milliseconds(limits.read_timeout_ms);
  // The first request's time starts at accept, so a client that connects and sends nothing
  // (or never finishes its TLS handshake) holds its worker no longer than one read timeout.
  Clock::time_point deadline = Clock::now() + read_timeout;
  if (!StartTls(transport, *env.metrics, deadline, limits.write_timeout_ms, env.reclaim)) return;
  ConnectionStream stream(transport, limits.write_timeout_ms, env.reclaim);
  // However the loop ends, a request still arriving gives up its claim on the worker.
  struct EndArrivalOnExit {
    ConnectionStream& stream;
    ~EndArrivalOnExit() { stream.EndArrival(false); }
  } end_arrival_on_exit{stream};
  const int fd = transport.fd();
  const std::string remote = stream.RemoteAddress();
  int64_t served = 0;

  for (;;) {
    if (served > 0) {
      if (!stream.HasPending()) {
        const int reclaim_fd = env.reclaim != nullptr ? env.reclaim->Enter() : -1;
        Wait w = WaitReadable(fd, env.stop_fd, Clock::now() + std::chrono::milliseconds(limits.idle_timeout_ms),
                              reclaim_fd);
        if (env.reclaim != nullptr) env.reclaim->Leave(w == Wait::kReadable);
        // Idle timeout, server stopping or taking the worker back, or error: close quietly.
        if (w != Wait::kReadable) {
          if (w == Wait::kReclaimed) env.metrics->connections_closed.WithLabels({"reclaimed"}).Increment();
          return;
        }
      }
      deadline = Clock::now() + read_timeout;
    }
    RequestContext ctx;
    ctx.start = Clock::now();
    ctx.remote_addr = remote;
    ctx.client_certificate_verified = transport.PeerCertificateVerified();

    stream.BeginArrival(ctx.start);
    HeadScan scan = ScanHead(stream.Unconsumed(), static_cast<size_t>(limits.max_header_bytes));
    while (scan.outcome == HeadScan::Outcome::kNeedMore) {
      // Until a request's first byte arrives, a stopping server may close the connection.
      ConnectionStream::Fill f = stream.ReceiveMore(deadline, stream.HasPending() ? -1 : env.stop_fd);
      if (f != ConnectionStream::Fill::kOk) {
        if (f == ConnectionStream::Fill::kTimeout) {
          env.metrics->connections_closed.WithLabels({"read_timeout"}).Increment();
          log::Debug("closing a connection whose request did not arrive in time",
                     {{"remote", remote}, {"received_bytes", stream.Unconsumed().size()}});
        } else if (f == ConnectionStream::Fill::kReclaimed) {
          env.metrics->connections_closed.WithLabels({"reclaimed"}).Increment();
          log::Debug("closing a connection whose request was still arriving when its worker was wanted",
                     {{"remote", remote}, {"received_bytes", stream.Unconsumed().size()}});
        }
        return;
      }
      scan = ScanHead(stream.Unconsumed(), static_cast<size_t>(limits.max_header_bytes));
    }

    std::string method, path;
    PeekRequestLine(stream.Unconsumed(), &method, &path);
    // The route's name and probe flag label a refusal sent from here; the library routes the
    // request itself. A request without a principal gets a smaller cap once the dispatcher
    // has authenticated its head, before any of its body is read (dispatcher.h).
    ctx.max_body_bytes = limits.max_body_bytes;
    if (const Route* r = env.dispatcher->routes().Find(method, path)) {
      ctx.route = std::string(r->name);
      ctx.probe = r->probe;
    }
    if (scan.outcome == HeadScan::Outcome::kTooLarge) {
      ctx.request_id = NewRequestId();
      Refuse(transport, env, ctx, HeadersTooLarge(limits.max_header_bytes), method, path, "header_too_large");
      return;
    }
    if (scan.outcome == HeadScan::Outcome::kBareLineFeed) {
      ctx.request_id = NewRequestId();
      Refuse(transport, env, ctx, MalformedRequest("header lines must end with CRLF"), method, path, "malformed");
      return;
    }

    HeadParse parsed = ParseRequestHead(stream.Unconsumed().substr(0, scan.head_bytes), ctx.max_body_bytes,
                                        limits.max_header_bytes);
    // The server's id is always its own, so no client can make two requests share one; the
    // client's is kept beside it for correlation (audit record and access log).
    ctx.request_id = NewRequestId();
    ctx.client_request_id = parsed.head.request_id;
    if (const RequestAuditor* auditor = env.dispatcher->auditor()) {
      ctx.client_request_id = auditor->ClientText(ctx.client_request_id);
    }
    if (parsed.error) {
      const char* reason = parsed.error->http_status == 413   ? "body_too_large"
                           : parsed.error->http_status == 431 ? "header_too_large"
                                                              : "refused_request";
      Refuse(transport, env, ctx, *parsed.error, method, path, reason);
      return;
    }

    if (parsed.head.framing == BodyFraming::kContentLength) ctx.declared_body_bytes = parsed.head.content_length;
    stream.BeginRequest(scan.head_bytes, parsed.head.library_head, parsed.head.framing, parsed.head.content_length,
                        deadline, &ctx);
    const bool bodyless = parsed.head.framing == BodyFraming::kNone ||
                          (parsed.head.framing == BodyFraming::kContentLength && parsed.head.content_length == 0);
    if (bodyless) stream.EndArrival(true);  // else the stream ends it with the body's last byte
    ++served;
    bool close_after = env.stopping->load() || served >= limits.max_requests_per_connection;
    Dispatcher::Outcome out = env.dispatcher->Process(stream, ctx, close_after);
    stream.EndArrival(true);  // a chunked body's end is the library's to find

    bool body_in_sync = parsed.head.framing == BodyFraming::kNone ||
                        (parsed.head.framing == BodyFraming::kContentLength &&
                         stream.BodyConsumed() >= parsed.head.content_length) ||
                        (parsed.head.framing == BodyFraming::kChunked && out.status > 0 && out.status < 400 &&
                         stream.ChunkedBodyEnded());
    if (ctx.body_limit_hit) env.metrics->connections_closed.WithLabels({"body_too_large"}).Increment();
    if (ctx.read_deadline_hit) env.metrics->connections_closed.WithLabels({"read_timeout"}).Increment();
    if (!out.ok || out.connection_closed || close_after || ctx.body_limit_hit || ctx.read_deadline_hit ||
        ctx.library_refused || !body_in_sync) {
      // Unread body bytes at close would make the kernel reset the connection, which can
      // destroy the answer before the client reads it.
      if (ctx.body_limit_hit || (ctx.refused_before_body && !bodyless)) LingeringClose(transport, 500);
      return;
    }
  }
}

}  // namespace kimi::http
