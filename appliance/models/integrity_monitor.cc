#include "models/integrity_monitor.h"

#include <poll.h>
#include <sys/eventfd.h>
#include <sys/inotify.h>
#include <sys/resource.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <vector>

#include "kimi/log.h"

namespace kimi::models {
namespace {

using Clock = std::chrono::steady_clock;

// Whatever changes the bytes behind a path or the path itself: write(2) and truncate, a
// close after writing, chmod/chown/link changes, and the file renamed away or removed.
constexpr uint32_t kWriteEvents = IN_MODIFY | IN_CLOSE_WRITE | IN_ATTRIB | IN_MOVE_SELF | IN_DELETE_SELF;

}  // namespace

IntegrityMonitor::IntegrityMonitor(IntegrityMonitorOptions options) : options_(std::move(options)) {
  if (options_.watch_writes) {
    inotify_fd_ = ::inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
    wake_fd_ = ::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
    if (inotify_fd_ < 0 || wake_fd_ < 0) {
      // The periodic and on-demand passes still run; only the immediate reaction is lost.
      log::Warn("cannot watch the model files for writes", {{"error", std::string(std::strerror(errno))}});
      if (inotify_fd_ >= 0) ::close(inotify_fd_);
      if (wake_fd_ >= 0) ::close(wake_fd_);
      inotify_fd_ = wake_fd_ = -1;
    } else {
      writes_ = std::thread([this] { ReadWriteEvents(); });
    }
  }
  thread_ = std::thread([this] { Run(); });
}

IntegrityMonitor::~IntegrityMonitor() { Stop(); }

void IntegrityMonitor::Stop() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
    cancel_.store(true);
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
  if (writes_.joinable()) {
    uint64_t one = 1;
    ssize_t ignored = ::write(wake_fd_, &one, sizeof(one));
    (void)ignored;
    writes_.join();
  }
  std::lock_guard<std::mutex> lock(mu_);
  if (inotify_fd_ >= 0) ::close(inotify_fd_);
  if (wake_fd_ >= 0) ::close(wake_fd_);
  inotify_fd_ = wake_fd_ = -1;
  watches_.clear();
  target_.reset();  // lets go of the engine: its owner drains it next
}

void IntegrityMonitor::Watch(IntegrityTarget target) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (stop_) return;
    ReplaceTargetLocked(std::move(target));
  }
  cv_.notify_all();
}

void IntegrityMonitor::Unwatch() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    ReplaceTargetLocked(std::nullopt);
  }
  cv_.notify_all();
}

void IntegrityMonitor::ReplaceTargetLocked(std::optional<IntegrityTarget> target) {
  target_ = std::move(target);
  ++target_generation_;
  pending_ = target_.has_value();  // a new version is checked at once
  written_.clear();
  cancel_.store(true);
  WatchFilesLocked();
}

void IntegrityMonitor::CheckNow() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    pending_ = true;
  }
  cv_.notify_all();
}

void IntegrityMonitor::WatchFilesLocked() {
  if (inotify_fd_ < 0) return;
  for (const auto& [wd, file] : watches_) ::inotify_rm_watch(inotify_fd_, wd);
  watches_.clear();
  if (!target_ || target_->manifest == nullptr) return;
  for (const std::string& file : target_->manifest->files()) {
    const std::string path = file == "." ? target_->directory : target_->directory + "/" + file;
    int wd = ::inotify_add_watch(inotify_fd_, path.c_str(), kWriteEvents);
    if (wd < 0) {
      log::Warn("cannot watch a model file for writes", {{"file", path}, {"error", std::string(std::strerror(errno))}});
      continue;
    }
    watches_[wd] = file;
  }
}

void IntegrityMonitor::ReadWriteEvents() {
  pollfd fds[2] = {{inotify_fd_, POLLIN, 0}, {wake_fd_, POLLIN, 0}};
  alignas(inotify_event) char buffer[16 * 1024];
  while (true) {
    if (::poll(fds, 2, -1) < 0) {
      if (errno == EINTR) continue;
      return;
    }
    if (fds[1].revents != 0) return;
    ssize_t n = ::read(inotify_fd_, buffer, sizeof(buffer));
    if (n <= 0) continue;
    bool any = false;
    {
      std::lock_guard<std::mutex> lock(mu_);
      for (ssize_t at = 0; at < n;) {
        const auto* event = reinterpret_cast<const inotify_event*>(buffer + at);
        at += static_cast<ssize_t>(sizeof(inotify_event) + event->len);
        auto it = watches_.find(event->wd);
        if (it == watches_.end() || (event->mask & kWriteEvents) == 0) continue;
        log::Warn("a served model file changed on disk; checking it now", {{"file", it->second}});
        written_.insert(it->second);
        any = true;
      }
      // A paced pass over the whole model may have hours to go: the written file goes first.
      if (any) cancel_.store(true);
    }
    if (any) cv_.notify_all();
  }
}

void IntegrityMonitor::Run() {
  // Below the engine's threads: a pass uses what serving leaves.
  ::setpriority(PRIO_PROCESS, static_cast<id_t>(::gettid()), 10);
  std::unique_lock<std::mutex> lock(mu_);
  Clock::time_point next_due = Clock::time_point::max();
  while (!stop_) {
    const bool periodic_due = next_due != Clock::time_point::max() && Clock::now() >= next_due;
    if (!target_ || (!pending_ && written_.empty() && !periodic_due)) {
      if (target_ && next_due != Clock::time_point::max()) cv_.wait_until(lock, next_due);
      else cv_.wait(lock);
      continue;
    }
    IntegrityTarget target = *target_;
    const uint64_t generation = target_generation_;
    // Files a write event named go first, alone and unpaced: that is where a change is.
    std::optional<std::vector<std::string>> only;
    ServedBytesPace pace = options_.pace;
    if (!written_.empty()) {
      only.emplace(written_.begin(), written_.end());
      written_.clear();
      pace.bytes_per_second = 0;
    } else {
      pending_ = false;
    }
    cancel_.store(false);
    lock.unlock();
    Result<ServedBytesPass> pass = CheckServedBytes(target, pace, &cancel_, only ? &*only : nullptr);
    // The callbacks get the version without its engine: a swap that drains the old engine
    // while a callback waits for the swapper's lock must not wait for this thread.
    target.mapped.clear();
    target.owner.reset();
    lock.lock();
    if (!pass.ok()) {
      if (pass.status().code() != Status::Code::kCancelled) {
        log::Error("the served-bytes check could not run", {{"digest", target.digest}, {"error", pass.status().ToString()}});
      } else if (generation == target_generation_) {
        // Stopped for a write event, not for another version: redo what was cut short.
        if (only) written_.insert(only->begin(), only->end());
        else pending_ = true;
      }
      continue;
    }
    passes_.fetch_add(1);
    if (!only) {
      next_due = options_.interval.count() > 0 ? Clock::now() + options_.interval : Clock::time_point::max();
    }
    if (generation != target_generation_) continue;  // another version is watched now
    if (pass->failure) {
      ReplaceTargetLocked(std::nullopt);
      lock.unlock();
      options_.on_failure(target, *pass->failure);
      lock.lock();
    } else if (options_.on_pass) {
      lock.unlock();
      options_.on_pass(target, *pass);
      lock.lock();
    }
  }
}

}  // namespace kimi::models
