#include "store/owner_only.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <string>

#include <gtest/gtest.h>

namespace kimi::store {
namespace {

mode_t ModeOf(const std::string& path) {
  struct stat st {};
  EXPECT_EQ(::lstat(path.c_str(), &st), 0) << path;
  return st.st_mode & 07777;
}

void MakeFile(const std::string& path, mode_t mode) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, mode);
  ASSERT_GE(fd, 0) << path;
  ::close(fd);
  ASSERT_EQ(::chmod(path.c_str(), mode), 0);  // whatever the test's umask
}

class OwnerOnlyTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string tmpl = (std::filesystem::temp_directory_path() / "kimi-owner-XXXXXX").string();
    ASSERT_NE(mkdtemp(tmpl.data()), nullptr);
    root_ = tmpl;
  }
  void TearDown() override { std::filesystem::remove_all(root_); }
  std::string root_;
};

TEST_F(OwnerOnlyTest, ADatabaseIsCreatedOwnerOnly) {
  const mode_t old_umask = ::umask(022);  // a permissive umask must not matter
  const std::string db = root_ + "/audit.db";
  ASSERT_TRUE(PrepareOwnerOnlyDatabase(db).ok());
  ::umask(old_umask);
  EXPECT_EQ(ModeOf(db), 0600u);
  EXPECT_EQ(std::filesystem::file_size(db), 0u);
}

// A database (and its WAL) left 0644 by an older version is tightened when it is opened.
TEST_F(OwnerOnlyTest, LooserDatabaseFilesAreTightened) {
  const std::string db = root_ + "/appliance.db";
  MakeFile(db, 0644);
  MakeFile(db + "-wal", 0664);
  MakeFile(db + "-shm", 0644);
  ASSERT_TRUE(PrepareOwnerOnlyDatabase(db).ok());
  EXPECT_EQ(ModeOf(db), 0600u);
  EXPECT_EQ(ModeOf(db + "-wal"), 0600u);
  EXPECT_EQ(ModeOf(db + "-shm"), 0600u);
}

// A database path (or a journal's) that is a link is refused, naming it: SQLite would follow
// it and write the log, 0644, wherever it points (an audit.db linked out was accepted).
TEST_F(OwnerOnlyTest, ALinkedDatabaseIsRefused) {
  const std::string elsewhere = root_ + "/elsewhere.db";
  MakeFile(elsewhere, 0644);
  for (const char* suffix : {"", "-wal"}) {
    const std::string db = root_ + "/audit.db";
    std::filesystem::remove(db);
    std::filesystem::remove(db + "-wal");
    if (std::string(suffix) == "-wal") MakeFile(db, 0600);
    std::filesystem::create_symlink(elsewhere, db + suffix);
    const Status refused = PrepareOwnerOnlyDatabase(db);
    EXPECT_EQ(refused.code(), Status::Code::kFailedPrecondition) << suffix;
    EXPECT_NE(refused.message().find(db + suffix + " is a symbolic link"), std::string::npos) << refused.ToString();
    EXPECT_EQ(ModeOf(elsewhere), 0644u);
  }
}

TEST_F(OwnerOnlyTest, TheTreeIsTightenedWithoutFollowingLinks) {
  const std::string data = root_ + "/data";
  const std::string outside = root_ + "/outside";
  ASSERT_TRUE(std::filesystem::create_directories(data + "/models/m1"));
  ASSERT_EQ(::chmod(data.c_str(), 0755), 0);
  ASSERT_EQ(::chmod((data + "/models").c_str(), 0755), 0);
  MakeFile(data + "/audit.db", 0644);
  MakeFile(data + "/models/m1/weights.safetensors", 0644);
  MakeFile(data + "/server.key", 0600);
  MakeFile(outside, 0644);
  std::filesystem::create_symlink(outside, data + "/link");

  Result<std::vector<std::string>> changed = RestrictTreeToOwner(data);
  ASSERT_TRUE(changed.ok()) << changed.status().ToString();
  EXPECT_EQ(ModeOf(data), 0700u);
  EXPECT_EQ(ModeOf(data + "/models"), 0700u);
  EXPECT_EQ(ModeOf(data + "/audit.db"), 0600u);
  EXPECT_EQ(ModeOf(data + "/models/m1/weights.safetensors"), 0600u);
  EXPECT_EQ(ModeOf(data + "/server.key"), 0600u);
  EXPECT_EQ(ModeOf(outside), 0644u) << "the link was followed";
  EXPECT_EQ(std::count(changed->begin(), changed->end(), data + "/audit.db"), 1);
  EXPECT_EQ(std::count(changed->begin(), changed->end(), data + "/server.key"), 0);

  Result<std::vector<std::string>> again = RestrictTreeToOwner(data);
  ASSERT_TRUE(again.ok());
  EXPECT_TRUE(again->empty());
  Result<std::vector<std::string>> missing = RestrictTreeToOwner(root_ + "/absent");
  ASSERT_TRUE(missing.ok());
  EXPECT_TRUE(missing->empty());
}

}  // namespace
}  // namespace kimi::store
