#include "models/served_bytes.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <filesystem>
#include <memory>
#include <mutex>
#include <vector>

#include "models/integrity_monitor.h"
#include "models/model_store_test_support.h"

namespace kimi::models {
namespace {

using testing::StoreFixture;
constexpr char kWeights[] = "model-00001.safetensors";

// A read-only private mapping of a whole file, as the engine makes (engine/io/mapped_file.cc).
class PrivateMapping {
 public:
  explicit PrivateMapping(const std::string& path) {
    int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    EXPECT_GE(fd, 0) << path;
    size_ = static_cast<uint64_t>(::lseek(fd, 0, SEEK_END));
    void* p = ::mmap(nullptr, size_, PROT_READ, MAP_PRIVATE, fd, 0);
    EXPECT_NE(p, MAP_FAILED);
    data_ = static_cast<const uint8_t*>(p);
    ::close(fd);
  }
  ~PrivateMapping() { ::munmap(const_cast<uint8_t*>(data_), size_); }
  MappedWeightFile View(const std::string& file) const { return {file, data_, size_}; }

 private:
  const uint8_t* data_ = nullptr;
  uint64_t size_ = 0;
};

// Writes one byte in place, as `open(path, "r+b")` would: the mapping above sees it.
void WriteByteInPlace(const std::string& path, off_t offset) {
  int fd = ::open(path.c_str(), O_RDWR | O_CLOEXEC);
  ASSERT_GE(fd, 0) << path;
  char byte = 0;
  ASSERT_EQ(::pread(fd, &byte, 1, offset), 1);
  byte = static_cast<char>(byte ^ 0x01);
  ASSERT_EQ(::pwrite(fd, &byte, 1, offset), 1);
  ::close(fd);
}

class ServedBytesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fixture_.MakeSignedModel("model", "seed");
    manifest_ = fixture_.Verified(dir_);
    ASSERT_NE(manifest_, nullptr);
  }

  IntegrityTarget Target(std::vector<MappedWeightFile> mapped) const {
    return IntegrityTarget{manifest_->subject_digest_hex(), dir_, manifest_, std::move(mapped), nullptr};
  }
  std::string SignedDigestOf(const std::string& file) const {
    for (const auto& e : manifest_->entries()) {
      if (e.path == file) return e.sha256_hex;
    }
    return "";
  }

  StoreFixture fixture_;
  std::string dir_;
  std::shared_ptr<const VerifiedManifest> manifest_;
};

TEST_F(ServedBytesTest, UnchangedBytesPassAndEveryByteIsHashed) {
  PrivateMapping mapping(dir_ + "/" + kWeights);
  Result<ServedBytesPass> pass = CheckServedBytes(Target({mapping.View(kWeights)}), {});
  ASSERT_TRUE(pass.ok()) << pass.status().ToString();
  EXPECT_FALSE(pass->failure) << pass->failure->message;
  EXPECT_EQ(pass->bytes, manifest_->total_bytes());
}

// The campaign's finding: a write(2) to a file the engine maps MAP_PRIVATE read-only changes
// the bytes it serves, and the check sees it in the mapping.
TEST_F(ServedBytesTest, AWriteToAMappedFileChangesTheServedBytesAndFails) {
  PrivateMapping mapping(dir_ + "/" + kWeights);
  WriteByteInPlace(dir_ + "/" + kWeights, 1000);
  Result<ServedBytesPass> pass = CheckServedBytes(Target({mapping.View(kWeights)}), {});
  ASSERT_TRUE(pass.ok()) << pass.status().ToString();
  ASSERT_TRUE(pass->failure);
  EXPECT_EQ(pass->failure->file, kWeights);
  EXPECT_EQ(pass->failure->expected_sha256, SignedDigestOf(kWeights));
  EXPECT_EQ(pass->failure->actual_sha256.size(), 64u);
  EXPECT_NE(pass->failure->actual_sha256, pass->failure->expected_sha256);
  EXPECT_NE(pass->failure->message.find(kWeights), std::string::npos) << pass->failure->message;
  EXPECT_NE(pass->failure->message.find(pass->failure->expected_sha256), std::string::npos);
}

// What is hashed is what the engine holds: a mapping that differs from the file fails even
// while the file itself is intact, and files the engine does not map are read from disk.
TEST_F(ServedBytesTest, HashesTheMappingNotThePathAndUnmappedFilesFromDisk) {
  std::string served = testing::ReadFile(dir_ + "/" + kWeights);
  served[17] = static_cast<char>(served[17] ^ 0x40);
  MappedWeightFile view{kWeights, reinterpret_cast<const uint8_t*>(served.data()), served.size()};
  Result<ServedBytesPass> pass = CheckServedBytes(Target({view}), {});
  ASSERT_TRUE(pass.ok());
  ASSERT_TRUE(pass->failure);
  EXPECT_EQ(pass->failure->file, kWeights);

  PrivateMapping mapping(dir_ + "/" + kWeights);
  testing::FlipByte(dir_ + "/config.json", 2);
  pass = CheckServedBytes(Target({mapping.View(kWeights)}), {});
  ASSERT_TRUE(pass.ok());
  ASSERT_TRUE(pass->failure);
  EXPECT_EQ(pass->failure->file, "config.json");

  // A restricted pass reads only the files it names.
  std::vector<std::string> only = {kWeights};
  pass = CheckServedBytes(Target({mapping.View(kWeights)}), {}, nullptr, &only);
  ASSERT_TRUE(pass.ok());
  EXPECT_FALSE(pass->failure);
}

TEST_F(ServedBytesTest, AMissingOrShortFileIsAFailureNamingIt) {
  ASSERT_EQ(::unlink((dir_ + "/sub/tokenizer.model").c_str()), 0);
  Result<ServedBytesPass> pass = CheckServedBytes(Target({}), {});
  ASSERT_TRUE(pass.ok());
  ASSERT_TRUE(pass->failure);
  EXPECT_EQ(pass->failure->file, "sub/tokenizer.model");
  EXPECT_TRUE(pass->failure->actual_sha256.empty());
  EXPECT_NE(pass->failure->message.find("cannot be read"), std::string::npos) << pass->failure->message;

  std::string weights = testing::ReadFile(dir_ + "/" + kWeights);
  MappedWeightFile shorter{kWeights, reinterpret_cast<const uint8_t*>(weights.data()), weights.size() - 1};
  std::vector<std::string> only = {kWeights};
  pass = CheckServedBytes(Target({shorter}), {}, nullptr, &only);
  ASSERT_TRUE(pass.ok());
  ASSERT_TRUE(pass->failure);
  EXPECT_EQ(pass->failure->file, kWeights);
}

// A served file truncated under its mapping: reading the pages past its new end raised SIGBUS
// and the daemon died; the check sees the size first and reports the file instead.
TEST_F(ServedBytesTest, ATruncatedMappedFileIsAFailureNotACrash) {
  const std::string path = dir_ + "/" + kWeights;
  PrivateMapping mapping(path);
  const uint64_t size = std::filesystem::file_size(path);
  ASSERT_EQ(::truncate(path.c_str(), static_cast<off_t>(size / 2)), 0);
  Result<ServedBytesPass> pass = CheckServedBytes(Target({mapping.View(kWeights)}), {});
  ASSERT_TRUE(pass.ok()) << pass.status().ToString();
  ASSERT_TRUE(pass->failure);
  EXPECT_EQ(pass->failure->file, kWeights);
  EXPECT_NE(pass->failure->message.find("truncated while served"), std::string::npos) << pass->failure->message;
}

// Someone who can write the model directory renames a FIFO over config.json: the check's open()
// waited for a writer for ever, so no later pass ran and the daemon could not stop. Now anything
// but a regular file (a FIFO, a link, even to the signed bytes) is a failure naming the file.
TEST_F(ServedBytesTest, AFifoOrALinkInPlaceOfACheckedFileIsAFailureNotAWait) {
  PrivateMapping mapping(dir_ + "/" + kWeights);
  const std::string config = dir_ + "/config.json", fifo = dir_ + "/fifo";
  const std::string signed_copy = fixture_.root() + "/config-copy.json";
  std::filesystem::copy_file(config, signed_copy);
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  std::filesystem::rename(fifo, config);
  Result<ServedBytesPass> pass = Status::Internal("not run");
  EXPECT_TRUE(testing::ReturnsWithin(
      std::chrono::seconds(20), [&] { pass = CheckServedBytes(Target({mapping.View(kWeights)}), {}); },
      [&] { testing::ReleaseFifoReaders(config); }));
  ASSERT_TRUE(pass.ok()) << pass.status().ToString();
  ASSERT_TRUE(pass->failure);
  EXPECT_EQ(pass->failure->file, "config.json");
  EXPECT_NE(pass->failure->message.find("FIFO"), std::string::npos) << pass->failure->message;

  std::filesystem::remove(config);
  std::filesystem::create_symlink(signed_copy, config);
  pass = CheckServedBytes(Target({mapping.View(kWeights)}), {});
  ASSERT_TRUE(pass.ok()) << pass.status().ToString();
  ASSERT_TRUE(pass->failure) << "a link to the signed bytes was followed";
  EXPECT_EQ(pass->failure->file, "config.json");
}

// A checked file longer than signed: the signed ranges alone still hash right, the size does not.
TEST_F(ServedBytesTest, AFileLongerThanSignedIsAFailure) {
  PrivateMapping mapping(dir_ + "/" + kWeights);
  const std::string config = dir_ + "/config.json";
  testing::WriteFile(config, testing::ReadFile(config) + "   ");
  Result<ServedBytesPass> pass = CheckServedBytes(Target({mapping.View(kWeights)}), {});
  ASSERT_TRUE(pass.ok()) << pass.status().ToString();
  ASSERT_TRUE(pass->failure);
  EXPECT_EQ(pass->failure->file, "config.json");
}

TEST_F(ServedBytesTest, StopsWhenCancelledAndNeedsAManifest) {
  std::atomic<bool> cancel{true};
  EXPECT_EQ(CheckServedBytes(Target({}), {}, &cancel).status().code(), Status::Code::kCancelled);
  IntegrityTarget none = Target({});
  none.manifest = nullptr;
  EXPECT_EQ(CheckServedBytes(none, {}).status().code(), Status::Code::kInvalidArgument);
}

// --- IntegrityMonitor ------------------------------------------------------------------

// Collects the monitor's reports for the test thread.
struct Reports {
  std::mutex mu;
  std::condition_variable cv;
  std::vector<IntegrityFailure> failures;
  int passes = 0;

  IntegrityMonitorOptions Options(bool watch_writes) {
    IntegrityMonitorOptions options;
    options.interval = std::chrono::milliseconds(0);  // only what the test asks for
    options.watch_writes = watch_writes;
    options.on_failure = [this](const IntegrityTarget& target, const IntegrityFailure& failure) {
      EXPECT_EQ(target.owner, nullptr);  // the engine is not held while the caller reacts
      std::lock_guard<std::mutex> lock(mu);
      failures.push_back(failure);
      cv.notify_all();
    };
    options.on_pass = [this](const IntegrityTarget&, const ServedBytesPass&) {
      std::lock_guard<std::mutex> lock(mu);
      ++passes;
      cv.notify_all();
    };
    return options;
  }
  // Generous bounds: they only stop a hung test.
  bool WaitForPasses(int n) {
    std::unique_lock<std::mutex> lock(mu);
    return cv.wait_for(lock, std::chrono::seconds(60), [&] { return passes >= n || !failures.empty(); }) &&
           passes >= n;
  }
  bool WaitForFailure() {
    std::unique_lock<std::mutex> lock(mu);
    return cv.wait_for(lock, std::chrono::seconds(60), [&] { return !failures.empty(); });
  }
};

TEST_F(ServedBytesTest, MonitorChecksAtWatchAndOnDemandAndReportsTheFirstFailureOnce) {
  Reports reports;
  IntegrityMonitor monitor(reports.Options(/*watch_writes=*/false));
  std::string served = testing::ReadFile(dir_ + "/" + kWeights);
  MappedWeightFile view{kWeights, reinterpret_cast<const uint8_t*>(served.data()), served.size()};
  monitor.Watch(Target({view}));
  ASSERT_TRUE(reports.WaitForPasses(1));  // right after load
  monitor.CheckNow();
  ASSERT_TRUE(reports.WaitForPasses(2));  // SIGHUP

  served[100] = static_cast<char>(served[100] ^ 0x01);  // the served bytes change
  monitor.CheckNow();
  ASSERT_TRUE(reports.WaitForFailure());
  {
    std::lock_guard<std::mutex> lock(reports.mu);
    ASSERT_EQ(reports.failures.size(), 1u);
    EXPECT_EQ(reports.failures[0].file, kWeights);
  }
  // The failed version is no longer checked: asking again reports nothing more.
  const uint64_t passes = monitor.passes();
  monitor.CheckNow();
  monitor.Stop();
  EXPECT_EQ(monitor.passes(), passes);
  std::lock_guard<std::mutex> lock(reports.mu);
  EXPECT_EQ(reports.failures.size(), 1u);
}

TEST_F(ServedBytesTest, MonitorChecksAWrittenFileWithoutBeingAsked) {
  Reports reports;
  IntegrityMonitor monitor(reports.Options(/*watch_writes=*/true));
  PrivateMapping mapping(dir_ + "/" + kWeights);
  monitor.Watch(Target({mapping.View(kWeights)}));
  ASSERT_TRUE(reports.WaitForPasses(1));
  WriteByteInPlace(dir_ + "/" + kWeights, 4321);  // no CheckNow(), no interval: inotify
  ASSERT_TRUE(reports.WaitForFailure());
  std::lock_guard<std::mutex> lock(reports.mu);
  EXPECT_EQ(reports.failures[0].file, kWeights);
}

// The reported attack end to end: a FIFO over config.json, then a flipped weight byte. The
// monitor's one thread reports the FIFO (the model leaves service) and stops when asked.
TEST_F(ServedBytesTest, MonitorReportsAFifoAndStillStops) {
  Reports reports;
  const std::string config = dir_ + "/config.json", fifo = dir_ + "/fifo";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  std::filesystem::rename(fifo, config);
  std::string served = testing::ReadFile(dir_ + "/" + kWeights);
  served[100] = static_cast<char>(served[100] ^ 0x01);
  MappedWeightFile view{kWeights, reinterpret_cast<const uint8_t*>(served.data()), served.size()};
  EXPECT_TRUE(testing::ReturnsWithin(
      std::chrono::seconds(30),
      [&] {
        IntegrityMonitor monitor(reports.Options(/*watch_writes=*/false));
        monitor.Watch(Target({view}));
        EXPECT_TRUE(reports.WaitForFailure());
        monitor.Stop();
      },
      [&] { testing::ReleaseFifoReaders(config); }));
  std::lock_guard<std::mutex> lock(reports.mu);
  ASSERT_FALSE(reports.failures.empty());
  EXPECT_EQ(reports.failures[0].file, "config.json");
}

// The daemon drains the engine after stopping the monitor: the monitor must not hold it.
TEST_F(ServedBytesTest, MonitorLetsGoOfTheEngineWhenUnwatchedOrStopped) {
  Reports reports;
  IntegrityMonitor monitor(reports.Options(false));
  PrivateMapping mapping(dir_ + "/" + kWeights);
  auto engine = std::make_shared<int>(0);
  IntegrityTarget target = Target({mapping.View(kWeights)});
  target.owner = engine;
  monitor.Watch(target);
  target.owner.reset();
  ASSERT_TRUE(reports.WaitForPasses(1));
  EXPECT_GT(engine.use_count(), 1);  // watched: held between passes
  monitor.Unwatch();
  EXPECT_EQ(engine.use_count(), 1);
  monitor.Watch(Target({mapping.View(kWeights)}));
  IntegrityTarget again = Target({mapping.View(kWeights)});
  again.owner = engine;
  monitor.Watch(std::move(again));
  monitor.Stop();
  EXPECT_EQ(engine.use_count(), 1);
}

TEST_F(ServedBytesTest, PeriodicPassesRunAtTheInterval) {
  Reports reports;
  IntegrityMonitorOptions options = reports.Options(false);
  options.interval = std::chrono::milliseconds(10);
  IntegrityMonitor monitor(std::move(options));
  PrivateMapping mapping(dir_ + "/" + kWeights);
  monitor.Watch(Target({mapping.View(kWeights)}));
  EXPECT_TRUE(reports.WaitForPasses(3));  // at Watch(), then twice more unasked
}

}  // namespace
}  // namespace kimi::models
