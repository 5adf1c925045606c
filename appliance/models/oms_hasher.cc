#include "models/oms_hasher.h"

#include <fcntl.h>
#include <openssl/evp.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <condition_variable>
#include <cstring>
#include <memory>
#include <mutex>
#include <numeric>
#include <thread>

#include "models/oms_openssl.h"

namespace kimi::models {
namespace {

class FileDescriptor {
 public:
  explicit FileDescriptor(int fd) : fd_(fd) {}
  ~FileDescriptor() {
    if (fd_ >= 0) close(fd_);
  }
  FileDescriptor(const FileDescriptor&) = delete;
  FileDescriptor& operator=(const FileDescriptor&) = delete;
  int get() const { return fd_; }

 private:
  int fd_;
};

Status WriteAt(int fd, const char* data, size_t size, uint64_t offset, const std::string& path) {
  while (size > 0) {
    ssize_t w = pwrite(fd, data, size, static_cast<off_t>(offset));
    if (w < 0) {
      if (errno == EINTR) continue;
      return Status::IOError("cannot write " + path + ": " + std::strerror(errno));
    }
    data += w;
    size -= static_cast<size_t>(w);
    offset += static_cast<uint64_t>(w);
  }
  return Status::OK();
}

// Hashes one range with `buffer` (and copies it when the range says so); adds every chunk
// read to *bytes_done as it goes.
Result<std::string> HashOne(const HashRange& range, std::vector<char>& buffer, EVP_MD_CTX* ctx,
                            std::atomic<uint64_t>* bytes_done, const std::atomic<bool>* cancel) {
  KIMI_ASSIGN_OR_RETURN(const RegularFile in, OpenRegularFile(range.path));
  if (range.planned && in.identity() != *range.planned) {
    return Status::IOError(range.path + " was replaced or changed after it was listed");
  }
  FileDescriptor out(range.copy_to.empty() ? -1 : open(range.copy_to.c_str(), O_WRONLY | O_CREAT | O_CLOEXEC, 0600));
  if (!range.copy_to.empty() && out.get() < 0) {
    return Status::IOError("cannot create " + range.copy_to + ": " + std::strerror(errno));
  }
  posix_fadvise(in.fd(), static_cast<off_t>(range.offset), static_cast<off_t>(range.length),
                POSIX_FADV_SEQUENTIAL);
  if (EVP_DigestInit_ex(ctx, EVP_sha256(), nullptr) != 1) return Status::Internal("SHA-256 init failed");
  uint64_t pos = range.offset;
  uint64_t end = range.offset + range.length;
  while (pos < end) {
    if (cancel != nullptr && cancel->load(std::memory_order_relaxed)) {
      return Status::Cancelled("reading " + range.path + " cancelled");
    }
    size_t want = static_cast<size_t>(std::min<uint64_t>(buffer.size(), end - pos));
    ssize_t got = pread(in.fd(), buffer.data(), want, static_cast<off_t>(pos));
    if (got < 0) {
      if (errno == EINTR) continue;
      return Status::IOError("cannot read " + range.path + ": " + std::strerror(errno));
    }
    if (got == 0) return Status::IOError(range.path + " is shorter than expected (changed while verifying?)");
    EVP_DigestUpdate(ctx, buffer.data(), static_cast<size_t>(got));
    if (out.get() >= 0) KIMI_RETURN_IF_ERROR(WriteAt(out.get(), buffer.data(), static_cast<size_t>(got), pos, range.copy_to));
    pos += static_cast<uint64_t>(got);
    if (bytes_done != nullptr) bytes_done->fetch_add(static_cast<uint64_t>(got), std::memory_order_relaxed);
  }
  if (range.to_eof) {
    char probe;
    ssize_t extra = pread(in.fd(), &probe, 1, static_cast<off_t>(end));
    if (extra != 0) return Status::IOError(range.path + " is longer than expected (changed while verifying?)");
  }
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  EVP_DigestFinal_ex(ctx, digest, &len);
  return std::string(reinterpret_cast<char*>(digest), len);
}

}  // namespace

std::string RangeKey(std::string_view name, uint64_t offset, uint64_t length) {
  return std::string(name) + '\0' + std::to_string(offset) + ':' + std::to_string(length);
}

HashProgress ProgressSince(std::chrono::steady_clock::time_point start, uint64_t bytes_done, uint64_t bytes_total,
                           bool finished) {
  HashProgress p;
  p.bytes_done = bytes_done;
  p.bytes_total = bytes_total;
  double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  p.bytes_per_second = elapsed > 0 ? static_cast<double>(bytes_done) / elapsed : 0;
  p.eta_seconds = (!finished && p.bytes_per_second > 0 && bytes_total > bytes_done)
                      ? static_cast<double>(bytes_total - bytes_done) / p.bytes_per_second
                      : 0;
  p.finished = finished;
  return p;
}

Result<std::vector<std::string>> HashRangesSerial(const std::vector<HashRange>& ranges, size_t buffer_bytes) {
  std::vector<char> buffer(std::max<size_t>(buffer_bytes, 4096));
  MdCtxPtr ctx(EVP_MD_CTX_new());
  std::vector<std::string> out;
  out.reserve(ranges.size());
  for (const auto& r : ranges) {
    KIMI_ASSIGN_OR_RETURN(std::string d, HashOne(r, buffer, ctx.get(), nullptr, nullptr));
    out.push_back(std::move(d));
  }
  return out;
}

Result<std::vector<std::string>> HashRanges(const std::vector<HashRange>& ranges, const HashOptions& options) {
  unsigned threads = options.threads != 0 ? options.threads : std::max(1u, std::thread::hardware_concurrency());
  threads = static_cast<unsigned>(std::min<size_t>(threads, std::max<size_t>(ranges.size(), 1)));

  // Largest first: the longest range bounds the wall time, so it must not start last.
  std::vector<size_t> order(ranges.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return ranges[a].length > ranges[b].length; });
  uint64_t total = 0;
  for (const auto& r : ranges) total += r.length;

  std::vector<std::string> digests(ranges.size());
  std::atomic<size_t> next{0};
  std::atomic<uint64_t> bytes_done{0};
  std::atomic<bool> failed{false};
  std::mutex mu;
  std::condition_variable done_cv;
  Status first_error;     // guarded by mu
  unsigned running = threads;  // guarded by mu

  std::vector<double> worker_cpu(threads, 0.0);
  auto worker = [&](unsigned index) {
    std::vector<char> buffer(std::max<size_t>(options.buffer_bytes, 4096));
    MdCtxPtr ctx(EVP_MD_CTX_new());
    for (;;) {
      size_t i = next.fetch_add(1);
      if (i >= order.size() || failed.load()) break;
      auto digest = HashOne(ranges[order[i]], buffer, ctx.get(), &bytes_done, options.cancel);
      if (!digest.ok()) {
        std::lock_guard<std::mutex> lock(mu);
        if (!failed.exchange(true)) first_error = digest.status();
        break;
      }
      digests[order[i]] = std::move(digest).value();
    }
    timespec cpu{};
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &cpu);
    worker_cpu[index] = static_cast<double>(cpu.tv_sec) + 1e-9 * static_cast<double>(cpu.tv_nsec);
    std::lock_guard<std::mutex> lock(mu);
    if (--running == 0) done_cv.notify_all();
  };

  auto start = std::chrono::steady_clock::now();
  std::vector<std::thread> pool;
  pool.reserve(threads);
  for (unsigned t = 0; t < threads; ++t) pool.emplace_back(worker, t);

  auto report = [&](bool finished) {
    if (!options.progress) return;
    options.progress(ProgressSince(start, bytes_done.load(std::memory_order_relaxed), total, finished));
  };
  {
    std::unique_lock<std::mutex> lock(mu);
    while (running != 0) {
      done_cv.wait_for(lock, options.progress_interval);
      if (running != 0) {
        lock.unlock();
        report(false);
        lock.lock();
      }
    }
  }
  for (auto& t : pool) t.join();
  if (options.worker_cpu_seconds != nullptr) *options.worker_cpu_seconds = worker_cpu;
  if (failed.load()) return first_error;
  report(true);
  return digests;
}

}  // namespace kimi::models
