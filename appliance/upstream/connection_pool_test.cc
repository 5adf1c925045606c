#include "upstream/connection_pool.h"

#include <gtest/gtest.h>

#include <thread>

namespace kimi::upstream {
namespace {

using namespace std::chrono_literals;

struct FakeConnection {
  int id = 0;
};
using Pool = ConnectionPool<FakeConnection>;

std::unique_ptr<FakeConnection> Make(int id) { return std::make_unique<FakeConnection>(FakeConnection{id}); }

TEST(ConnectionPoolTest, EmptyPoolHasNothingToReuse) {
  Pool pool(4, 10s);
  EXPECT_EQ(pool.TakeIdle(), nullptr);
}

TEST(ConnectionPoolTest, ReusesAReleasedConnection) {
  Pool pool(4, 10s);
  std::unique_ptr<FakeConnection> first = Make(1);
  FakeConnection* address = first.get();
  pool.Release(std::move(first));
  EXPECT_EQ(pool.idle(), 1u);
  std::unique_ptr<FakeConnection> again = pool.TakeIdle();
  EXPECT_EQ(again.get(), address);
  EXPECT_EQ(pool.idle(), 0u);
  EXPECT_EQ(pool.TakeIdle(), nullptr);
}

TEST(ConnectionPoolTest, TheMostRecentlyReleasedComesFirst) {
  Pool pool(4, 10s);
  pool.Release(Make(1));
  pool.Release(Make(2));
  EXPECT_EQ(pool.TakeIdle()->id, 2);
  EXPECT_EQ(pool.TakeIdle()->id, 1);
}

TEST(ConnectionPoolTest, KeepsAtMostTheLimit) {
  Pool pool(2, 10s);
  for (int i = 0; i < 3; ++i) pool.Release(Make(i));
  EXPECT_EQ(pool.idle(), 2u);
}

TEST(ConnectionPoolTest, AnIdleConnectionPastTheAgeLimitIsNotReused) {
  Pool pool(4, 0ms);
  pool.Release(Make(1));
  std::this_thread::sleep_for(5ms);  // the age limit is 0: any wait makes the connection stale
  EXPECT_EQ(pool.TakeIdle(), nullptr);
  EXPECT_EQ(pool.idle(), 0u);
}

TEST(ConnectionPoolTest, AZeroAgeLimitKeepsNothing) {
  Pool pool(4, 0s);
  pool.Release(Make(1));
  EXPECT_EQ(pool.idle(), 0u);
  EXPECT_EQ(pool.TakeIdle(), nullptr);
}

TEST(ConnectionPoolTest, ReleasingNothingKeepsNothing) {
  Pool pool(4, 10s);
  pool.Release(nullptr);
  EXPECT_EQ(pool.idle(), 0u);
}

}  // namespace
}  // namespace kimi::upstream
