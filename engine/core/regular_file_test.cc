// Opening a file someone else may have swapped (kimi/regular_file.h): a FIFO, a socket, a
// directory or (unless asked) a symlink is refused at once, and what is reported is the opened
// descriptor's file.
#include "kimi/regular_file.h"

#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <fstream>

#include <gtest/gtest.h>

#include "core/test_dir.h"

namespace kimi {
namespace {

class RegularFileTest : public ::testing::Test {
 protected:
  void SetUp() override { std::ofstream(dir_ + "/plain", std::ios::binary) << "twelve bytes"; }
  testing::TestDir tmp_;
  const std::string dir_ = tmp_.path();
};

TEST_F(RegularFileTest, OpensARegularFileAndSaysWhichItIs) {
  Result<RegularFile> file = OpenRegularFile(dir_ + "/plain");
  ASSERT_TRUE(file.ok()) << file.status().ToString();
  EXPECT_EQ(file->size(), 12u);
  Result<FileIdentity> seen = IdentityAt(dir_ + "/plain");
  ASSERT_TRUE(seen.ok());
  EXPECT_EQ(file->identity(), *seen);
  char byte = 0;
  EXPECT_EQ(::pread(file->fd(), &byte, 1, 0), 1);  // an ordinary descriptor
  EXPECT_EQ(byte, 't');
  EXPECT_EQ(ReadRegularFile(dir_ + "/plain", 12).value(), "twelve bytes");
  EXPECT_EQ(ReadRegularFile(dir_ + "/plain", 11).status().code(), Status::Code::kInvalidArgument);
  EXPECT_EQ(OpenRegularFile(dir_ + "/absent").status().code(), Status::Code::kNotFound);
}

// The open of a FIFO for reading waits for a writer; the alarm ends a regression that waits.
TEST_F(RegularFileTest, AFifoASocketAndADirectoryAreRefusedWithoutWaiting) {
  const std::string fifo = dir_ + "/fifo";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  ::alarm(60);
  Result<RegularFile> opened = OpenRegularFile(fifo);
  Result<std::string> read = ReadRegularFile(fifo, 1 << 20, FinalLink::kFollow);
  ::alarm(0);
  EXPECT_EQ(opened.status().code(), Status::Code::kInvalidArgument);
  EXPECT_NE(opened.status().message().find(fifo + " is a FIFO"), std::string::npos)
      << opened.status().ToString();
  EXPECT_EQ(read.status().code(), Status::Code::kInvalidArgument);

  const int sock = ::socket(AF_UNIX, SOCK_STREAM, 0);
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  const std::string socket_path = dir_ + "/sock";
  ASSERT_LT(socket_path.size(), sizeof addr.sun_path);
  std::strcpy(addr.sun_path, socket_path.c_str());
  ASSERT_EQ(::bind(sock, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
  EXPECT_NE(OpenRegularFile(socket_path).status().code(), Status::Code::kOk);  // ENXIO: not opened at all
  ::close(sock);
  EXPECT_EQ(OpenRegularFile(dir_).status().code(), Status::Code::kInvalidArgument);
}

TEST_F(RegularFileTest, ALinkIsRefusedUnlessFollowedAndThenItsTargetMustBeRegular) {
  std::filesystem::create_symlink(dir_ + "/plain", dir_ + "/link");
  Result<RegularFile> refused = OpenRegularFile(dir_ + "/link");
  EXPECT_EQ(refused.status().code(), Status::Code::kInvalidArgument);
  EXPECT_NE(refused.status().message().find("symbolic link"), std::string::npos)
      << refused.status().ToString();
  Result<RegularFile> followed = OpenRegularFile(dir_ + "/link", FinalLink::kFollow);
  ASSERT_TRUE(followed.ok()) << followed.status().ToString();
  EXPECT_EQ(followed->identity(), IdentityAt(dir_ + "/plain").value());
  EXPECT_NE(followed->identity(), IdentityAt(dir_ + "/link").value());  // lstat: the link itself

  ASSERT_EQ(::mkfifo((dir_ + "/fifo").c_str(), 0600), 0);
  std::filesystem::create_symlink(dir_ + "/fifo", dir_ + "/fifo-link");
  ::alarm(60);
  const Status to_fifo = OpenRegularFile(dir_ + "/fifo-link", FinalLink::kFollow).status();
  ::alarm(0);
  EXPECT_EQ(to_fifo.code(), Status::Code::kInvalidArgument) << to_fifo.ToString();
}

}  // namespace
}  // namespace kimi
