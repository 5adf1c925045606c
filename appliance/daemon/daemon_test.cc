// Daemon::Open's steps: their order (the port before the data directory) and a whole start
// and stop without serving.
#include "daemon/daemon.h"

#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <string>

#include "audit/test_util.h"
#include "config/config.h"

namespace kimi::daemon {
namespace {

bool Exists(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0;
}

config::AppConfig ConfigFor(const std::string& listen, const std::string& data_dir) {
  const std::string text = R"({"server": {"listen": ")" + listen +
                           R"(", "allow_plain_http_on_loopback": true}, "storage": {"data_dir": ")" +
                           data_dir + R"("}, "log": {"level": "error", "format": "json"}})";
  Result<config::AppConfig> config = config::ParseConfig(text, "test", {}, data_dir);
  EXPECT_TRUE(config.ok()) << config.status().ToString();
  return *config;
}

// A socket listening on a loopback port the kernel chose; the port is in use while it lives.
struct HeldPort {
  HeldPort() {
    fd = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    EXPECT_EQ(::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
    EXPECT_EQ(::listen(fd, 1), 0);
    socklen_t len = sizeof addr;
    ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
    port = ntohs(addr.sin_port);
  }
  ~HeldPort() { ::close(fd); }
  int fd = -1;
  int port = 0;
};

TEST(DaemonTest, APortInUseFailsBeforeTheDataDirectoryIsTouched) {
  audit::testing::TempDir dir;
  HeldPort held;
  const std::string data_dir = dir.File("data");
  Result<std::unique_ptr<Daemon>> daemon =
      Daemon::Open(ConfigFor("127.0.0.1:" + std::to_string(held.port), data_dir), {"test.json", {}});
  ASSERT_FALSE(daemon.ok());
  EXPECT_NE(daemon.status().message().find("address already in use"), std::string::npos)
      << daemon.status().ToString();
  EXPECT_FALSE(Exists(data_dir));
}

TEST(DaemonTest, OpensEveryPartAndClosesThemWithoutServing) {
  audit::testing::TempDir dir;
  const std::string data_dir = dir.File("data");
  {
    Result<std::unique_ptr<Daemon>> daemon =
        Daemon::Open(ConfigFor("127.0.0.1:0", data_dir), {"test.json", {}});
    ASSERT_TRUE(daemon.ok()) << daemon.status().ToString();
    EXPECT_EQ((*daemon)->bound_address().rfind("127.0.0.1:", 0), 0u) << (*daemon)->bound_address();
    EXPECT_NE((*daemon)->bound_address(), "127.0.0.1:0");
    EXPECT_TRUE(Exists(data_dir + "/audit.db"));
  }
  // The parts were closed: a second daemon opens the same data directory.
  Result<std::unique_ptr<Daemon>> again = Daemon::Open(ConfigFor("127.0.0.1:0", data_dir), {"test.json", {}});
  EXPECT_TRUE(again.ok()) << again.status().ToString();
}

}  // namespace
}  // namespace kimi::daemon
