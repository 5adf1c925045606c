#include "config/config.h"

#include <cstdlib>
#include <fstream>
#include <sstream>

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include "config/listen_address.h"

namespace kimi::config {
namespace {

Result<AppConfig> Parse(std::string_view text, std::vector<Override> overrides = {}) {
  return ParseConfig(text, "test.json", overrides, "/etc/kimi");
}

TEST(ConfigTest, EmptyObjectGivesDefaults) {
  Result<AppConfig> c = Parse("{}");
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ(c->server.listen, "127.0.0.1:8080");
  EXPECT_EQ(c->limits.max_connections, 64);
  EXPECT_FALSE(c->server.allow_plain_http_on_loopback);
}

TEST(ConfigTest, BindsNestedValues) {
  Result<AppConfig> c = Parse(R"({"server":{"listen":"[::1]:9000","allow_plain_http_on_loopback":true},
                                  "limits":{"max_body_bytes":1024},"log":{"level":"debug"}})");
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ(c->server.listen, "[::1]:9000");
  EXPECT_TRUE(c->server.allow_plain_http_on_loopback);
  EXPECT_EQ(c->limits.max_body_bytes, 1024);
  EXPECT_EQ(c->log.level, "debug");
  EXPECT_EQ(c->limits.max_header_bytes, LimitsConfig{}.max_header_bytes);
}

TEST(ConfigTest, UnknownTopLevelKeyIsRejectedWithItsPath) {
  Result<AppConfig> c = Parse(R"({"sever":{}})");
  ASSERT_FALSE(c.ok());
  EXPECT_EQ(c.status().code(), Status::Code::kInvalidArgument);
  EXPECT_EQ(c.status().message(), "test.json: $.sever: unknown key (did you mean \"server\"?)");
}

TEST(ConfigTest, UnknownNestedKeyIsRejectedWithItsPath) {
  Result<AppConfig> c = Parse(R"({"limits":{"max_body_bytez":5}})");
  ASSERT_FALSE(c.ok());
  EXPECT_NE(c.status().message().find("$.limits.max_body_bytez: unknown key"), std::string::npos)
      << c.status().message();
  EXPECT_NE(c.status().message().find("max_body_bytes"), std::string::npos);
}

TEST(ConfigTest, UnrelatedUnknownKeyGetsNoHint) {
  Result<AppConfig> c = Parse(R"({"limits":{"colour":5}})");
  ASSERT_FALSE(c.ok());
  EXPECT_EQ(c.status().message(), "test.json: $.limits.colour: unknown key");
}

TEST(ConfigTest, WrongTypesAreRejectedWithPathAndTypes) {
  struct Case {
    const char* text;
    const char* message;
  } cases[] = {
      {R"({"limits":{"max_body_bytes":"10"}})", "$.limits.max_body_bytes: expected an integer, got a string"},
      {R"({"limits":{"max_body_bytes":1.5}})",
       "$.limits.max_body_bytes: expected an integer, got a number with a fraction or exponent"},
      {R"({"server":{"allow_plain_http_on_loopback":"yes"}})",
       "$.server.allow_plain_http_on_loopback: expected a boolean, got a string"},
      {R"({"server":{"listen":8080}})", "$.server.listen: expected a string, got an integer"},
      {R"({"limits":[]})", "$.limits: expected an object, got an array"},
      {R"([])", "$: expected an object, got an array"},
      {R"({"log":{"level":null}})", "$.log.level: expected a string, got null"},
  };
  for (const Case& k : cases) {
    Result<AppConfig> c = Parse(k.text);
    ASSERT_FALSE(c.ok()) << k.text;
    EXPECT_EQ(c.status().message(), std::string("test.json: ") + k.message) << k.text;
  }
}

TEST(ConfigTest, RangesAndChoicesAreChecked) {
  Result<AppConfig> c = Parse(R"({"limits":{"max_connections":0}})");
  ASSERT_FALSE(c.ok());
  EXPECT_EQ(c.status().message(), "test.json: $.limits.max_connections: 0 is out of range [1, 4096]");
  c = Parse(R"({"limits":{"max_body_bytes":18446744073709551615}})");
  ASSERT_FALSE(c.ok());
  EXPECT_NE(c.status().message().find("out of range"), std::string::npos);
  c = Parse(R"({"audit":{"commit_window_ms":1001}})");
  ASSERT_FALSE(c.ok());
  EXPECT_EQ(c.status().message(), "test.json: $.audit.commit_window_ms: 1001 is out of range [0, 1000]");
  c = Parse(R"({"audit":{"commit_window_ms":0}})");
  ASSERT_TRUE(c.ok()) << c.status().message();
  EXPECT_EQ(c->audit.commit_window_ms, 0);
  c = Parse(R"({"log":{"format":"xml"}})");
  ASSERT_FALSE(c.ok());
  EXPECT_EQ(c.status().message(), "test.json: $.log.format: \"xml\" is not one of: auto, json, text");
  c = Parse(R"({"server":{"listen":"localhost:80"}})");
  ASSERT_FALSE(c.ok());
  EXPECT_NE(c.status().message().find("$.server.listen: \"localhost\" is not a numeric"), std::string::npos);
}

TEST(ConfigTest, InvalidJsonNamesLineAndColumn) {
  Result<AppConfig> c = Parse("{\n  \"log\": {\"level\": \"info\",}\n}");
  ASSERT_FALSE(c.ok());
  EXPECT_NE(c.status().message().find("test.json: invalid JSON at line 2"), std::string::npos)
      << c.status().message();
}

TEST(ConfigTest, DuplicateKeysAreRejected) {
  Result<AppConfig> c = Parse(R"({"log":{"level":"info","format":"json","level":"debug"}})");
  ASSERT_FALSE(c.ok());
  EXPECT_EQ(c.status().message(), "test.json: $.log.level: duplicate key");
  EXPECT_TRUE(Parse(R"({"log":{"level":"info"},"limits":{"max_body_bytes":5}})").ok());
}

TEST(ConfigTest, OverridesGoThroughTheSchemaAndNameTheFlag) {
  std::vector<Override> o = {{"--listen", {"server", "listen"}, "127.0.0.1:9"}};
  Result<AppConfig> c = Parse(R"({"server":{"listen":"127.0.0.1:1"}})", o);
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(c->server.listen, "127.0.0.1:9");
  o = {{"--log-level", {"log", "level"}, "loud"}};
  c = Parse("{}", o);
  ASSERT_FALSE(c.ok());
  EXPECT_EQ(c.status().message(), "--log-level: $.log.level: \"loud\" is not one of: debug, info, warn, error");
}

TEST(ConfigTest, RelativeDataDirIsResolvedAgainstTheConfigDirectory) {
  Result<AppConfig> c = Parse(R"({"storage":{"data_dir":"data"}})");
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(c->storage.data_dir, "/etc/kimi/data");
  c = Parse("{}", {{"--data-dir", {"storage", "data_dir"}, "rel"}});
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(c->storage.data_dir, "rel");
}

TEST(ConfigTest, RequestRulesAreReadPerModelAndCheckedAtLoad) {
  Result<AppConfig> c = Parse(R"({"request_rules": [{"model": "open", "rules": {"top_p": null, "temperature": [0, 2]}}]})");
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  ASSERT_EQ(c->request_rules.size(), 1u);
  EXPECT_EQ(c->request_rules[0].model, "open");
  EXPECT_TRUE(c->request_rules[0].rules["top_p"].is_null());

  Result<AppConfig> bad = Parse(R"({"request_rules": [{"model": "m", "rules": {"top_k": 1}}]})");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("$.request_rules[0].rules"), std::string::npos) << bad.status().ToString();
  EXPECT_NE(bad.status().message().find("top_k"), std::string::npos) << bad.status().ToString();

  AppConfig twice;
  twice.server.allow_plain_http_on_loopback = true;
  twice.request_rules = {ModelRulesConfig{"m", nlohmann::json::object()}, ModelRulesConfig{"m", nlohmann::json::object()}};
  EXPECT_EQ(CheckConfig(twice).code(), Status::Code::kInvalidArgument);
  twice.request_rules.pop_back();
  EXPECT_TRUE(CheckConfig(twice).ok());
  twice.request_rules[0].model = "";
  EXPECT_EQ(CheckConfig(twice).code(), Status::Code::kInvalidArgument);
}

TEST(ConfigTest, CheckConfigAllowsPlainHttpOnlyOnLoopbackWhenEnabled) {
  AppConfig c;
  EXPECT_EQ(CheckConfig(c).code(), Status::Code::kFailedPrecondition);
  c.server.allow_plain_http_on_loopback = true;
  EXPECT_TRUE(CheckConfig(c).ok());
  c.server.listen = "[::1]:0";
  EXPECT_TRUE(CheckConfig(c).ok());
  c.server.listen = "0.0.0.0:8080";
  Status s = CheckConfig(c);
  EXPECT_EQ(s.code(), Status::Code::kFailedPrecondition);
  EXPECT_NE(s.message().find("0.0.0.0:8080 is not a loopback address"), std::string::npos);
}

TEST(ConfigTest, CheckConfigWithTlsServesAnyAddressAndWantsBothFiles) {
  AppConfig c;
  c.server.listen = "0.0.0.0:8443";
  c.server.tls.cert_file = "/etc/kimi/tls/cert.pem";
  Status s = CheckConfig(c);
  EXPECT_EQ(s.code(), Status::Code::kFailedPrecondition);
  EXPECT_NE(s.message().find("cert_file and key_file go together"), std::string::npos) << s.message();
  c.server.tls.key_file = "/etc/kimi/tls/key.pem";
  EXPECT_TRUE(CheckConfig(c).ok());
  c.server.tls.admin_client_ca_file = "/etc/kimi/tls/admin-ca.pem";
  EXPECT_TRUE(CheckConfig(c).ok());
  c.server.tls.cert_file.clear();
  c.server.tls.key_file.clear();
  c.server.listen = "127.0.0.1:8080";
  c.server.allow_plain_http_on_loopback = true;
  EXPECT_EQ(CheckConfig(c).code(), Status::Code::kFailedPrecondition);  // mutual TLS needs TLS
}

TEST(ConfigTest, TlsPathsAreResolvedAgainstTheConfigDirectory) {
  Result<AppConfig> c = Parse(R"({"server":{"tls":{"cert_file":"tls/cert.pem","key_file":"/k.pem","min_version":"1.3"}}})");
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ(c->server.tls.cert_file, "/etc/kimi/tls/cert.pem");
  EXPECT_EQ(c->server.tls.key_file, "/k.pem");
  EXPECT_EQ(c->server.tls.min_version, "1.3");
  EXPECT_FALSE(Parse(R"({"server":{"tls":{"min_version":"1.1"}}})").ok());
}

TEST(ListenAddressTest, ParsesAndRejects) {
  Result<ListenAddress> a = ParseListenAddress("127.0.0.2:80");
  ASSERT_TRUE(a.ok());
  EXPECT_TRUE(a->IsLoopback());
  EXPECT_EQ(a->ToString(), "127.0.0.2:80");
  a = ParseListenAddress("[::1]:443");
  ASSERT_TRUE(a.ok());
  EXPECT_TRUE(a->ipv6);
  EXPECT_EQ(a->ToString(), "[::1]:443");
  EXPECT_FALSE(ParseListenAddress("10.0.0.1:80")->IsLoopback());
  EXPECT_FALSE(ParseListenAddress("::1:80").ok());
  EXPECT_FALSE(ParseListenAddress("127.0.0.1:65536").ok());
  EXPECT_FALSE(ParseListenAddress("127.0.0.1:").ok());
  EXPECT_FALSE(ParseListenAddress("127.0.0.1:8x").ok());
  EXPECT_FALSE(ParseListenAddress("[::1]8080").ok());
}

// Every key the schema knows is documented in docs/configuration.md with its default.
TEST(ConfigDocsTest, EveryKeyIsDocumented) {
  const char* source = std::getenv("KIMI_SOURCE_DIR");
  if (source == nullptr) GTEST_SKIP() << "KIMI_SOURCE_DIR is not set";
  std::ifstream in(std::string(source) + "/docs/configuration.md");
  ASSERT_TRUE(in) << "docs/configuration.md is missing";
  std::stringstream text;
  text << in.rdbuf();
  std::vector<KeyDoc> keys;
  AppConfigSchema().Describe("$", AppConfig{}, &keys);
  ASSERT_GT(keys.size(), 10u);
  for (const KeyDoc& k : keys) {
    std::string dotted = k.path.substr(2);  // "limits.max_body_bytes"
    // The key's row in the table: "| `limits.max_body_bytes` | integer ... | 8388608 | ... |".
    std::string row;
    std::istringstream lines(text.str());
    for (std::string line; std::getline(lines, line);) {
      if (line.rfind("| `" + dotted + "` |", 0) == 0) row = line;
    }
    ASSERT_FALSE(row.empty()) << dotted << " has no row in docs/configuration.md";
    EXPECT_NE(row.find("`" + k.default_value.dump() + "`"), std::string::npos)
        << dotted << ": default " << k.default_value.dump() << " is not in its row";
  }
}

// A configuration named by a FIFO waited in open(2) for a writer, and the daemon's start with
// it; now it is refused at once, naming the file.
TEST(ConfigFileTest, AFifoIsRefusedNotWaitedOn) {
  char dir[] = "/tmp/kimi-config-test-XXXXXX";
  ASSERT_NE(::mkdtemp(dir), nullptr);
  const std::string fifo = std::string(dir) + "/appliance.json";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  Result<AppConfig> loaded = LoadConfigFile(fifo, {});
  ::unlink(fifo.c_str());
  ::rmdir(dir);
  ASSERT_FALSE(loaded.ok());
  EXPECT_NE(loaded.status().message().find("appliance.json is a FIFO"), std::string::npos) << loaded.status().ToString();
}

}  // namespace
}  // namespace kimi::config
