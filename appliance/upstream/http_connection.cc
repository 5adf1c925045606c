#include "upstream/http_connection.h"

#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>

#include "kimi/ascii_text.h"
#include "upstream/chunked_decoder.h"

namespace kimi::upstream {
namespace {

constexpr size_t kReadBytes = 16 * 1024;
constexpr size_t kMaxHeadBytes = 64 * 1024;
constexpr int kMaxInterimResponses = 8;

bool ContainsTokenIgnoreCase(std::string_view list, std::string_view token) {
  size_t start = 0;
  while (start <= list.size()) {
    size_t comma = list.find(',', start);
    const std::string_view item =
        TrimSpacesAndTabs(list.substr(start, comma == std::string_view::npos ? std::string_view::npos : comma - start));
    if (EqualsIgnoringAsciiCase(item, token)) return true;
    if (comma == std::string_view::npos) break;
    start = comma + 1;
  }
  return false;
}

// A head line without the CR ending it and the spaces and tabs around its text.
std::string_view TrimLine(std::string_view s) {
  while (!s.empty() && (s.back() == '\r' || s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return TrimSpacesAndTabs(s);
}

timeval ToTimeval(int64_t ms) {
  timeval tv{};
  tv.tv_sec = static_cast<time_t>(ms / 1000);
  tv.tv_usec = static_cast<suseconds_t>((ms % 1000) * 1000);
  return tv;
}

// Connects `fd` to `addr` within `timeout_ms`; the socket is blocking again on return.
Status ConnectWithin(int fd, const addrinfo& addr, int64_t timeout_ms) {
  int flags = ::fcntl(fd, F_GETFL, 0);
  ::fcntl(fd, F_SETFL, flags | O_NONBLOCK);
  int rc = ::connect(fd, addr.ai_addr, addr.ai_addrlen);
  if (rc != 0 && errno != EINPROGRESS) return Status::Unavailable(std::string("connect: ") + std::strerror(errno));
  if (rc != 0) {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
    for (;;) {
      auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
      pollfd p{fd, POLLOUT, 0};
      int n = ::poll(&p, 1, static_cast<int>(std::max<int64_t>(0, left.count())));
      if (n < 0 && errno == EINTR) continue;
      if (n == 0) return Status::Unavailable("connect: timed out after " + std::to_string(timeout_ms) + " ms");
      if (n < 0) return Status::Unavailable(std::string("connect: ") + std::strerror(errno));
      break;
    }
    int error = 0;
    socklen_t len = sizeof error;
    ::getsockopt(fd, SOL_SOCKET, SO_ERROR, &error, &len);
    if (error != 0) return Status::Unavailable(std::string("connect: ") + std::strerror(error));
  }
  ::fcntl(fd, F_SETFL, flags);
  return Status::OK();
}

}  // namespace

Result<HttpAddress> ParseHttpUrl(std::string_view url) {
  constexpr std::string_view kScheme = "http://";
  if (url.substr(0, kScheme.size()) != kScheme) return Status::InvalidArgument("upstream URL must start with http://");
  std::string_view rest = url.substr(kScheme.size());
  while (!rest.empty() && rest.back() == '/') rest.remove_suffix(1);
  if (rest.empty() || rest.find('/') != std::string_view::npos) {
    return Status::InvalidArgument("upstream URL must be http://host:port");
  }
  HttpAddress address;
  address.host_header = std::string(rest);
  std::string_view host = rest, port = "80";
  if (rest.front() == '[') {
    size_t close = rest.find(']');
    if (close == std::string_view::npos) return Status::InvalidArgument("upstream URL: unclosed [ in the host");
    host = rest.substr(1, close - 1);
    if (close + 1 < rest.size()) {
      if (rest[close + 1] != ':') return Status::InvalidArgument("upstream URL: junk after the IPv6 host");
      port = rest.substr(close + 2);
    }
  } else if (size_t colon = rest.rfind(':'); colon != std::string_view::npos) {
    host = rest.substr(0, colon);
    port = rest.substr(colon + 1);
  }
  if (host.empty() || port.empty() || port.find_first_not_of("0123456789") != std::string_view::npos) {
    return Status::InvalidArgument("upstream URL must be http://host:port");
  }
  address.host = std::string(host);
  address.port = std::string(port);
  return address;
}

Result<std::unique_ptr<HttpConnection>> HttpConnection::Open(const HttpAddress& address, int64_t connect_timeout_ms,
                                                             int64_t io_timeout_ms) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* found = nullptr;
  if (int rc = ::getaddrinfo(address.host.c_str(), address.port.c_str(), &hints, &found); rc != 0) {
    return Status::Unavailable("cannot resolve " + address.host + ": " + ::gai_strerror(rc));
  }
  Status last = Status::Unavailable("no address for " + address.host);
  for (addrinfo* a = found; a != nullptr; a = a->ai_next) {
    int fd = ::socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC, a->ai_protocol);
    if (fd < 0) {
      last = Status::Unavailable(std::string("socket: ") + std::strerror(errno));
      continue;
    }
    std::unique_ptr<HttpConnection> connection(new HttpConnection(fd, io_timeout_ms));
    last = ConnectWithin(fd, *a, connect_timeout_ms);
    if (!last.ok()) continue;
    int one = 1;
    ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    timeval tv = ToTimeval(io_timeout_ms);
    ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    ::setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
    ::freeaddrinfo(found);
    return connection;
  }
  ::freeaddrinfo(found);
  return last;
}

HttpConnection::HttpConnection(int fd, int64_t io_timeout_ms)
    : fd_(fd), buffer_(kReadBytes), io_timeout_ms_(io_timeout_ms), receive_timeout_ms_(io_timeout_ms) {}

void HttpConnection::SetReceiveTimeout(int64_t ms) {
  if (ms == receive_timeout_ms_) return;
  timeval tv = ToTimeval(ms);
  ::setsockopt(fd_, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  receive_timeout_ms_ = ms;
}

void HttpConnection::SetDeadline(std::chrono::steady_clock::time_point deadline) {
  deadline_ = deadline;
  if (deadline == std::chrono::steady_clock::time_point::max()) {
    SetReceiveTimeout(io_timeout_ms_);
    return;
  }
  // One system call per exchange, not per read: the whole exchange must fit in what is left,
  // so no single wait may be longer.
  const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
  SetReceiveTimeout(std::clamp<int64_t>(left.count(), 1, io_timeout_ms_));
}

void HttpConnection::Interrupt() {
  interrupted_.store(true);
  ::shutdown(fd_, SHUT_RDWR);
}

HttpConnection::~HttpConnection() { ::close(fd_); }

bool HttpConnection::StillIdle() const {
  char c;
  ssize_t n = ::recv(fd_, &c, 1, MSG_PEEK | MSG_DONTWAIT);
  return n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK);
}

Status HttpConnection::Send(std::string_view request) {
  reusable_ = false;
  received_any_ = false;
  while (!request.empty()) {
    ssize_t n = ::send(fd_, request.data(), request.size(), MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return Status::DeadlineExceeded("upstream write timed out");
    if (n < 0) return Status::Unavailable(std::string("upstream write failed: ") + std::strerror(errno));
    request.remove_prefix(static_cast<size_t>(n));
  }
  return Status::OK();
}

Status HttpConnection::Fill(bool* eof) {
  if (begin_ == end_) {
    begin_ = end_ = 0;
  } else if (end_ == buffer_.size()) {
    if (begin_ > 0) {
      std::memmove(buffer_.data(), buffer_.data() + begin_, end_ - begin_);
      end_ -= begin_;
      begin_ = 0;
    } else {
      buffer_.resize(buffer_.size() * 2);  // a head that does not fit yet (bounded by the caller)
    }
  }
  if (deadline_ != std::chrono::steady_clock::time_point::max() && std::chrono::steady_clock::now() >= deadline_) {
    return Status::DeadlineExceeded("the request's time limit passed");
  }
  for (;;) {
    ssize_t n = ::recv(fd_, buffer_.data() + end_, buffer_.size() - end_, 0);
    if (n > 0) {
      end_ += static_cast<size_t>(n);
      received_any_ = true;
      return Status::OK();
    }
    if (n == 0) {
      if (eof != nullptr) {
        *eof = true;
        return Status::OK();
      }
      return Status::Unavailable("upstream closed the connection before the response ended");
    }
    if (errno == EINTR) continue;
    if (errno == EAGAIN || errno == EWOULDBLOCK) return Status::DeadlineExceeded("upstream sent nothing in time");
    return Status::Unavailable(std::string("upstream read failed: ") + std::strerror(errno));
  }
}

Status HttpConnection::ReadHead(ResponseHead* head) {
  for (int interim = 0;; ++interim) {
    // A server that answers 1xx without end would hold the request as pings do.
    if (interim > kMaxInterimResponses) return Status::Corruption("upstream sent interim responses without end");
    size_t head_end = std::string_view::npos, scanned = 0;
    for (;;) {
      std::string_view received(buffer_.data() + begin_, end_ - begin_);
      // A head ends at its first empty line ("\r\n\r\n", or "\n\n" from a lenient server).
      for (size_t i = scanned; i < received.size() && head_end == std::string_view::npos; ++i) {
        if (received[i] != '\n') continue;
        if (i >= 1 && received[i - 1] == '\n') head_end = i + 1;
        else if (i >= 2 && received[i - 1] == '\r' && received[i - 2] == '\n') head_end = i + 1;
      }
      if (head_end != std::string_view::npos) break;
      scanned = received.size();
      if (received.size() > kMaxHeadBytes) return Status::Corruption("upstream response head too large");
      KIMI_RETURN_IF_ERROR(Fill());
    }
    std::string_view text(buffer_.data() + begin_, head_end);
    begin_ += head_end;

    *head = ResponseHead{};
    size_t eol = text.find('\n');
    std::string_view status_line = TrimLine(text.substr(0, eol));
    if (status_line.size() < 12 || status_line.substr(0, 7) != "HTTP/1." || status_line[8] != ' ') {
      return Status::Corruption("upstream answered without an HTTP/1.x status line");
    }
    const bool http10 = status_line[7] == '0';
    for (size_t i = 9; i < 12; ++i) {
      if (status_line[i] < '0' || status_line[i] > '9') return Status::Corruption("upstream status is not a number");
      head->status = head->status * 10 + (status_line[i] - '0');
    }
    bool chunked = false, has_length = false, keep_alive = false;
    for (size_t pos = eol + 1; pos < text.size();) {
      size_t next = text.find('\n', pos);
      std::string_view line = text.substr(pos, next - pos);
      pos = next == std::string_view::npos ? text.size() : next + 1;
      size_t colon = line.find(':');
      if (colon == std::string_view::npos) continue;  // the empty line ending the head
      std::string_view name = line.substr(0, colon), value = TrimLine(line.substr(colon + 1));
      if (EqualsIgnoringAsciiCase(name, "content-type")) {
        head->content_type = std::string(value);
      } else if (EqualsIgnoringAsciiCase(name, "transfer-encoding")) {
        chunked = ContainsTokenIgnoreCase(value, "chunked");
      } else if (EqualsIgnoringAsciiCase(name, "content-length")) {
        if (value.empty() || value.size() > 18 || value.find_first_not_of("0123456789") != std::string_view::npos) {
          return Status::Corruption("upstream Content-Length is not a number");
        }
        head->content_length = std::stoull(std::string(value));
        has_length = true;
      } else if (EqualsIgnoringAsciiCase(name, "connection")) {
        head->close = head->close || ContainsTokenIgnoreCase(value, "close");
        keep_alive = ContainsTokenIgnoreCase(value, "keep-alive");
      }
    }
    if (head->status >= 100 && head->status < 200) continue;  // interim: the real head follows
    if (http10 && !keep_alive) head->close = true;
    if (chunked) head->framing = ResponseHead::Framing::kChunked;
    else if (has_length) head->framing = ResponseHead::Framing::kContentLength;
    else if (head->status == 204 || head->status == 304) head->framing = ResponseHead::Framing::kContentLength;
    else head->framing = ResponseHead::Framing::kUntilClose;
    return Status::OK();
  }
}

Status HttpConnection::ReadBody(const ResponseHead& head, const BodyHandler& on_data, bool* stopped) {
  *stopped = false;
  reusable_ = false;
  ChunkedDecoder chunks;
  uint64_t left = head.content_length;
  bool complete = head.framing == ResponseHead::Framing::kContentLength && left == 0;
  while (!complete) {
    if (begin_ == end_) {
      bool eof = false;
      KIMI_RETURN_IF_ERROR(Fill(head.framing == ResponseHead::Framing::kUntilClose ? &eof : nullptr));
      if (eof) return Status::OK();  // the server's close ended the body
    }
    char* data = buffer_.data() + begin_;
    size_t size = end_ - begin_;
    switch (head.framing) {
      case ResponseHead::Framing::kChunked: {
        size_t consumed = 0;
        KIMI_RETURN_IF_ERROR(chunks.Decode(data, &size, &consumed).WithContext("upstream chunked body"));
        begin_ += consumed;
        complete = chunks.done();
        break;
      }
      case ResponseHead::Framing::kContentLength:
        size = static_cast<size_t>(std::min<uint64_t>(size, left));
        left -= size;
        begin_ += size;
        complete = left == 0;
        break;
      case ResponseHead::Framing::kUntilClose:
        begin_ = end_;
        break;
    }
    if (size > 0 && !on_data(std::string_view(data, size))) {
      *stopped = true;
      return Status::OK();
    }
  }
  // Bytes beyond the response would be a pipelined answer to nothing: not a connection to reuse.
  reusable_ = !head.close && begin_ == end_;
  return Status::OK();
}

}  // namespace kimi::upstream
