// ModelSlot<T>: the serving side's handle on "the loaded model version", swapped without
// downtime (blue-green).
//
// The slot holds the active T (for the daemon: the engine runtime of one verified model
// version) together with its generation number and the model digest and version number it
// was loaded from, as one immutable entry. A request calls Acquire() once and keeps the Lease
// until it has finished: everything it uses comes from that one entry, so a request is served
// entirely by one version, never sees a half-swapped state, and the lease's digest() and
// version() name exactly the version that serves it (what its audit record carries).
//
// Blue-green swap, driven by whoever activates a version:
//   1. load and warm the new T beside the running one (outside the slot);
//   2. Publish(new): from now on Acquire() returns the new entry; the old one comes back as
//      a Retired handle, still alive for the requests that hold leases on it;
//   3. retired.WaitDrained(timeout): returns true once no lease on the old entry is left;
//      dropping the Retired handle then destroys the old T on the caller's thread (the
//      unload cost is paid by the swapper, not by a request). A Retired dropped before it
//      drained is still safe: the last lease destroys the old T instead.
// Public header of models/: other folders include it.
// Owns: the active entry. T is owned jointly by the slot, the leases on it and Retired.
// Thread safety: Acquire, Publish, Clear, generation and the Lease/Retired methods may be
// called from any thread. A Lease or Retired object itself is used by one thread at a time.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <utility>

namespace kimi::models {

template <typename T>
class ModelSlot {
  struct Signal {
    std::mutex mu;
    std::condition_variable cv;
  };
  struct Entry {
    std::shared_ptr<T> value;
    uint64_t generation = 0;
    std::string digest;    // the model version the value was loaded from
    int64_t version = 0;   // its number in the model store; 0 when not from the store
    std::shared_ptr<Signal> signal;
  };

 public:
  // A request's hold on one version. Empty when the slot held nothing at Acquire().
  class Lease {
   public:
    Lease() = default;
    Lease(Lease&&) noexcept = default;
    Lease& operator=(Lease&& other) noexcept {
      if (this != &other) {
        Release();
        entry_ = std::move(other.entry_);
      }
      return *this;
    }
    Lease(const Lease&) = delete;
    Lease& operator=(const Lease&) = delete;
    ~Lease() { Release(); }

    explicit operator bool() const { return entry_ != nullptr; }
    // Preconditions for the accessors: the lease is not empty.
    T& operator*() const { return *entry_->value; }
    T* operator->() const { return entry_->value.get(); }
    T* get() const { return entry_ ? entry_->value.get() : nullptr; }
    uint64_t generation() const { return entry_ ? entry_->generation : 0; }
    const std::string& digest() const { return entry_->digest; }
    int64_t version() const { return entry_->version; }

    // Gives the version back before the destructor would.
    void Release() {
      if (!entry_) return;
      std::shared_ptr<Signal> signal = entry_->signal;
      // Drop the reference first, then wake a drainer under the lock: a drainer that checks
      // its predicate under the same lock cannot miss this release.
      entry_.reset();
      { std::lock_guard<std::mutex> lock(signal->mu); }
      signal->cv.notify_all();
    }

   private:
    friend class ModelSlot;
    explicit Lease(std::shared_ptr<Entry> entry) : entry_(std::move(entry)) {}
    std::shared_ptr<Entry> entry_;
  };

  // The version Publish() replaced, kept alive until its leases are gone.
  class Retired {
   public:
    Retired() = default;
    Retired(Retired&&) noexcept = default;
    Retired& operator=(Retired&&) noexcept = default;
    Retired(const Retired&) = delete;
    Retired& operator=(const Retired&) = delete;

    explicit operator bool() const { return entry_ != nullptr; }
    uint64_t generation() const { return entry_ ? entry_->generation : 0; }
    std::string digest() const { return entry_ ? entry_->digest : std::string(); }

    // Requests still holding a lease on the retired version (a snapshot).
    long InFlight() const { return entry_ ? entry_.use_count() - 1 : 0; }

    // Waits until no lease on the retired version is left, at most `timeout`. True when
    // drained (also when there was nothing retired).
    bool WaitDrained(std::chrono::milliseconds timeout) {
      if (!entry_) return true;
      Signal& signal = *entry_->signal;
      std::unique_lock<std::mutex> lock(signal.mu);
      // Once retired, no new lease can be made on the entry, so its count only falls.
      return signal.cv.wait_for(lock, timeout, [this] { return entry_.use_count() == 1; });
    }

   private:
    friend class ModelSlot;
    explicit Retired(std::shared_ptr<Entry> entry) : entry_(std::move(entry)) {}
    std::shared_ptr<Entry> entry_;
  };

  ModelSlot() : signal_(std::make_shared<Signal>()) {}
  ModelSlot(const ModelSlot&) = delete;
  ModelSlot& operator=(const ModelSlot&) = delete;

  // The active version, for one request. Never blocks on a swap in progress.
  Lease Acquire() const {
    std::lock_guard<std::mutex> lock(mu_);
    return Lease(active_);
  }

  // Makes `value` (loaded from model version `digest`, numbered `version` in the store) the
  // active version and returns the one it replaces. Precondition: value is not null.
  Retired Publish(std::shared_ptr<T> value, std::string digest, int64_t version = 0) {
    auto entry = std::make_shared<Entry>();
    entry->value = std::move(value);
    entry->digest = std::move(digest);
    entry->version = version;
    entry->signal = signal_;
    std::lock_guard<std::mutex> lock(mu_);
    entry->generation = ++generation_;
    std::swap(active_, entry);
    return Retired(std::move(entry));
  }

  // Empties the slot (shutdown); returns what was active.
  Retired Clear() {
    std::shared_ptr<Entry> entry;
    std::lock_guard<std::mutex> lock(mu_);
    std::swap(active_, entry);
    return Retired(std::move(entry));
  }

  // How many times Publish() has run: the generation of the active version, 0 before any.
  uint64_t generation() const {
    std::lock_guard<std::mutex> lock(mu_);
    return generation_;
  }

 private:
  const std::shared_ptr<Signal> signal_;
  mutable std::mutex mu_;
  std::shared_ptr<Entry> active_;  // guarded by mu_
  uint64_t generation_ = 0;        // guarded by mu_
};

}  // namespace kimi::models
