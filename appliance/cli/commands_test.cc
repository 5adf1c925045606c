#include "cli/commands.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>
#include <string>
#include <utility>
#include <vector>

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

// A key's models are names of served models, which an upstream's own model list may give: shown as
// text by `key update` as by `key list`.
TEST(KimictlTest, KeyUpdateShowsModelNamesAsText) {
  std::string dir = std::filesystem::temp_directory_path() / "kimictl-test-XXXXXX";
  ASSERT_NE(mkdtemp(dir.data()), nullptr);
  Captured created;
  ASSERT_EQ(RunKimictl({"kimictl", "key", "create", "--data-dir", dir, "--name", "k", "--role", "user", "--models",
                        "k3,up\x1b[31m\nkey_ffff"},
                       created.io()),
            0)
      << created.err();
  const std::string id = created.err().substr(created.err().find("key_"), 20);
  Captured updated;
  ASSERT_EQ(RunKimictl({"kimictl", "key", "update", id, "--data-dir", dir, "--role", "operator"}, updated.io()), 0)
      << updated.err();
  EXPECT_EQ(updated.out().find('\x1b'), std::string::npos) << updated.out();
  EXPECT_NE(updated.out().find("models k3,up\\u001b[31m\\u000akey_ffff;"), std::string::npos) << updated.out();
  std::filesystem::remove_all(dir);
}

// A temporary directory, removed with everything in it at the end of the test.
class TempDir {
 public:
  TempDir() : path_(std::filesystem::temp_directory_path() / "kimictl-test-XXXXXX") {
    EXPECT_NE(mkdtemp(path_.data()), nullptr);
  }
  ~TempDir() { std::filesystem::remove_all(path_); }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

// Runs kimictl with `words`; returns the exit code, err in *err.
int Kimictl(std::vector<std::string> words, std::string* err) {
  words.insert(words.begin(), "kimictl");
  Captured cap;
  const int code = RunKimictl(words, cap.io());
  *err = cap.err();
  return code;
}

// A word the command takes no place for was read past before: "audit verify" and "audit head"
// verified and printed as if it were not there.
TEST(KimictlOptionsTest, AStrayWordIsAUsageErrorForEveryKindOfCommand) {
  TempDir dir;
  const std::string data_dir = "--data-dir=" + dir.path();
  for (const std::vector<std::string>& words :
       {std::vector<std::string>{"audit", "verify", "stray", data_dir}, {"audit", "head", "stray", data_dir},
        {"audit", "prove", "1", "stray", data_dir}, {"key", "list", "stray", data_dir},
        {"key", "revoke", "KEY", "stray", data_dir}, {"model", "list", "stray", data_dir}, {"version", "stray"}}) {
    std::string err;
    EXPECT_EQ(Kimictl(words, &err), 2) << words[0] << " " << words[1];
    EXPECT_NE(err.find("stray"), std::string::npos) << words[0] << " " << words[1] << ": " << err;
  }
}

// "--name=value" was an unknown option to the model commands; a key's, user's or role's name
// after the options was an unknown argument to the key and user commands.
TEST(KimictlOptionsTest, EveryCommandTakesValuesEitherWayAndItsWordAmongTheOptions) {
  TempDir dir;
  for (const std::vector<std::string>& words :
       {std::vector<std::string>{"model", "list", "--data-dir=" + dir.path()},
        {"key", "revoke", "--data-dir", dir.path(), "KEY"},
        {"user", "disable", "--data-dir=" + dir.path(), "someone"},
        {"audit", "head", "--data-dir=" + dir.path()}}) {
    std::string err;
    Kimictl(words, &err);
    // The data directory holds no store: each command gets as far as opening it.
    EXPECT_EQ(err.find("unknown"), std::string::npos) << words[0] << " " << words[1] << ": " << err;
    EXPECT_EQ(err.find("usage"), std::string::npos) << words[0] << " " << words[1] << ": " << err;
    EXPECT_NE(err.find(dir.path()), std::string::npos) << words[0] << " " << words[1] << ": " << err;
  }
}

// The commands that read or edit an existing store, with arguments that pass their own checks.
const std::vector<std::vector<std::string>> kCommandsOnAnExistingStore = {
    {"key", "list"},
    {"key", "revoke", "key_0000000000000000"},
    {"key", "rotate", "key_0000000000000000", "--grace", "1h"},
    {"key", "update", "key_0000000000000000", "--rpm", "5"},
    {"role", "limits"},
    {"role", "limits", "user", "--rpm", "5"},
    {"user", "add", "bob", "--role", "user"},
    {"user", "list"},
    {"user", "disable", "bob"},
    {"user", "enable", "bob"},
    {"user", "unlock", "bob"},
    {"user", "reset-password", "bob"},
    {"model", "list"},
    {"model", "import", "--id", "k3", "/nonexistent-medium"},
    {"model", "activate", "k3", "0123456789abcdef"},
    {"model", "rollback", "k3"},
    {"model", "remove", "k3", "0123456789abcdef"},
    {"model", "verify-installed", "k3"},
};

std::vector<std::string> Kimictl(std::vector<std::string> words, const std::string& data_dir) {
  words.insert(words.begin(), "kimictl");
  words.insert(words.end(), {"--data-dir", data_dir});
  return words;
}

// A mistyped --data-dir must not become a new, empty store that every command reports success on.
TEST(KimictlTest, CommandsOnAStoreRefuseADataDirWithoutOne) {
  TempDir tmp;
  const std::string missing = tmp.path() + "/typo";
  for (const auto& words : kCommandsOnAnExistingStore) {
    Captured cap;
    EXPECT_NE(RunKimictl(Kimictl(words, missing), cap.io()), 0) << words[0] << " " << words[1];
    EXPECT_NE(cap.err().find("no appliance data in " + missing + " (is --data-dir right?)"), std::string::npos)
        << words[0] << " " << words[1] << ": " << cap.err();
    EXPECT_FALSE(std::filesystem::exists(missing)) << words[0] << " " << words[1] << " created " << missing;
  }
}

TEST(KimictlTest, CommandsOnAStoreRefuseAnEmptyDataDir) {
  TempDir empty;
  for (const auto& words : kCommandsOnAnExistingStore) {
    Captured cap;
    EXPECT_NE(RunKimictl(Kimictl(words, empty.path()), cap.io()), 0) << words[0] << " " << words[1];
    EXPECT_NE(cap.err().find("no appliance data in " + empty.path()), std::string::npos)
        << words[0] << " " << words[1] << ": " << cap.err();
    EXPECT_TRUE(std::filesystem::is_empty(empty.path())) << words[0] << " " << words[1] << " wrote into it";
  }
}

// The installer and `make run` set a data directory up with admin bootstrap, the test harness
// with key create; afterwards the other commands find the store.
TEST(KimictlTest, BootstrapAndKeyCreateSetUpAFreshDataDir) {
  TempDir tmp;
  const std::string bootstrapped = tmp.path() + "/bootstrapped";
  Captured bootstrap;
  ASSERT_EQ(RunKimictl({"kimictl", "admin", "bootstrap", "--data-dir", bootstrapped}, bootstrap.io()), 0)
      << bootstrap.err();
  Captured users;
  ASSERT_EQ(RunKimictl({"kimictl", "user", "list", "--data-dir", bootstrapped}, users.io()), 0) << users.err();
  EXPECT_NE(users.out().find("admin"), std::string::npos) << users.out();

  const std::string keyed = tmp.path() + "/keyed";
  Captured created;
  ASSERT_EQ(RunKimictl({"kimictl", "key", "create", "--name", "k", "--role", "user", "--data-dir", keyed}, created.io()), 0)
      << created.err();
  Captured keys;
  ASSERT_EQ(RunKimictl({"kimictl", "key", "list", "--data-dir", keyed}, keys.io()), 0) << keys.err();
  const std::string listed = keys.out();
  EXPECT_EQ(std::count(listed.begin(), listed.end(), '\n'), 2) << listed;  // the header and the key
}

TEST(KimictlTest, AuditExportRequiresFormat) {
  TempDir tmp;
  Captured cap;
  EXPECT_EQ(RunKimictl({"kimictl", "audit", "export", "--data-dir", tmp.path()}, cap.io()), 2);
  EXPECT_NE(cap.err().find("kimictl audit export: --format is required"), std::string::npos) << cap.err();
  EXPECT_TRUE(cap.out().empty()) << cap.out();
  Captured given;  // given (here as --format=csv), the option passes on; the empty directory then fails
  RunKimictl({"kimictl", "audit", "export", "--format=csv", "--data-dir", tmp.path()}, given.io());
  EXPECT_EQ(given.err().find("is required"), std::string::npos) << given.err();
}

// "--data-dir $DIR" with DIR unset acted on the default data directory, the live appliance's.
TEST(KimictlTest, AnEmptyDataDirIsAUsageErrorNotTheDefault) {
  for (const std::vector<std::string>& argv :
       {std::vector<std::string>{"kimictl", "key", "list", "--data-dir", ""},
        std::vector<std::string>{"kimictl", "key", "revoke", "key_0000000000000000", "--data-dir="},
        std::vector<std::string>{"kimictl", "model", "list", "--data-dir", ""},
        std::vector<std::string>{"kimictl", "audit", "head", "--data-dir", ""},
        std::vector<std::string>{"kimictl", "config", "check", "--config", ""}}) {
    Captured cap;
    EXPECT_EQ(RunKimictl(argv, cap.io()), 2) << argv[1] << " " << argv[2];
    EXPECT_NE(cap.err().find("is given an empty value"), std::string::npos) << cap.err();
  }
}

// An option the table's usage writes outside [...] is required, for every command alike.
TEST(KimictlTest, EveryRequiredOptionOfTheUsageIsEnforced) {
  const std::vector<std::pair<std::string, std::string>> required = {
      {"audit export", "--format"}, {"key create", "--name"}, {"key rotate", "--grace"},
      {"model import", "--id"},     {"model sign", "--key"},  {"user add", "--role"}};
  for (const auto& [path, option] : required) {
    std::vector<std::string> argv = {"kimictl"};
    for (size_t at = 0, space; at != std::string::npos; at = space == std::string::npos ? space : space + 1) {
      space = path.find(' ', at);
      argv.push_back(path.substr(at, space == std::string::npos ? std::string::npos : space - at));
    }
    Captured cap;
    EXPECT_EQ(RunKimictl(argv, cap.io()), 2) << path;
    EXPECT_NE(cap.err().find("kimictl " + path + ": " + option + " is required"), std::string::npos)
        << path << ": " << cap.err();
  }
}

// The first words of the table's commands of several words: admin, audit, key, model, ...
std::set<std::string> Groups() {
  std::set<std::string> groups;
  for (const Command& c : CommandTable()) {
    if (size_t space = c.path.find(' '); space != std::string_view::npos) groups.emplace(c.path.substr(0, space));
  }
  return groups;
}

TEST(KimictlTest, AGroupWithoutItsSubcommandListsItsSubcommands) {
  ASSERT_TRUE(Groups().count("admin"));
  for (const std::string& group : Groups()) {
    Captured cap;
    EXPECT_EQ(RunKimictl({"kimictl", group}, cap.io()), 2) << group;
    EXPECT_EQ(cap.err().find("unknown command"), std::string::npos) << cap.err();
    EXPECT_EQ(cap.err().rfind("usage: kimictl " + group + " SUBCOMMAND", 0), 0u) << cap.err();
    for (const Command& c : CommandTable()) {
      const bool in_group = c.path.starts_with(group + " ");
      EXPECT_EQ(cap.err().find("  " + std::string(c.path) + " ") != std::string::npos, in_group)
          << group << " / " << c.path << ":\n" << cap.err();
    }
    EXPECT_TRUE(cap.out().empty()) << cap.out();
  }
  Captured help;
  EXPECT_EQ(RunKimictl({"kimictl", "key", "--help"}, help.io()), 0);
  EXPECT_NE(help.out().find("  key list "), std::string::npos) << help.out();
  Captured unknown;
  EXPECT_EQ(RunKimictl({"kimictl", "key", "frob"}, unknown.io()), 2);
  EXPECT_NE(unknown.err().find("unknown command \"key frob\""), std::string::npos) << unknown.err();
  EXPECT_NE(unknown.err().find("  key list "), std::string::npos) << unknown.err();
}

}  // namespace
}  // namespace kimi::cli
