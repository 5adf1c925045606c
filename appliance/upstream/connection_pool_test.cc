#include "upstream/connection_pool.h"

#include <gtest/gtest.h>
#include <thread>
#include <httplib.h>

namespace kimi::upstream {
namespace {

using namespace std::chrono_literals;

struct Counting {
  int made = 0;
  std::function<std::unique_ptr<httplib::Client>()> Factory() {
    return [this] {
      ++made;
      return std::make_unique<httplib::Client>("http://127.0.0.1:9");
    };
  }
};

TEST(ConnectionPoolTest, ReusesAReleasedClient) {
  Counting counting;
  ConnectionPool pool(counting.Factory(), 4, 10s);
  std::unique_ptr<httplib::Client> first = pool.Acquire();
  httplib::Client* address = first.get();
  pool.Release(std::move(first));
  EXPECT_EQ(pool.idle(), 1u);
  std::unique_ptr<httplib::Client> again = pool.Acquire();
  EXPECT_EQ(again.get(), address);
  EXPECT_EQ(counting.made, 1);
  EXPECT_EQ(pool.idle(), 0u);
}

TEST(ConnectionPoolTest, ConcurrentAcquiresGetDistinctClients) {
  Counting counting;
  ConnectionPool pool(counting.Factory(), 4, 10s);
  std::unique_ptr<httplib::Client> a = pool.Acquire();
  std::unique_ptr<httplib::Client> b = pool.Acquire();
  EXPECT_NE(a.get(), b.get());
  EXPECT_EQ(counting.made, 2);
}

TEST(ConnectionPoolTest, KeepsAtMostTheLimit) {
  Counting counting;
  ConnectionPool pool(counting.Factory(), 2, 10s);
  std::vector<std::unique_ptr<httplib::Client>> held;
  for (int i = 0; i < 3; ++i) held.push_back(pool.Acquire());
  for (auto& c : held) pool.Release(std::move(c));
  EXPECT_EQ(pool.idle(), 2u);
}

TEST(ConnectionPoolTest, AnIdleClientPastTheLimitIsNotReused) {
  Counting counting;
  ConnectionPool pool(counting.Factory(), 4, 0ms);
  pool.Release(pool.Acquire());
  std::this_thread::sleep_for(5ms);  // the age limit is 0: any wait makes the client stale
  std::unique_ptr<httplib::Client> fresh = pool.Acquire();
  EXPECT_EQ(counting.made, 2);
  EXPECT_EQ(pool.idle(), 0u);
}

TEST(ConnectionPoolTest, ReleasingNothingKeepsNothing) {
  Counting counting;
  ConnectionPool pool(counting.Factory(), 4, 10s);
  pool.Release(nullptr);
  EXPECT_EQ(pool.idle(), 0u);
}

}  // namespace
}  // namespace kimi::upstream
