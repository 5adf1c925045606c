#include "upstream/http_connection.h"

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <functional>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace kimi::upstream {
namespace {

// A loopback server that answers each request on a connection with the next scripted reply,
// written piece by piece; after the last reply it closes, or, with `stall`, waits until the
// test ends. Replies are raw bytes, so broken framing can be scripted too.
class ScriptedServer {
 public:
  struct Reply {
    std::vector<std::string> pieces;
    bool close_after = false;
  };

  explicit ScriptedServer(std::vector<Reply> replies, bool stall = false) : replies_(std::move(replies)), stall_(stall) {
    listen_fd_ = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    ::bind(listen_fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr);
    ::listen(listen_fd_, 8);
    socklen_t len = sizeof addr;
    ::getsockname(listen_fd_, reinterpret_cast<sockaddr*>(&addr), &len);
    port_ = ntohs(addr.sin_port);
    thread_ = std::thread([this] { Serve(); });
  }
  ~ScriptedServer() {
    stop_ = true;
    ::shutdown(listen_fd_, SHUT_RDWR);
    if (conn_fd_ >= 0) ::shutdown(conn_fd_, SHUT_RDWR);
    thread_.join();
    ::close(listen_fd_);
  }

  HttpAddress address() const { return ParseHttpUrl("http://127.0.0.1:" + std::to_string(port_)).value(); }
  int accepted() const { return accepted_; }
  std::vector<std::string> requests() {
    std::lock_guard<std::mutex> lock(mu_);
    return requests_;
  }

 private:
  void Serve() {
    size_t next = 0;
    while (!stop_ && next < replies_.size()) {
      int fd = ::accept(listen_fd_, nullptr, nullptr);
      if (fd < 0) return;
      ++accepted_;
      conn_fd_ = fd;
      int one = 1;
      ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
      std::string received;
      while (next < replies_.size()) {
        if (!ReadRequest(fd, &received)) break;
        const Reply& reply = replies_[next++];
        for (const std::string& piece : reply.pieces) ::send(fd, piece.data(), piece.size(), MSG_NOSIGNAL);
        if (reply.close_after) break;
      }
      if (stall_) {
        char c;
        while (!stop_ && ::recv(fd, &c, 1, 0) > 0) {
        }
      }
      conn_fd_ = -1;
      ::close(fd);
    }
  }

  // Reads one request (head and Content-Length body) off `fd`; false when the peer closed.
  bool ReadRequest(int fd, std::string* received) {
    for (;;) {
      size_t head_end = received->find("\r\n\r\n");
      if (head_end != std::string::npos) {
        size_t length = 0;
        if (size_t cl = received->find("Content-Length: "); cl != std::string::npos && cl < head_end) {
          length = std::stoul(received->substr(cl + 16));
        }
        if (received->size() >= head_end + 4 + length) {
          std::lock_guard<std::mutex> lock(mu_);
          requests_.push_back(received->substr(0, head_end + 4 + length));
          received->erase(0, head_end + 4 + length);
          return true;
        }
      }
      char buf[4096];
      ssize_t n = ::recv(fd, buf, sizeof buf, 0);
      if (n <= 0) return false;
      received->append(buf, static_cast<size_t>(n));
    }
  }

  std::vector<Reply> replies_;
  bool stall_;
  int listen_fd_ = -1;
  std::atomic<int> conn_fd_{-1};
  int port_ = 0;
  std::atomic<bool> stop_{false};
  std::atomic<int> accepted_{0};
  std::mutex mu_;
  std::vector<std::string> requests_;
  std::thread thread_;
};

const char kRequest[] = "POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\n\r\n{}";
const char kChunkedHead[] = "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n";
const char kChunkedBody[] = "7\r\ndata: 1\r\n7\r\ndata: 2\r\n0\r\n\r\n";

std::unique_ptr<HttpConnection> Connect(const ScriptedServer& server, int64_t io_timeout_ms = 10'000) {
  Result<std::unique_ptr<HttpConnection>> c = HttpConnection::Open(server.address(), 2'000, io_timeout_ms);
  EXPECT_TRUE(c.ok()) << c.status().ToString();
  return c.ok() ? std::move(c).value() : nullptr;
}

struct Read {
  Status status;
  ResponseHead head;
  std::string body;
  bool stopped = false;
};

Read Exchange(HttpConnection& c, std::function<bool(std::string_view)> on_data = nullptr) {
  Read r;
  r.status = c.Send(kRequest);
  if (r.status.ok()) r.status = c.ReadHead(&r.head);
  if (!r.status.ok()) return r;
  r.status = c.ReadBody(
      r.head,
      [&](std::string_view data) {
        r.body.append(data);
        return on_data == nullptr || on_data(data);
      },
      &r.stopped);
  return r;
}

// Every way of cutting the reply into two writes.
TEST(HttpConnectionTest, ChunkedBodySplitAtEveryByte) {
  const std::string reply = std::string(kChunkedHead) + kChunkedBody;
  for (size_t cut = 1; cut < reply.size(); ++cut) {
    ScriptedServer server({{{reply.substr(0, cut), reply.substr(cut)}}});
    auto c = Connect(server);
    ASSERT_NE(c, nullptr);
    Read r = Exchange(*c);
    ASSERT_TRUE(r.status.ok()) << "cut at " << cut << ": " << r.status.ToString();
    EXPECT_EQ(r.head.status, 200);
    EXPECT_EQ(r.head.content_type, "text/event-stream");
    EXPECT_EQ(r.head.framing, ResponseHead::Framing::kChunked);
    EXPECT_EQ(r.body, "data: 1data: 2") << "cut at " << cut;
    EXPECT_TRUE(c->Reusable());
  }
}

TEST(HttpConnectionTest, KeepAliveCarriesTheNextRequest) {
  const std::string reply = std::string(kChunkedHead) + kChunkedBody;
  ScriptedServer server({{{reply}}, {{reply}}});
  auto c = Connect(server);
  ASSERT_NE(c, nullptr);
  EXPECT_EQ(Exchange(*c).body, "data: 1data: 2");
  ASSERT_TRUE(c->Reusable());
  EXPECT_TRUE(c->StillIdle());
  Read second = Exchange(*c);
  ASSERT_TRUE(second.status.ok()) << second.status.ToString();
  EXPECT_EQ(second.body, "data: 1data: 2");
  EXPECT_EQ(server.accepted(), 1);
  EXPECT_EQ(server.requests().size(), 2u);
  EXPECT_EQ(server.requests()[0], kRequest);
}

TEST(HttpConnectionTest, ContentLengthBody) {
  ScriptedServer server({{{"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 10\r\n\r\n{\"a\":", "true}"}}});
  auto c = Connect(server);
  ASSERT_NE(c, nullptr);
  Read r = Exchange(*c);
  ASSERT_TRUE(r.status.ok()) << r.status.ToString();
  EXPECT_EQ(r.head.framing, ResponseHead::Framing::kContentLength);
  EXPECT_EQ(r.body, "{\"a\":true}");
  EXPECT_TRUE(c->Reusable());
}

TEST(HttpConnectionTest, ErrorStatusBeforeStreamingIsReadWhole) {
  const std::string body = R"({"error":{"message":"too long","code":400}})";
  ScriptedServer server({{{"HTTP/1.1 400 Bad Request\r\nContent-Type: application/json\r\nContent-Length: " +
                           std::to_string(body.size()) + "\r\n\r\n" + body}}});
  auto c = Connect(server);
  ASSERT_NE(c, nullptr);
  Read r = Exchange(*c);
  ASSERT_TRUE(r.status.ok()) << r.status.ToString();
  EXPECT_EQ(r.head.status, 400);
  EXPECT_EQ(r.body, body);
}

TEST(HttpConnectionTest, InterimResponsesAreSkipped) {
  ScriptedServer server({{{"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok"}}});
  auto c = Connect(server);
  ASSERT_NE(c, nullptr);
  Read r = Exchange(*c);
  EXPECT_EQ(r.head.status, 200);
  EXPECT_EQ(r.body, "ok");
}

TEST(HttpConnectionTest, InterimResponsesWithoutEndAreRefused) {
  std::string endless;
  for (int i = 0; i < 64; ++i) endless += "HTTP/1.1 102 Processing\r\n\r\n";
  ScriptedServer server({{{endless}}});
  auto c = Connect(server);
  ASSERT_NE(c, nullptr);
  Read r = Exchange(*c);
  EXPECT_EQ(r.status.code(), Status::Code::kCorruption) << r.status.ToString();
}

TEST(HttpConnectionTest, APassedDeadlineEndsTheExchange) {
  ScriptedServer server({{{kChunkedHead, kChunkedBody}}});
  auto c = Connect(server);
  ASSERT_NE(c, nullptr);
  c->SetDeadline(std::chrono::steady_clock::now());  // no read may start after it
  Read r = Exchange(*c);
  EXPECT_EQ(r.status.code(), Status::Code::kDeadlineExceeded) << r.status.ToString();
  EXPECT_FALSE(c->Reusable());
}

TEST(HttpConnectionTest, InterruptEndsAReadBlockedOnAnotherThread) {
  ScriptedServer server({{{kChunkedHead, "7\r\ndata: 1\r\n"}}}, /*stall=*/true);
  auto c = Connect(server);
  ASSERT_NE(c, nullptr);
  std::atomic<bool> got_data{false};
  std::thread interrupter([&] {
    while (!got_data.load()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    c->Interrupt();  // whether the next recv() has begun or not, it returns at once
  });
  // Without the interrupt this read would wait the 10 s silence: the server sends no more.
  Read r = Exchange(*c, [&](std::string_view) {
    got_data = true;
    return true;
  });
  interrupter.join();
  EXPECT_EQ(r.status.code(), Status::Code::kUnavailable) << r.status.ToString();
  EXPECT_EQ(r.body, "data: 1");
  EXPECT_FALSE(c->Reusable());
}

TEST(HttpConnectionTest, ServerClosingMidStreamIsUnavailable) {
  ScriptedServer server({{{kChunkedHead, "7\r\ndata: 1\r\n7\r\nda"}, /*close_after=*/true}});
  auto c = Connect(server);
  ASSERT_NE(c, nullptr);
  Read r = Exchange(*c);
  EXPECT_EQ(r.status.code(), Status::Code::kUnavailable) << r.status.ToString();
  EXPECT_EQ(r.body.substr(0, 7), "data: 1");
  EXPECT_FALSE(c->Reusable());
}

TEST(HttpConnectionTest, ServerClosingBeforeTheHeadIsUnavailableWithNothingReceived) {
  ScriptedServer server({{{}, /*close_after=*/true}});
  auto c = Connect(server);
  ASSERT_NE(c, nullptr);
  Read r = Exchange(*c);
  EXPECT_EQ(r.status.code(), Status::Code::kUnavailable) << r.status.ToString();
  EXPECT_FALSE(c->received_any());
}

TEST(HttpConnectionTest, BodyUntilCloseEndsAtTheClose) {
  ScriptedServer server({{{"HTTP/1.0 200 OK\r\nContent-Type: text/event-stream\r\n\r\n", "data: 1\n\n"}, true}});
  auto c = Connect(server);
  ASSERT_NE(c, nullptr);
  Read r = Exchange(*c);
  ASSERT_TRUE(r.status.ok()) << r.status.ToString();
  EXPECT_EQ(r.head.framing, ResponseHead::Framing::kUntilClose);
  EXPECT_EQ(r.body, "data: 1\n\n");
  EXPECT_FALSE(c->Reusable());
}

TEST(HttpConnectionTest, ConnectionCloseIsNotReused) {
  ScriptedServer server({{{"HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: 2\r\n\r\nok"}, true}});
  auto c = Connect(server);
  ASSERT_NE(c, nullptr);
  Read r = Exchange(*c);
  ASSERT_TRUE(r.status.ok());
  EXPECT_TRUE(r.head.close);
  EXPECT_FALSE(c->Reusable());
}

TEST(HttpConnectionTest, SilenceTimesOut) {
  ScriptedServer server({{{kChunkedHead, "7\r\ndata: 1\r\n"}}}, /*stall=*/true);
  auto c = Connect(server, /*io_timeout_ms=*/200);
  ASSERT_NE(c, nullptr);
  Read r = Exchange(*c);
  EXPECT_EQ(r.status.code(), Status::Code::kDeadlineExceeded) << r.status.ToString();
  EXPECT_EQ(r.body, "data: 1");
  EXPECT_FALSE(c->Reusable());
}

TEST(HttpConnectionTest, HandlerStopsTheRead) {
  ScriptedServer server({{{kChunkedHead, "7\r\ndata: 1\r\n"}}}, /*stall=*/true);
  auto c = Connect(server);
  ASSERT_NE(c, nullptr);
  Read r = Exchange(*c, [](std::string_view) { return false; });
  ASSERT_TRUE(r.status.ok()) << r.status.ToString();
  EXPECT_TRUE(r.stopped);
  EXPECT_FALSE(c->Reusable());
}

TEST(HttpConnectionTest, MalformedHeadIsCorruption) {
  ScriptedServer server({{{"SSH-2.0-OpenSSH\r\n\r\n"}}});
  auto c = Connect(server);
  ASSERT_NE(c, nullptr);
  EXPECT_EQ(Exchange(*c).status.code(), Status::Code::kCorruption);
}

TEST(HttpConnectionTest, AClosedIdleConnectionIsNoLongerIdle) {
  ScriptedServer server({{{"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok"}, true}});
  auto c = Connect(server);
  ASSERT_NE(c, nullptr);
  Read r = Exchange(*c);
  ASSERT_TRUE(r.status.ok());
  // The server closes after its reply; the close arrives within moments.
  for (int i = 0; i < 200 && c->StillIdle(); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  EXPECT_FALSE(c->StillIdle());
}

TEST(HttpConnectionTest, RefusedConnectIsUnavailable) {
  HttpAddress address;
  {
    ScriptedServer gone({});
    address = gone.address();
  }
  Result<std::unique_ptr<HttpConnection>> c = HttpConnection::Open(address, 2'000, 1'000);
  ASSERT_FALSE(c.ok());
  EXPECT_EQ(c.status().code(), Status::Code::kUnavailable);
}

TEST(HttpUrlTest, SplitsHostAndPort) {
  Result<HttpAddress> a = ParseHttpUrl("http://127.0.0.1:8000/");
  ASSERT_TRUE(a.ok());
  EXPECT_EQ(a->host, "127.0.0.1");
  EXPECT_EQ(a->port, "8000");
  EXPECT_EQ(a->host_header, "127.0.0.1:8000");
  Result<HttpAddress> v6 = ParseHttpUrl("http://[::1]:9");
  ASSERT_TRUE(v6.ok());
  EXPECT_EQ(v6->host, "::1");
  EXPECT_EQ(v6->port, "9");
  EXPECT_EQ(ParseHttpUrl("http://worker")->port, "80");
  EXPECT_FALSE(ParseHttpUrl("https://h:1").ok());
  EXPECT_FALSE(ParseHttpUrl("http://h:1/v1").ok());
  EXPECT_FALSE(ParseHttpUrl("http://h:x").ok());
}

}  // namespace
}  // namespace kimi::upstream
