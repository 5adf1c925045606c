#include "runtime/request_channel.h"

#include <gtest/gtest.h>

namespace kimi {
namespace {

GenerationEvent Token(int32_t id) {
  GenerationEvent event;
  event.token = id;
  event.text = "t";
  return event;
}

// A reader that falls kMaxUnreadEvents behind ends its request: the tokens it has not read
// are kept, the next one becomes an error after them, and the scheduler sees it cancelled.
TEST(RequestChannel, AReaderTooFarBehindEndsTheRequestInsteadOfQueueingItAll) {
  RequestChannel channel(1);
  const size_t pushed = RequestChannel::kMaxUnreadEvents + 1000;
  for (size_t i = 0; i < pushed; ++i) channel.Push(Token(int32_t(i)));
  EXPECT_TRUE(channel.cancelled());
  EXPECT_TRUE(channel.closed());
  GenerationEvent event;
  size_t tokens = 0;
  while (channel.Next(&event) && event.kind == GenerationEvent::Kind::kToken) {
    EXPECT_EQ(event.token, int32_t(tokens));
    ++tokens;
  }
  EXPECT_EQ(tokens, RequestChannel::kMaxUnreadEvents);
  ASSERT_EQ(event.kind, GenerationEvent::Kind::kError);
  EXPECT_EQ(event.error.code(), Status::Code::kCancelled);
  EXPECT_FALSE(channel.Next(&event));
}

// A reader that keeps up is never cut, however long the output.
TEST(RequestChannel, AReaderThatKeepsUpGetsEveryToken) {
  RequestChannel channel(2);
  GenerationEvent event;
  for (size_t i = 0; i < 3 * RequestChannel::kMaxUnreadEvents; ++i) {
    channel.Push(Token(int32_t(i)));
    if (i % 100 == 99) {
      for (int k = 0; k < 100; ++k) ASSERT_TRUE(channel.Next(&event));
    }
  }
  EXPECT_FALSE(channel.cancelled());
  GenerationEvent finish;
  finish.kind = GenerationEvent::Kind::kFinish;
  channel.Push(finish);
  size_t left = 0;
  while (channel.Next(&event) && event.kind == GenerationEvent::Kind::kToken) ++left;
  EXPECT_EQ(left, 3 * RequestChannel::kMaxUnreadEvents % 100);
  EXPECT_EQ(event.kind, GenerationEvent::Kind::kFinish);
}

}  // namespace
}  // namespace kimi
