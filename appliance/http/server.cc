#include "http/server.h"

#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <string>
#include <vector>

#include "auth/peer_address.h"
#include "http/connection.h"
#include "http/error_response.h"
#include "http/request_id.h"
#include "kimi/log.h"

namespace kimi::http {
namespace {

constexpr size_t kMaxQueuedRejects = 64;

}  // namespace

// A worker's ReclaimableWait. AssignWaiting() writes reclaim_fd_ to take the worker back while its
// connection waits for its client; the write happens under mu_ and only while
// `idle && !reclaimed`, and Enter() drains what an earlier wait left, so a signal never reaches
// a later wait.
class Server::Slot final : public ReclaimableWait {
 public:
  explicit Slot(Server& server) : server_(server), reclaim_fd_(::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK)) {}
  ~Slot() override {
    if (reclaim_fd_ >= 0) ::close(reclaim_fd_);
  }
  Slot(const Slot&) = delete;
  Slot& operator=(const Slot&) = delete;

  int Enter() override {
    std::lock_guard<std::mutex> lock(server_.mu_);
    uint64_t stale;
    [[maybe_unused]] ssize_t n = ::read(reclaim_fd_, &stale, sizeof stale);
    idle = true;
    server_.AssignWaiting();  // a connection may be waiting already
    return reclaim_fd_;
  }

  void Leave(bool request_arrived) override {
    std::lock_guard<std::mutex> lock(server_.mu_);
    idle = false;
    // A request won the race against the reclaim: this worker stays, another is asked. Else the
    // reclaim stays under way until the worker is free (WorkerLoop).
    if (request_arrived && reclaimed) {
      reclaimed = false;
      server_.AssignWaiting();
    }
  }

  // Requires server_.mu_, idle and !reclaimed.
  void Reclaim() {
    reclaimed = true;
    uint64_t one = 1;
    [[maybe_unused]] ssize_t n = ::write(reclaim_fd_, &one, sizeof one);
  }

  bool idle = false;       // guarded by server_.mu_: the connection waits for its client (connection.h)
  bool reclaimed = false;  // guarded by server_.mu_: asked for the worker, which is not free yet
  std::string address;     // guarded by server_.mu_: of the connection it serves (auth::PeerGroup)

 private:
  Server& server_;
  const int reclaim_fd_;
};

Server::Server(ServerOptions options, Listener listener, DispatcherServices services, RouteTable routes,
               metrics::Registry& registry)
    : options_(std::move(options)),
      metrics_(registry),
      dispatcher_(std::move(services), std::move(routes), metrics_, options_.limits),
      listen_fd_(listener.ReleaseSocket()),
      stop_fd_(listener.ReleaseStopEvent()),
      bound_address_(listener.bound_address()) {}

Server::~Server() {
  Stop();
  if (listen_fd_ >= 0) ::close(listen_fd_);
  if (stop_fd_ >= 0) ::close(stop_fd_);
}

void Server::Stop() {
  if (stopping_.exchange(true)) return;
  if (stop_fd_ >= 0) {
    uint64_t one = 1;
    // Never read back: the eventfd stays readable, so every poller sees the stop.
    [[maybe_unused]] ssize_t n = ::write(stop_fd_, &one, sizeof one);
  }
}

void Server::Run() {
  size_t n = static_cast<size_t>(options_.limits.max_connections);
  for (size_t i = 0; i < n; ++i) slots_.push_back(std::make_unique<Slot>(*this));
  workers_.reserve(n);
  for (size_t i = 0; i < n; ++i) workers_.emplace_back([this, i] { WorkerLoop(*slots_[i]); });
  rejecter_ = std::thread([this] { RejecterLoop(); });
  AcceptLoop();
  Drain();
}

void Server::AcceptLoop() {
  const auto worker_wait = std::chrono::milliseconds(options_.limits.worker_wait_ms);
  for (;;) {
    const int next_expiry_ms = ExpireWaiting();
    pollfd fds[2] = {{listen_fd_, POLLIN, 0}, {stop_fd_, POLLIN, 0}};
    int r = ::poll(fds, 2, next_expiry_ms);
    if (r < 0 && errno == EINTR) continue;
    if (r < 0 || (fds[1].revents & POLLIN)) break;
    if (!(fds[0].revents & POLLIN)) continue;
    sockaddr_storage peer{};
    socklen_t peer_length = sizeof peer;
    int fd = ::accept4(listen_fd_, reinterpret_cast<sockaddr*>(&peer), &peer_length, SOCK_CLOEXEC);
    if (fd < 0) {
      if (errno == EMFILE || errno == ENFILE || errno == ENOBUFS || errno == ENOMEM) {
        log::Warn("accept failed; pausing 100 ms", {{"error", std::strerror(errno)}});
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
      }
      continue;
    }
    int one = 1;
    ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    int refused = fd;
    {
      std::lock_guard<std::mutex> lock(mu_);
      const std::string address = auth::PeerGroup(peer);
      address_of_[fd] = address;
      ++held_by_address_[address];
      if (assigned_ < slots_.size()) {
        ++assigned_;
        pending_.push_back(fd);
        work_cv_.notify_one();
        continue;
      }
      if (worker_wait.count() > 0) {
        waiting_.push_back({fd, std::chrono::steady_clock::now() + worker_wait, address});
        refused = Queue(fd);
        AssignWaiting();
      }
    }
    if (refused >= 0) Reject(refused);
  }
  ::close(listen_fd_);
  listen_fd_ = -1;
  log::Info("stopped accepting connections", {{"address", bound_address_}});
}

int Server::ExpireWaiting() {
  std::vector<int> expired;
  int next_ms = -1;
  {
    std::lock_guard<std::mutex> lock(mu_);
    const auto now = std::chrono::steady_clock::now();
    while (!waiting_.empty() && waiting_.front().deadline <= now) {
      expired.push_back(waiting_.front().fd);
      waiting_.pop_front();
    }
    if (!waiting_.empty()) {
      // Rounded up, so the wake-up finds the deadline passed.
      next_ms = static_cast<int>(
          std::chrono::duration_cast<std::chrono::milliseconds>(waiting_.front().deadline - now).count() + 1);
    }
  }
  for (int fd : expired) Reject(fd);
  return next_ms;
}

size_t Server::HeldBy(const std::string& address) const {
  auto it = held_by_address_.find(address);
  return it == held_by_address_.end() ? 0 : it->second;
}

int Server::Queue(int fd) {
  if (waiting_.size() <= slots_.size()) return -1;
  // Full: the newest waiting connection of the address that holds the most gives its place to
  // this one, when that address holds more than this one's; else this one is refused.
  auto most = waiting_.end();
  for (auto it = waiting_.begin(); it != waiting_.end(); ++it) {
    if (most == waiting_.end() || HeldBy(it->address) >= HeldBy(most->address)) most = it;
  }
  const std::string& newcomer = address_of_[fd];
  if (most->fd == fd || HeldBy(most->address) <= HeldBy(newcomer)) {
    waiting_.pop_back();  // the newcomer itself, pushed last
    return fd;
  }
  const int evicted = most->fd;
  waiting_.erase(most);
  return evicted;
}

void Server::Forget(int fd) {
  auto it = address_of_.find(fd);
  if (it == address_of_.end()) return;
  auto held = held_by_address_.find(it->second);
  if (held != held_by_address_.end() && --held->second == 0) held_by_address_.erase(held);
  address_of_.erase(it);
}

void Server::AssignWaiting() {
  while (!waiting_.empty() && assigned_ < slots_.size()) {
    // The address that holds the fewest first; the oldest of equals (waiting_ is oldest first).
    auto fewest = waiting_.begin();
    for (auto it = waiting_.begin(); it != waiting_.end(); ++it) {
      if (HeldBy(it->address) < HeldBy(fewest->address)) fewest = it;
    }
    ++assigned_;
    pending_.push_back(fewest->fd);
    waiting_.erase(fewest);
    work_cv_.notify_one();
  }
  if (waiting_.empty()) return;
  size_t under_way = 0;
  std::vector<Slot*> idle;
  for (const auto& slot : slots_) {
    under_way += slot->reclaimed ? 1 : 0;
    if (slot->idle && !slot->reclaimed) idle.push_back(slot.get());
  }
  // Workers are taken back from the addresses that hold the most first.
  std::stable_sort(idle.begin(), idle.end(),
                   [this](const Slot* a, const Slot* b) { return HeldBy(a->address) > HeldBy(b->address); });
  for (Slot* slot : idle) {
    if (under_way >= waiting_.size()) break;
    slot->Reclaim();
    ++under_way;
  }
}

void Server::Reject(int fd) {
  metrics_.connections_rejected.WithLabels({"overload"}).Increment();
  static std::atomic<int64_t> last_logged_ms{0};
  int64_t now_ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                       std::chrono::steady_clock::now().time_since_epoch()).count();
  int64_t last = last_logged_ms.load();
  if (now_ms - last >= 10'000 && last_logged_ms.compare_exchange_strong(last, now_ms)) {
    log::Warn("every worker is busy; refusing connections with 503 (logged at most every 10 s)",
              {{"max_connections", options_.limits.max_connections}});
  }
  std::lock_guard<std::mutex> lock(mu_);
  Forget(fd);
  if (rejects_.size() >= kMaxQueuedRejects) {
    ::close(fd);  // a flood: even the polite refusal has to be skipped
    return;
  }
  rejects_.push_back(fd);
  reject_cv_.notify_one();
}

void Server::RejecterLoop() {
  for (;;) {
    int fd;
    {
      std::unique_lock<std::mutex> lock(mu_);
      reject_cv_.wait(lock, [this] { return !rejects_.empty() || exit_; });
      if (rejects_.empty()) return;
      fd = rejects_.front();
      rejects_.pop_front();
    }
    {
      Transport transport = options_.tls ? Transport(fd, options_.tls->Current()->get()) : Transport(fd);
      std::string why;
      bool plain_http = false;
      if (transport.Handshake(std::chrono::steady_clock::now() + std::chrono::seconds(1), &why, &plain_http) ==
          Transport::HandshakeResult::kDone) {
        SendAll(transport, RenderRawErrorResponse(Overloaded(), NewRequestId()), 1000);
        LingeringClose(transport, 200);
      }
    }
    ::close(fd);
  }
}

void Server::WorkerLoop(Slot& slot) {
  ConnectionEnv env{&dispatcher_, &metrics_, options_.limits, stop_fd_, &stopping_, &slot};
  for (;;) {
    int fd;
    {
      std::unique_lock<std::mutex> lock(mu_);
      work_cv_.wait(lock, [this] { return !pending_.empty() || exit_; });
      if (pending_.empty()) return;
      fd = pending_.front();
      pending_.pop_front();
      active_fds_.insert(fd);
      slot.address = address_of_[fd];
    }
    metrics_.connections_active.Add(1);
    {
      Transport transport = options_.tls ? Transport(fd, options_.tls->Current()->get()) : Transport(fd);
      ServeConnection(transport, env);
      // TLS clients expect close_notify before the TCP close; without it some report a truncation.
      if (transport.is_tls()) transport.ShutdownWrite();
    }
    metrics_.connections_active.Add(-1);
    {
      std::lock_guard<std::mutex> lock(mu_);
      // Erased before close() so that Drain() never shuts down a reused descriptor.
      active_fds_.erase(fd);
      Forget(fd);
      ::close(fd);
      slot.reclaimed = false;
      slot.address.clear();
      if (--assigned_ == 0) drained_cv_.notify_all();
      AssignWaiting();
    }
  }
}

void Server::Drain() {
  auto grace = std::chrono::milliseconds(options_.limits.shutdown_grace_ms);
  std::deque<Waiting> waiting;
  {
    std::lock_guard<std::mutex> lock(mu_);
    waiting.swap(waiting_);
  }
  for (const Waiting& w : waiting) Reject(w.fd);  // no worker will take a new connection now
  {
    std::unique_lock<std::mutex> lock(mu_);
    if (assigned_ > 0) log::Info("waiting for requests in flight", {{"connections", assigned_}});
    bool drained = drained_cv_.wait_for(lock, grace, [this] { return assigned_ == 0; });
    if (!drained) {
      log::Warn("shutdown grace period over; closing connections still open",
                {{"connections", active_fds_.size()}, {"grace_ms", options_.limits.shutdown_grace_ms}});
      for (int fd : active_fds_) ::shutdown(fd, SHUT_RDWR);
    }
    exit_ = true;
  }
  work_cv_.notify_all();
  reject_cv_.notify_all();
  for (std::thread& t : workers_) t.join();
  workers_.clear();
  if (rejecter_.joinable()) rejecter_.join();
  // Connections accepted but never picked up (only possible when the grace ran out).
  std::lock_guard<std::mutex> lock(mu_);
  for (int fd : pending_) ::close(fd);
  pending_.clear();
  address_of_.clear();
  held_by_address_.clear();
  log::Info("http server stopped", {{"address", bound_address_}});
}

}  // namespace kimi::http
