#include "upstream/connection_pool.h"

#include <httplib.h>

#include <utility>

namespace kimi::upstream {

ConnectionPool::ConnectionPool(std::function<std::unique_ptr<httplib::Client>()> make, size_t max_idle_connections,
                               Clock::duration max_idle)
    : make_(std::move(make)), max_idle_connections_(max_idle_connections), max_idle_(max_idle) {}

ConnectionPool::~ConnectionPool() = default;

std::unique_ptr<httplib::Client> ConnectionPool::Acquire() {
  std::vector<Idle> stale;  // closed outside the lock
  std::unique_ptr<httplib::Client> reused;
  {
    std::lock_guard<std::mutex> lock(mu_);
    const Clock::time_point now = Clock::now();
    while (!idle_.empty() && reused == nullptr) {
      Idle last = std::move(idle_.back());
      idle_.pop_back();
      if (now - last.since <= max_idle_) reused = std::move(last.client);
      else stale.push_back(std::move(last));
    }
    // Older entries sit at the front: whatever is too old there goes too.
    size_t young = 0;
    while (young < idle_.size() && now - idle_[young].since > max_idle_) ++young;
    for (size_t i = 0; i < young; ++i) stale.push_back(std::move(idle_[i]));
    idle_.erase(idle_.begin(), idle_.begin() + static_cast<std::ptrdiff_t>(young));
  }
  return reused != nullptr ? std::move(reused) : make_();
}

void ConnectionPool::Release(std::unique_ptr<httplib::Client> client) {
  if (client == nullptr) return;
  std::lock_guard<std::mutex> lock(mu_);
  if (idle_.size() >= max_idle_connections_) return;  // closed as `client` goes out of scope
  idle_.push_back(Idle{std::move(client), Clock::now()});
}

size_t ConnectionPool::idle() const {
  std::lock_guard<std::mutex> lock(mu_);
  return idle_.size();
}

}  // namespace kimi::upstream
