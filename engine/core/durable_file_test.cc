// Files written whole or not at all (kimi/durable_file.h): the target keeps its old contents
// until the new ones are complete and synced, and nothing is left behind by a failed or
// abandoned write.
#include "kimi/durable_file.h"

#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include <gtest/gtest.h>

#include "core/test_dir.h"

namespace kimi {
namespace {

class DurableFileTest : public ::testing::Test {
 protected:
  std::string Read(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    std::ostringstream text;
    text << in.rdbuf();
    return text.str();
  }
  // The directory's entries, the target's included.
  size_t Entries() const {
    return static_cast<size_t>(std::distance(std::filesystem::directory_iterator(dir_), {}));
  }
  testing::TestDir tmp_;
  const std::string dir_ = tmp_.path();
};

TEST_F(DurableFileTest, ReplacesWholeWithTheGivenMode) {
  const std::string path = dir_ + "/key.pem";
  ASSERT_TRUE(WriteFileAtomically(path, "old", 0644).ok());
  ASSERT_TRUE(WriteFileAtomically(path, "new contents", 0600).ok());
  EXPECT_EQ(Read(path), "new contents");
  struct stat st {};
  ASSERT_EQ(::stat(path.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);  // not the old file's 0644
  EXPECT_EQ(Entries(), 1u);
}

TEST_F(DurableFileTest, RefusingKeepsTheExistingFile) {
  const std::string path = dir_ + "/seed";
  ASSERT_TRUE(WriteFileAtomically(path, "first", 0600, IfExists::kRefuse).ok());
  const Status again = WriteFileAtomically(path, "second", 0600, IfExists::kRefuse);
  EXPECT_EQ(again.code(), Status::Code::kAlreadyExists) << again.ToString();
  EXPECT_EQ(Read(path), "first");
  EXPECT_EQ(Entries(), 1u);
}

// A writer that stops before Commit (an export that failed halfway) leaves the target as it
// was and no temporary file.
TEST_F(DurableFileTest, AnAbandonedWriterLeavesTheTargetAsItWas) {
  const std::string path = dir_ + "/export.jsonl";
  ASSERT_TRUE(WriteFileAtomically(path, "the previous export\n").ok());
  {
    Result<std::unique_ptr<AtomicFileWriter>> writer = AtomicFileWriter::Create(path);
    ASSERT_TRUE(writer.ok()) << writer.status().ToString();
    (*writer)->stream() << "half of the new one";
    EXPECT_EQ(Read(path), "the previous export\n");
    EXPECT_EQ(Entries(), 2u);
  }
  EXPECT_EQ(Read(path), "the previous export\n");
  EXPECT_EQ(Entries(), 1u);
}

// What is created is the owner's alone unless the caller asks for more, whatever the umask:
// kimictl keeps the one it was started with (audit exports came out 0644).
TEST_F(DurableFileTest, NewFilesAreOwnerOnlyUnlessAModeIsGiven) {
  const mode_t umask_before = ::umask(022);
  {
    Result<std::unique_ptr<AtomicFileWriter>> writer = AtomicFileWriter::Create(dir_ + "/export.jsonl");
    ASSERT_TRUE(writer.ok()) << writer.status().ToString();
    (*writer)->stream() << "records\n";
    ASSERT_TRUE((*writer)->Commit().ok());
  }
  ASSERT_TRUE(WriteFileAtomically(dir_ + "/head.json", "{}").ok());
  ASSERT_TRUE(WriteFileAtomically(dir_ + "/model.sig", "{}", 0644).ok());
  ::umask(umask_before);
  EXPECT_EQ(Read(dir_ + "/export.jsonl"), "records\n");
  for (const auto& [file, mode] :
       {std::pair{"export.jsonl", 0600u}, {"head.json", 0600u}, {"model.sig", 0644u}}) {
    struct stat st {};
    ASSERT_EQ(::stat((dir_ + "/" + file).c_str(), &st), 0) << file;
    EXPECT_EQ(st.st_mode & 0777, mode) << file;
  }
}

// The writer keeps the descriptor it created and never opens its temporary file by name again:
// another file, or a link to a victim, renamed over the temporary name in a directory others can
// write is neither written, synced nor published, and the target keeps its contents.
TEST_F(DurableFileTest, TheTemporaryFileIsNeverReopenedByName) {
  const std::string path = dir_ + "/export.jsonl", victim = dir_ + "/victim";
  ASSERT_TRUE(WriteFileAtomically(path, "the previous export\n").ok());
  std::ofstream(victim, std::ios::binary) << "the victim's bytes";
  for (bool link : {false, true}) {
    Result<std::unique_ptr<AtomicFileWriter>> writer = AtomicFileWriter::Create(path);
    ASSERT_TRUE(writer.ok()) << writer.status().ToString();
    std::string temporary;
    for (const auto& entry : std::filesystem::directory_iterator(dir_)) {
      if (entry.path().string().starts_with(path + ".tmp.")) temporary = entry.path().string();
    }
    ASSERT_FALSE(temporary.empty());
    const std::string planted = dir_ + "/planted";
    if (link) {
      std::filesystem::create_symlink(victim, planted);
    } else {
      std::ofstream(planted, std::ios::binary) << "someone else's bytes";
    }
    std::filesystem::rename(planted, temporary);
    (*writer)->stream() << "the new export\n";
    const Status committed = (*writer)->Commit();
    EXPECT_FALSE(committed.ok()) << (link ? "link" : "file");
    EXPECT_EQ(Read(path), "the previous export\n") << (link ? "link" : "file");
    EXPECT_EQ(Read(victim), "the victim's bytes");
    std::filesystem::remove(temporary);
  }
}

TEST_F(DurableFileTest, AFailedWriteNamesThePathAndLeavesNothing) {
  const Status s = WriteFileAtomically(dir_ + "/missing/dir/file", "x");
  EXPECT_EQ(s.code(), Status::Code::kIOError);
  EXPECT_NE(s.message().find("cannot write " + dir_ + "/missing/dir/file: "), std::string::npos) << s.ToString();
  EXPECT_EQ(Entries(), 0u);
  // A directory in the target's place: the rename fails, the temporary file goes.
  std::filesystem::create_directory(dir_ + "/taken");
  EXPECT_FALSE(WriteFileAtomically(dir_ + "/taken", "x").ok());
  EXPECT_EQ(Entries(), 1u);
}

}  // namespace
}  // namespace kimi
