// kimi-bench-verify: how fast model verification runs against the two limits that matter,
// one core of `openssl dgst -sha256` and the raw read throughput of the same files.
//
//   kimi-bench-verify [--size-gib 2] [--files 8] [--dir /tmp/kimi-bench-verify] [--threads N]
//                     [--buffer-mib 8] [--repeat 3] [--keep] [--cold] [--import] [--served]
//                     [--model DIR] [--shard-size BYTES]
//
// It writes --files files totalling --size-gib of pseudo-random bytes (kept between runs when
// the sizes match), or takes the files of an existing model directory (--model DIR, e.g. a
// k3-mini from `kimi-engine synth`; its model.sig is replaced), signs them twice, one resource
// per file (model.sig) and in shards (<dir>/shards.sig; --shard-size, default AutoShardSize as
// `kimictl model sign` does), then times, best of --repeat runs each:
//   read 1 thread / N threads   pread() into a buffer, no hashing (the I/O ceiling)
//   openssl dgst -sha256        the openssl CLI over the same files, one core
//   sha256 1 thread             this project's hasher, serial
//   verify files / shards       the full ModelVerifier::Verify (signature, walk, hash, compare)
//                               of each signature on N threads
// and prints throughput and the ratios verify / openssl and verify / read. With --import it
// also times the model store's import from a "medium" (the generated directory) into a fresh
// data directory on the same filesystem:
//   copy + hash, one read       CopyModelTree(): the copy, hashing every range as it writes it
//   import (copy + verify)      ModelStore::Import(): that copy, verification of the copy with
//                               its digests, prune, rename, record
// and prints both against openssl and import against the copy alone. With --served it times
// the daemon's served-bytes check (served_bytes.h) over the files mapped MAP_PRIVATE read-only
// as the engine maps them, unpaced, against the same openssl row. By default the
// files stay in the page cache, so "read" is memory bandwidth; --cold evicts them before every
// run (posix_fadvise DONTNEED), so every row reads from the disk.
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include "kimi/log.h"
#include "models/model_copy.h"
#include "models/model_migrations.h"
#include "models/model_store.h"
#include "models/oms_hasher.h"
#include "models/oms_keys.h"
#include "models/oms_signer.h"
#include "models/oms_verifier.h"
#include "models/served_bytes.h"
#include "store/store.h"

namespace fs = std::filesystem;
using kimi::models::HashRange;

namespace {

struct Options {
  double size_gib = 2;
  int files = 8;
  std::string dir = "/tmp/kimi-bench-verify";
  unsigned threads = 0;
  size_t buffer_mib = 8;
  int repeat = 3;
  bool keep = false;
  bool cold = false;
  bool import = false;
  bool served = false;
  std::string model;        // empty: generate the files under dir/model
  uint64_t shard_size = 0;  // 0: AutoShardSize
};

bool ParseOptions(int argc, char** argv, Options* o) {
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto value = [&]() -> const char* { return i + 1 < argc ? argv[++i] : nullptr; };
    const char* v = nullptr;
    if (a == "--keep" || a == "--cold" || a == "--import" || a == "--served") {
      (a == "--keep" ? o->keep : a == "--cold" ? o->cold : a == "--import" ? o->import : o->served) = true;
      continue;
    }
    if ((v = value()) == nullptr) return false;
    if (a == "--size-gib") o->size_gib = std::atof(v);
    else if (a == "--files") o->files = std::atoi(v);
    else if (a == "--dir") o->dir = v;
    else if (a == "--threads") o->threads = static_cast<unsigned>(std::atoi(v));
    else if (a == "--buffer-mib") o->buffer_mib = static_cast<size_t>(std::atoi(v));
    else if (a == "--repeat") o->repeat = std::atoi(v);
    else if (a == "--model") o->model = v;
    else if (a == "--shard-size") o->shard_size = std::strtoull(v, nullptr, 10);
    else return false;
  }
  return o->size_gib > 0 && o->files > 0 && o->repeat > 0 && o->buffer_mib > 0;
}

// Fills `path` with `size` pseudo-random bytes (xorshift; incompressible enough for SHA-256).
bool WriteRandomFile(const std::string& path, uint64_t size, uint64_t seed) {
  std::FILE* f = std::fopen(path.c_str(), "wb");
  if (f == nullptr) return false;
  std::vector<uint64_t> chunk((8u << 20) / sizeof(uint64_t));
  uint64_t x = seed * 0x9E3779B97F4A7C15ull + 1;
  for (uint64_t written = 0; written < size;) {
    for (auto& w : chunk) {
      x ^= x << 13;
      x ^= x >> 7;
      x ^= x << 17;
      w = x;
    }
    size_t n = static_cast<size_t>(std::min<uint64_t>(chunk.size() * sizeof(uint64_t), size - written));
    if (std::fwrite(chunk.data(), 1, n, f) != n) {
      std::fclose(f);
      return false;
    }
    written += n;
  }
  return std::fclose(f) == 0;
}

double CpuSeconds(int who) {
  struct rusage u {};
  getrusage(who, &u);
  return static_cast<double>(u.ru_utime.tv_sec + u.ru_stime.tv_sec) + 1e-6 * static_cast<double>(u.ru_utime.tv_usec + u.ru_stime.tv_usec);
}

// Wall time of the fastest run, and the CPU time (this process and its children) it used.
// On a shared machine the CPU time is the steadier figure: MiB per CPU-second is what one
// core would do alone.
struct Timing {
  double wall = -1;
  double cpu = -1;
};

// Set by --cold: called before every timed run to evict the files from the page cache.
std::function<void()> g_before_run = [] {};

// `cleanup` (optional) runs after each timed run, outside the timing.
Timing Best(int repeat, const std::function<bool()>& run, const std::function<void()>& cleanup = {}) {
  Timing best{1e300, 0};
  for (int r = 0; r < repeat; ++r) {
    g_before_run();
    double cpu0 = CpuSeconds(RUSAGE_SELF) + CpuSeconds(RUSAGE_CHILDREN);
    auto t0 = std::chrono::steady_clock::now();
    if (!run()) return Timing{};
    double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    double cpu = CpuSeconds(RUSAGE_SELF) + CpuSeconds(RUSAGE_CHILDREN) - cpu0;
    if (cleanup) cleanup();
    if (wall < best.wall) best = {wall, cpu};
  }
  return best;
}

// Drops the files' clean pages from the page cache (no root needed), so the next read comes
// from the disk.
void EvictFromCache(const std::vector<HashRange>& ranges) {
  for (const auto& r : ranges) {
    int fd = open(r.path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) continue;
    fdatasync(fd);
    posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
    close(fd);
  }
}

bool ReadAll(const std::vector<HashRange>& ranges, unsigned threads, size_t buffer) {
  std::atomic<size_t> next{0};
  std::atomic<bool> ok{true};
  auto worker = [&]() {
    std::vector<char> buf(buffer);
    for (size_t i; (i = next.fetch_add(1)) < ranges.size();) {
      int fd = open(ranges[i].path.c_str(), O_RDONLY | O_CLOEXEC);
      if (fd < 0) {
        ok = false;
        return;
      }
      posix_fadvise(fd, 0, 0, POSIX_FADV_SEQUENTIAL);
      off_t pos = 0;
      for (ssize_t n; (n = pread(fd, buf.data(), buf.size(), pos)) > 0;) pos += n;
      close(fd);
    }
  };
  std::vector<std::thread> pool;
  for (unsigned t = 0; t < threads; ++t) pool.emplace_back(worker);
  for (auto& t : pool) t.join();
  return ok;
}

void PrintRow(const char* what, Timing t, uint64_t bytes) {
  if (t.wall < 0) {
    std::printf("  %-30s failed\n", what);
    return;
  }
  double mib = static_cast<double>(bytes) / (1 << 20);
  std::printf("  %-30s %8.3f s %9.1f MiB/s   cpu %7.3f s %9.1f MiB/cpu-s\n", what, t.wall, mib / t.wall, t.cpu,
              t.cpu > 0 ? mib / t.cpu : 0.0);
}

// One import into a fresh data directory: database, store, copy, verification of the copy.
bool ImportOnce(const std::string& model, const std::string& data_dir, const kimi::models::TrustStore& trust,
                unsigned threads) {
  auto db = kimi::store::Store::Open(data_dir);
  if (!db.ok() || !(*db)->Migrate(kimi::models::kModelMigrations).ok()) return false;
  kimi::models::ModelStoreOptions options;
  options.data_dir = data_dir;
  options.db = db->get();
  options.trust = &trust;
  options.audit = [](kimi::audit::AuditRecord) { return kimi::Status::OK(); };
  options.audit_in_transaction = [](sqlite3*, kimi::audit::AuditRecord) { return kimi::Status::OK(); };
  auto store = kimi::models::ModelStore::Open(std::move(options));
  if (!store.ok()) return false;
  kimi::models::ImportRequest request;
  request.model_id = "bench";
  request.source = model;
  request.threads = threads;
  auto v = (*store)->Import(request, kimi::models::Actor{});
  if (!v.ok()) std::fprintf(stderr, "import failed: %s\n", v.status().ToString().c_str());
  return v.ok();
}

// --served: the files mapped as the engine maps them, the manifest verified once (untimed),
// then the daemon's served-bytes check over the mappings, one thread, unpaced.
bool TimeServedCheck(const Options& o, const std::string& model, const std::vector<HashRange>& ranges,
                     const kimi::models::TrustStore& trust, Timing openssl, uint64_t total) {
  kimi::models::VerifyRequest verify;
  verify.model_path = model;
  auto manifest = kimi::models::ModelVerifier::Verify(verify, trust);
  if (!manifest.ok()) return false;
  kimi::models::IntegrityTarget target;
  target.directory = model;
  target.manifest = std::make_shared<const kimi::models::VerifiedManifest>(std::move(manifest).value());
  std::vector<std::pair<void*, size_t>> maps;
  for (const HashRange& r : ranges) {
    int fd = open(r.path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) return false;
    void* p = mmap(nullptr, r.length, PROT_READ, MAP_PRIVATE, fd, 0);
    close(fd);
    if (p == MAP_FAILED) return false;
    maps.emplace_back(p, r.length);
    target.mapped.push_back({fs::path(r.path).filename().string(), static_cast<const uint8_t*>(p), r.length});
  }
  Timing checked = Best(o.repeat, [&] {
    auto pass = kimi::models::CheckServedBytes(target, {});
    return pass.ok() && !pass->failure;
  });
  for (auto [p, n] : maps) munmap(p, n);
  PrintRow("served-bytes check (mapped)", checked, total);
  if (checked.wall > 0 && openssl.wall > 0) {
    std::printf("  served-bytes check / openssl one core (wall): %.2fx\n", openssl.wall / checked.wall);
    std::printf("  CPU cost, served-bytes check / openssl:       %.2f\n", checked.cpu / openssl.cpu);
  }
  return checked.wall > 0;
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  if (!ParseOptions(argc, argv, &o)) {
    std::fprintf(stderr,
                 "usage: kimi-bench-verify [--size-gib 2] [--files 8] [--dir PATH] [--threads N] [--buffer-mib 8] "
                 "[--repeat 3] [--keep] [--cold] [--import] [--served]\n");
    return 2;
  }
  kimi::log::Configure(kimi::log::Level::kWarn, kimi::log::Format::kText);
  unsigned threads = o.threads ? o.threads : std::max(1u, std::thread::hardware_concurrency());
  size_t buffer = o.buffer_mib << 20;
  uint64_t total = static_cast<uint64_t>(o.size_gib * (1ull << 30));
  uint64_t per_file = total / static_cast<uint64_t>(o.files);
  total = per_file * static_cast<uint64_t>(o.files);

  fs::create_directories(o.dir);
  std::string model = o.model.empty() ? o.dir + "/model" : o.model;
  std::vector<HashRange> ranges;
  if (o.model.empty()) {
    fs::create_directories(model);
    for (int i = 0; i < o.files; ++i) {
      char name[64];
      std::snprintf(name, sizeof(name), "model-%05d-of-%05d.safetensors", i + 1, o.files);
      std::string path = model + "/" + name;
      std::error_code ec;
      if (fs::file_size(path, ec) != per_file || ec) {
        if (!WriteRandomFile(path, per_file, static_cast<uint64_t>(i) + 1)) {
          std::fprintf(stderr, "cannot write %s\n", path.c_str());
          return 1;
        }
      }
      ranges.push_back({path, 0, per_file, true});
    }
  } else {
    // Every file the signature covers (the model's own signature aside), as openssl is given them.
    for (const auto& entry : fs::recursive_directory_iterator(model)) {
      if (entry.is_regular_file() && entry.path().filename() != "model.sig")
        ranges.push_back({entry.path().string(), 0, static_cast<uint64_t>(entry.file_size()), true});
    }
    total = 0;
    for (const HashRange& r : ranges) total += r.length;
  }
  std::string file_list;
  for (const HashRange& r : ranges) file_list += " '" + r.path + "'";

  auto key = kimi::models::GenerateP256Key();
  kimi::models::SignRequest sign;
  sign.model_path = model;
  sign.private_key = *key;
  auto signed_model = kimi::models::SignModel(sign);
  if (!signed_model.ok()) {
    std::fprintf(stderr, "signing failed: %s\n", signed_model.status().ToString().c_str());
    return 1;
  }
  kimi::models::SignRequest sign_shards = sign;
  sign_shards.signature_path = o.dir + "/shards.sig";
  sign_shards.shard_size = o.shard_size;
  sign_shards.auto_shard_size = o.shard_size == 0;
  if (auto sharded = kimi::models::SignModel(sign_shards); !sharded.ok()) {
    std::fprintf(stderr, "signing in shards failed: %s\n", sharded.status().ToString().c_str());
    return 1;
  }
  const uint64_t shard_size = o.shard_size != 0 ? o.shard_size : kimi::models::AutoShardSize(total);
  kimi::models::TrustStore trust;
  if (!trust.AddPem(kimi::models::PublicKeyPem(key->get()), "bench key").ok()) return 1;

  std::printf("kimi-bench-verify: %s, %zu files, %.3f GiB, %u threads (%u cores online), %zu MiB buffers, best of %d\n",
              model.c_str(), ranges.size(), static_cast<double>(total) / (1 << 30), threads,
              std::thread::hardware_concurrency(), o.buffer_mib, o.repeat);
  if (o.cold) {
    g_before_run = [&] { EvictFromCache(ranges); };
    std::printf("cold: every run starts with the files evicted from the page cache\n");
  } else {
    ReadAll(ranges, threads, buffer);  // warm the page cache so every row sees the same state
  }

  Timing read1 = Best(o.repeat, [&] { return ReadAll(ranges, 1, buffer); });
  Timing readn = Best(o.repeat, [&] { return ReadAll(ranges, threads, buffer); });
  std::string cmd = "openssl dgst -sha256" + file_list + " > /dev/null";
  Timing openssl = Best(o.repeat, [&] { return std::system(cmd.c_str()) == 0; });
  Timing serial = Best(o.repeat, [&] { return kimi::models::HashRangesSerial(ranges, buffer).ok(); });
  kimi::models::VerifyRequest verify;
  verify.model_path = model;
  verify.hashing.threads = threads;
  verify.hashing.buffer_bytes = buffer;
  // Each verify row also keeps, over its runs, the least CPU time of its busiest hashing worker.
  auto time_verify = [&](kimi::models::VerifyRequest request, double* busiest) {
    std::vector<double> worker_cpu;
    request.hashing.worker_cpu_seconds = &worker_cpu;
    *busiest = 1e300;
    return Best(o.repeat, [&] {
      if (!kimi::models::ModelVerifier::Verify(request, trust).ok()) return false;
      *busiest = std::min(*busiest, *std::max_element(worker_cpu.begin(), worker_cpu.end()));
      return true;
    });
  };
  double busiest_files = 0, busiest_shards = 0;
  Timing verified = time_verify(verify, &busiest_files);
  kimi::models::VerifyRequest verify_shards = verify;
  verify_shards.signature_path = sign_shards.signature_path;
  Timing verified_shards = time_verify(verify_shards, &busiest_shards);

  PrintRow("read, 1 thread", read1, total);
  char label[64];
  std::snprintf(label, sizeof(label), "read, %u threads", threads);
  PrintRow(label, readn, total);
  PrintRow("openssl dgst -sha256 (1 core)", openssl, total);
  PrintRow("sha256, 1 thread (ours)", serial, total);
  std::snprintf(label, sizeof(label), "verify files, %u threads", threads);
  PrintRow(label, verified, total);
  std::snprintf(label, sizeof(label), "verify %llu MiB shards, %u thr", static_cast<unsigned long long>(shard_size >> 20),
                threads);
  PrintRow(label, verified_shards, total);
  struct VerifyRow {
    const char* what;
    Timing t;
    double busiest;
  };
  for (const VerifyRow& row : {VerifyRow{"files", verified, busiest_files}, VerifyRow{"shards", verified_shards, busiest_shards}}) {
    const char* what = row.what;
    const Timing& t = row.t;
    if (t.wall <= 0 || openssl.wall <= 0 || readn.wall <= 0) continue;
    std::printf("  verify %-6s / openssl one core (wall):  %.2fx\n", what, openssl.wall / t.wall);
    // openssl's CPU time is its wall time on a free core; the busiest worker's CPU time is
    // verify's hashing wall time with a free core per thread. Their ratio does not depend on
    // what else the machine runs.
    std::printf("  verify %-6s / openssl one core (CPU of the busiest worker):  %.2fx\n", what,
                openssl.cpu / row.busiest);
    std::printf("  verify %-6s / read %u threads (wall):    %.2f (1.00 = as fast as reading)\n", what, threads,
                readn.wall / t.wall);
    std::printf("  CPU cost, verify %-6s / openssl:        %.2f (1.00 = same CPU-seconds per byte)\n", what,
                t.cpu / openssl.cpu);
  }
  if (o.import) {
    std::string copy_dir = o.dir + "/copy";
    std::string data_dir = o.dir + "/import-data";
    auto remove = [&] {
      fs::remove_all(copy_dir);
      fs::remove_all(data_dir);
    };
    remove();
    Timing copied = Best(o.repeat, [&] { return kimi::models::CopyModelTree(model, copy_dir, {}).ok(); }, remove);
    Timing imported = Best(o.repeat, [&] { return ImportOnce(model, data_dir, trust, threads); }, remove);
    PrintRow("copy + hash, one read", copied, total);
    std::snprintf(label, sizeof(label), "import (copy + verify), %u thr", threads);
    PrintRow(label, imported, total);
    if (imported.wall > 0 && openssl.wall > 0 && copied.wall > 0) {
      std::printf("  copy + hash / openssl one core (wall): %.2fx\n", openssl.wall / copied.wall);
      std::printf("  import / openssl one core (wall):      %.2fx\n", openssl.wall / imported.wall);
      std::printf("  import / copy + hash (wall):           %.2f (1.00 = verification adds nothing)\n",
                  copied.wall / imported.wall);
      std::printf("  CPU cost, import / openssl:            %.2f\n", imported.cpu / openssl.cpu);
    }
  }
  if (o.served && !TimeServedCheck(o, model, ranges, trust, openssl, total)) return 1;
  if (!o.keep) fs::remove_all(o.dir);
  return 0;
}
