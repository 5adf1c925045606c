#include "models/model_slot.h"

#include <gtest/gtest.h>

#include <atomic>
#include <mutex>
#include <thread>
#include <vector>

#include "models/slot_switcher.h"

namespace kimi::models {
namespace {

using namespace std::chrono_literals;

// A stand-in for a loaded model: every field carries the version it belongs to, so a reader
// that saw fields of two versions would notice. Its destructor says which thread unloaded it.
struct FakeModel {
  explicit FakeModel(int v, std::atomic<int>* unloaded = nullptr, std::thread::id* unloaded_on = nullptr)
      : version(v), layers(64, v), unloaded_count(unloaded), unloaded_thread(unloaded_on) {}
  ~FakeModel() {
    if (unloaded_thread) *unloaded_thread = std::this_thread::get_id();
    if (unloaded_count) unloaded_count->fetch_add(1);
  }
  int version;
  std::vector<int> layers;
  std::atomic<int>* unloaded_count;
  std::thread::id* unloaded_thread;
};

TEST(ModelSlotTest, EmptySlotGivesEmptyLease) {
  ModelSlot<FakeModel> slot;
  auto lease = slot.Acquire();
  EXPECT_FALSE(lease);
  EXPECT_EQ(lease.get(), nullptr);
  EXPECT_EQ(slot.generation(), 0u);
}

TEST(ModelSlotTest, InFlightRequestKeepsOldVersionUntilItFinishes) {
  ModelSlot<FakeModel> slot;
  std::atomic<int> unloaded{0};
  std::thread::id unloaded_on;
  EXPECT_FALSE(slot.Publish(std::make_shared<FakeModel>(1, &unloaded, &unloaded_on), "digest-1"));

  auto in_flight = slot.Acquire();  // a request that started on version 1
  ASSERT_TRUE(in_flight);
  EXPECT_EQ(in_flight->version, 1);
  EXPECT_EQ(in_flight.generation(), 1u);

  auto retired = slot.Publish(std::make_shared<FakeModel>(2), "digest-2");
  ASSERT_TRUE(retired);
  EXPECT_EQ(retired.generation(), 1u);
  EXPECT_EQ(retired.digest(), "digest-1");

  // New requests get version 2; the old request still reads version 1, intact.
  auto fresh = slot.Acquire();
  EXPECT_EQ(fresh->version, 2);
  EXPECT_EQ(fresh.digest(), "digest-2");
  EXPECT_EQ(in_flight->version, 1);
  EXPECT_EQ(in_flight->layers.front(), 1);
  EXPECT_EQ(retired.InFlight(), 1);
  EXPECT_FALSE(retired.WaitDrained(0ms));
  EXPECT_EQ(unloaded.load(), 0);

  // The request finishes on another thread; the swapper sees the drain and unloads.
  std::thread finisher([&] { in_flight.Release(); });
  EXPECT_TRUE(retired.WaitDrained(std::chrono::hours(1)));
  finisher.join();
  EXPECT_EQ(retired.InFlight(), 0);
  EXPECT_EQ(unloaded.load(), 0);  // drained, but the swapper has not dropped it yet
  retired = {};
  EXPECT_EQ(unloaded.load(), 1);
  EXPECT_EQ(unloaded_on, std::this_thread::get_id());  // unloaded by the swapper, not the request
}

TEST(ModelSlotTest, RetiredDroppedEarlyIsUnloadedByTheLastLease) {
  ModelSlot<FakeModel> slot;
  std::atomic<int> unloaded{0};
  slot.Publish(std::make_shared<FakeModel>(1, &unloaded), "a");
  auto lease = slot.Acquire();
  { auto retired = slot.Publish(std::make_shared<FakeModel>(2), "b"); }
  EXPECT_EQ(unloaded.load(), 0);
  EXPECT_EQ(lease->layers.back(), 1);
  lease = {};
  EXPECT_EQ(unloaded.load(), 1);
}

TEST(ModelSlotTest, ClearEmptiesTheSlotAndDrainsLikeASwap) {
  ModelSlot<FakeModel> slot;
  slot.Publish(std::make_shared<FakeModel>(7), "x");
  auto lease = slot.Acquire();
  auto retired = slot.Clear();
  EXPECT_FALSE(slot.Acquire());
  EXPECT_EQ(retired.generation(), 1u);
  EXPECT_FALSE(retired.WaitDrained(0ms));
  lease.Release();
  EXPECT_TRUE(retired.WaitDrained(0ms));
}

// Readers acquire continuously while the swapper publishes version after version, each
// drained before the next. Every reader must see one whole version per lease, and versions
// must never go backwards for one reader.
TEST(ModelSlotTest, NoRequestSeesAHalfSwappedVersionUnderConcurrentSwaps) {
  ModelSlot<FakeModel> slot;
  slot.Publish(std::make_shared<FakeModel>(1), "v1");
  constexpr int kVersions = 200;
  std::atomic<bool> stop{false};
  std::atomic<int> torn{0}, backwards{0}, empty{0};
  std::atomic<long> leases{0};
  std::vector<std::thread> readers;
  for (int r = 0; r < 4; ++r) {
    readers.emplace_back([&] {
      int last = 0;
      while (!stop.load()) {
        auto lease = slot.Acquire();
        if (!lease) {
          empty.fetch_add(1);
          continue;
        }
        int v = lease->version;
        for (int x : lease->layers)
          if (x != v) torn.fetch_add(1);
        if (lease.digest() != "v" + std::to_string(v)) torn.fetch_add(1);
        if (static_cast<uint64_t>(v) != lease.generation()) torn.fetch_add(1);
        if (v < last) backwards.fetch_add(1);
        last = v;
        leases.fetch_add(1);
      }
    });
  }
  for (int v = 2; v <= kVersions; ++v) {
    // Let the readers serve some requests on each version before replacing it.
    long before = leases.load();
    while (leases.load() < before + 4) std::this_thread::yield();
    auto retired = slot.Publish(std::make_shared<FakeModel>(v), "v" + std::to_string(v));
    ASSERT_TRUE(retired.WaitDrained(std::chrono::hours(1)));
  }
  stop.store(true);
  for (auto& t : readers) t.join();
  EXPECT_EQ(torn.load(), 0);
  EXPECT_EQ(backwards.load(), 0);
  EXPECT_EQ(empty.load(), 0);
  EXPECT_GT(leases.load(), 0);
  EXPECT_EQ(slot.generation(), static_cast<uint64_t>(kVersions));
}

// The daemon's pattern: a holder (the backend) re-pointed in on_switched hands requests
// shared_ptrs made from a lease, so the old version drains when the last copy goes.
TEST(SlotSwitcherTest, AHolderRepointedOnSwitchDrainsLikeALease) {
  ModelSlot<FakeModel> slot;
  std::atomic<int> unloaded{0};
  std::mutex attached_mu;
  std::shared_ptr<FakeModel> attached;  // guarded by attached_mu
  auto repoint = [&] {
    auto lease = std::make_shared<ModelSlot<FakeModel>::Lease>(slot.Acquire());
    std::lock_guard<std::mutex> lock(attached_mu);
    attached = *lease ? std::shared_ptr<FakeModel>(lease, lease->get()) : nullptr;
  };
  auto current = [&] {
    std::lock_guard<std::mutex> lock(attached_mu);
    return attached;
  };
  std::atomic<int> next_version{1};
  SlotSwitcher<FakeModel> switcher(
      "k3", &slot,
      [&](const ActiveVersion&) -> Result<std::shared_ptr<FakeModel>> {
        return std::make_shared<FakeModel>(next_version.load(), &unloaded);
      },
      std::chrono::minutes(1), repoint);
  ActiveVersion v1;
  v1.model_id = "k3";
  v1.digest = "d1";
  ASSERT_TRUE(switcher.LoadInitial(v1).ok());
  std::shared_ptr<FakeModel> request = current();  // a request in flight on version 1
  ASSERT_TRUE(request);
  ASSERT_EQ(request->version, 1);

  next_version = 2;
  ActiveVersion v2 = v1;
  v2.digest = "d2";
  ASSERT_TRUE(switcher.Prepare(v2).ok());
  std::thread swapper([&] { switcher.Switch("k3", v2); });
  for (;;) {  // new requests get version 2 once the hook has run, before the drain ends
    std::shared_ptr<FakeModel> now = current();
    if (now && now->version == 2) break;
    std::this_thread::yield();
  }
  EXPECT_EQ(unloaded.load(), 0);  // version 1 is still held by the request
  EXPECT_EQ(request->version, 1);
  request.reset();                // the request finishes: the drain can end
  swapper.join();
  EXPECT_EQ(unloaded.load(), 1);  // version 1 unloaded, version 2 serving
  EXPECT_EQ(current()->version, 2);
}

// What the daemon's backend does: it keeps the engine and the identity of its version as one
// pair, both taken from one lease, and each request copies the pair once. Under repeated
// activations every request's pair names the version whose engine it holds, which is what
// its audit record reports (the engine's own number is set by the loader, the identity comes
// from the slot, so a mix-up between the two shows).
TEST(SlotSwitcherTest, ARequestNamesExactlyTheVersionItsLeaseServes) {
  struct Served {
    std::shared_ptr<FakeModel> engine;
    std::string digest;
    int64_t version = 0;
  };
  ModelSlot<FakeModel> slot;
  std::mutex attached_mu;
  Served attached;  // guarded by attached_mu
  auto repoint = [&] {
    auto lease = std::make_shared<ModelSlot<FakeModel>::Lease>(slot.Acquire());
    Served next;
    if (*lease) next = Served{std::shared_ptr<FakeModel>(lease, lease->get()), lease->digest(), lease->version()};
    std::lock_guard<std::mutex> lock(attached_mu);
    attached = std::move(next);
  };
  SlotSwitcher<FakeModel> switcher(
      "k3", &slot,
      [](const ActiveVersion& v) -> Result<std::shared_ptr<FakeModel>> {
        return std::make_shared<FakeModel>(static_cast<int>(v.version));
      },
      std::chrono::minutes(1), repoint);
  auto version = [](int n) {
    ActiveVersion v;
    v.model_id = "k3";
    v.version = n;
    v.digest = "digest-" + std::to_string(n);
    return v;
  };
  ASSERT_TRUE(switcher.LoadInitial(version(1)).ok());

  constexpr int kVersions = 30;
  std::atomic<bool> stop{false};
  std::atomic<long> requests{0}, mismatched{0};
  std::vector<std::thread> clients;
  for (int t = 0; t < 3; ++t) {
    clients.emplace_back([&] {
      while (!stop.load()) {
        Served request;
        {
          std::lock_guard<std::mutex> lock(attached_mu);
          request = attached;
        }
        if (request.engine->version != request.version ||
            request.digest != "digest-" + std::to_string(request.engine->version)) {
          mismatched.fetch_add(1);
        }
        requests.fetch_add(1);
      }
    });
  }
  for (int n = 2; n <= kVersions; ++n) {
    long before = requests.load();
    while (requests.load() < before + 4) std::this_thread::yield();
    ASSERT_TRUE(switcher.Prepare(version(n)).ok());
    switcher.Switch("k3", version(n));
  }
  stop.store(true);
  for (auto& t : clients) t.join();
  EXPECT_EQ(mismatched.load(), 0);
  std::lock_guard<std::mutex> lock(attached_mu);
  EXPECT_EQ(attached.version, kVersions);
  EXPECT_EQ(attached.digest, "digest-" + std::to_string(kVersions));
}

}  // namespace
}  // namespace kimi::models
