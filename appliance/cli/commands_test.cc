#include "cli/commands.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>
#include <string>

#include <gtest/gtest.h>

namespace kimi::cli {
namespace {

// Captures what a command prints.
class Captured {
 public:
  Captured() : out_(std::tmpfile()), err_(std::tmpfile()) {}
  ~Captured() {
    std::fclose(out_);
    std::fclose(err_);
  }
  Io io() const { return Io{out_, err_}; }
  std::string out() const { return Read(out_); }
  std::string err() const { return Read(err_); }

 private:
  static std::string Read(std::FILE* f) {
    std::fflush(f);
    std::rewind(f);
    std::string s;
    char buf[4096];
    size_t n;
    while ((n = std::fread(buf, 1, sizeof buf, f)) > 0) s.append(buf, n);
    return s;
  }
  std::FILE* out_;
  std::FILE* err_;
};

TEST(KimictlTest, TableIsWellFormed) {
  std::set<std::string_view> paths;
  for (const Command& c : CommandTable()) {
    EXPECT_FALSE(c.path.empty());
    EXPECT_FALSE(c.summary.empty()) << c.path;
    EXPECT_NE(c.run, nullptr) << c.path;
    EXPECT_TRUE(paths.insert(c.path).second) << "duplicate command " << c.path;
  }
}

TEST(KimictlTest, HelpListsEveryCommand) {
  Captured cap;
  EXPECT_EQ(RunKimictl({"kimictl", "help"}, cap.io()), 0);
  for (const Command& c : CommandTable()) EXPECT_NE(cap.out().find(std::string(c.path)), std::string::npos) << c.path;
  Captured none;
  EXPECT_EQ(RunKimictl({"kimictl"}, none.io()), 2);
}

TEST(KimictlTest, UnknownCommandsAndOptionsAreUsageErrors) {
  Captured cap;
  EXPECT_EQ(RunKimictl({"kimictl", "config", "frob"}, cap.io()), 2);
  EXPECT_NE(cap.err().find("unknown command \"config frob\""), std::string::npos) << cap.err();
  Captured opt;
  EXPECT_EQ(RunKimictl({"kimictl", "config", "check", "--colour", "x"}, opt.io()), 2);
  EXPECT_NE(opt.err().find("kimictl config check: unknown argument \"--colour\""), std::string::npos) << opt.err();
  Captured missing;
  EXPECT_EQ(RunKimictl({"kimictl", "config", "check", "--config"}, missing.io()), 2);
  EXPECT_NE(missing.err().find("--config needs a value"), std::string::npos);
}

TEST(KimictlTest, ConfigCheckUsesTheDaemonsValidator) {
  std::string dir = std::filesystem::temp_directory_path() / "kimictl-test-XXXXXX";
  ASSERT_NE(mkdtemp(dir.data()), nullptr);
  std::string path = dir + "/a.json";
  std::ofstream(path) << R"({"server":{"allow_plain_http_on_loopback":true},"limits":{"read_timeout_ms":"5"}})";
  Captured bad;
  EXPECT_EQ(RunKimictl({"kimictl", "config", "check", "--config=" + path}, bad.io()), 1);
  EXPECT_EQ(bad.err(), "kimictl config check: " + path +
                           ": $.limits.read_timeout_ms: expected an integer, got a string\n");
  std::ofstream(path) << R"({"server":{"allow_plain_http_on_loopback":true}})";
  Captured good;
  EXPECT_EQ(RunKimictl({"kimictl", "config", "check", "--config", path}, good.io()), 0) << good.err();
  EXPECT_NE(good.out().find(": ok"), std::string::npos);
  std::filesystem::remove_all(dir);
}

// Key names come from admin API callers: listed as text, never as terminal escapes or as a
// line break that forges a row (or a NUL that hides the rest of the name).
TEST(KimictlTest, KeyListShowsNamesAsText) {
  std::string dir = std::filesystem::temp_directory_path() / "kimictl-test-XXXXXX";
  ASSERT_NE(mkdtemp(dir.data()), nullptr);
  const std::string name = std::string("red\x1b[31m\nkey_ffff admin\r=1+1\0admin", 34);
  Captured created;
  ASSERT_EQ(RunKimictl({"kimictl", "key", "create", "--data-dir", dir, "--name", name, "--role", "user"}, created.io()), 0)
      << created.err();
  EXPECT_EQ(created.err().find('\x1b'), std::string::npos) << created.err();
  Captured listed;
  ASSERT_EQ(RunKimictl({"kimictl", "key", "list", "--data-dir", dir}, listed.io()), 0) << listed.err();
  const std::string out = listed.out();
  EXPECT_EQ(out.find('\x1b'), std::string::npos) << out;
  EXPECT_EQ(out.find('\r'), std::string::npos) << out;
  EXPECT_EQ(std::count(out.begin(), out.end(), '\n'), 2) << out;  // the header and one key
  EXPECT_NE(out.find("red\\u001b[31m\\u000akey_ffff admin\\u000d=1+1\\u0000admin"), std::string::npos) << out;
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace kimi::cli
