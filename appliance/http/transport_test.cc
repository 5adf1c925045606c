// A silent peer holds a connection's thread until a deadline, never longer: the reads, the
// writes and the lingering close of a plain connection against a peer that keeps its socket
// open and sends nothing, or reads nothing.
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <future>
#include <memory>
#include <thread>

#include <gtest/gtest.h>

#include "http/connection.h"
#include "http/transport.h"

namespace kimi::http {
namespace {

using Clock = std::chrono::steady_clock;

// A connected pair of stream sockets; [1] plays the silent peer and stays open.
struct SocketPair {
  int fd[2] = {-1, -1};
  SocketPair() { EXPECT_EQ(::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fd), 0); }
  ~SocketPair() {
    ::close(fd[0]);
    ::close(fd[1]);
  }
};

// Runs `fn` on another thread and says whether it returned within `limit` (a hung call is
// left behind on its thread: the test fails instead of hanging).
template <class Fn>
bool ReturnsWithin(std::chrono::milliseconds limit, Fn fn) {
  auto done = std::make_shared<std::promise<void>>();
  std::future<void> finished = done->get_future();
  std::thread([done, fn]() mutable {
    fn();
    done->set_value();
  }).detach();
  return finished.wait_for(limit) == std::future_status::ready;
}

TEST(PollTimeout, RoundsUpToTheDeadline) {
  const auto now = Clock::now();
  EXPECT_EQ(PollTimeoutMs(now - std::chrono::milliseconds(5)), 0);
  EXPECT_EQ(PollTimeoutMs(now + std::chrono::microseconds(700)), 1);  // was 0: "not yet, nothing"
  EXPECT_GE(PollTimeoutMs(now + std::chrono::milliseconds(500)), 499);
  EXPECT_LE(PollTimeoutMs(now + std::chrono::milliseconds(500)), 500);
}

// The 503 rejecter's close drains what the client still sends for at most max_ms; against a
// silent client it used to end in a blocking recv() that never returned.
TEST(LingeringCloseTest, ReturnsByItsLimitAgainstASilentPeer) {
  for (int round = 0; round < 20; ++round) {
    auto pair = std::make_shared<SocketPair>();
    const bool returned = ReturnsWithin(std::chrono::seconds(5), [pair] {
      Transport transport(pair->fd[0]);
      LingeringClose(transport, 20);
    });
    ASSERT_TRUE(returned) << "round " << round;
  }
}

TEST(TransportTest, APlainReadTimesOutAgainstASilentPeer) {
  auto pair = std::make_shared<SocketPair>();
  Transport::ReadResult result = Transport::ReadResult::kOk;
  const bool returned = ReturnsWithin(std::chrono::seconds(5), [pair, &result] {
    Transport transport(pair->fd[0]);
    char buf[16];
    size_t n = 0;
    result = transport.Read(buf, sizeof buf, Clock::now() + std::chrono::milliseconds(30), &n);
  });
  ASSERT_TRUE(returned);
  EXPECT_EQ(result, Transport::ReadResult::kTimeout);
}

// The plain socket was blocking: ::send waited until the whole response was queued, so a client
// that stopped reading held its worker for ever, whatever limits.write_timeout_ms said.
TEST(TransportTest, APlainWriteTimesOutAgainstAPeerThatDoesNotRead) {
  auto pair = std::make_shared<SocketPair>();
  auto sent = std::make_shared<std::atomic<int>>(-1);  // -1 until the write returns, then 0 or 1
  const bool returned = ReturnsWithin(std::chrono::seconds(10), [pair, sent] {
    Transport transport(pair->fd[0]);
    const std::string response(8u << 20, 'x');
    *sent = SendAll(transport, response, /*timeout_ms=*/100) ? 1 : 0;
  });
  ASSERT_TRUE(returned) << "the write blocked past its timeout";
  EXPECT_EQ(*sent, 0);
}

}  // namespace
}  // namespace kimi::http
