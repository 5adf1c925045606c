// Random walks through every verifier schema, on the demo and the real vocabularies, checked
// by an independent validator: Debian's python3-jsonschema (validate_outputs.py).
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

#include <nlohmann/json.hpp>

#include "structured/structured_test_util.h"

namespace kimi::structured {
namespace {

std::string SourceDir() {
  if (const char* src = std::getenv("KIMI_SOURCE_DIR")) return src;
  return (std::filesystem::path(__FILE__).parent_path() / ".." / "..").string();
}

TEST(StructuredValidation, EveryWalkValidatesWithPythonJsonschema) {
  auto cases = testing::VerifierSchemaCases();
  ASSERT_TRUE(cases.ok()) << cases.status().ToString();
  if (std::system("/usr/bin/python3 -c 'import jsonschema' >/dev/null 2>&1") != 0) {
    GTEST_SKIP() << "skipped: /usr/bin/python3 with python3-jsonschema (Debian) is not installed";
  }
  struct Vocabulary {
    std::string name;
    std::shared_ptr<const TokenTrie> trie;
    int walks;
  };
  const std::vector<Vocabulary> vocabularies = {{"demo", testing::DemoTrie(), 3}, {"k3", testing::RealTrie(), 1}};
  const std::filesystem::path out =
      std::filesystem::path(std::getenv("KIMI_BUILD_DIR") ? std::getenv("KIMI_BUILD_DIR") : ".") / "structured_walks.jsonl";
  std::ofstream file(out);
  std::mt19937_64 rng(2026);
  int written = 0, endless = 0;
  for (const Vocabulary& v : vocabularies) {
    for (const auto& c : *cases) {
      auto g = testing::CompileSchema(c.schema);
      ASSERT_TRUE(g.ok()) << g.status().ToString();
      for (int k = 0; k < v.walks; ++k) {
        testing::Walk walk = testing::RandomWalk(*g, v.trie, *v.trie->end_of_msg, rng, 30, 3000);
        const std::string where = v.name + " " + c.suite + ":" + std::to_string(c.line);
        ASSERT_FALSE(walk.stuck) << where;
        if (!walk.ended) {  // only a value longer than any budget may stay open
          EXPECT_NE(c.schema.find("999999999999"), std::string::npos) << where << " did not end";
          ++endless;
          continue;
        }
        file << nlohmann::json{{"where", where}, {"schema", c.schema}, {"output", walk.text}}.dump(-1, ' ', false,
                                                                                                   nlohmann::json::error_handler_t::replace)
             << "\n";
        ++written;
      }
    }
  }
  file.close();
  std::printf("%d outputs written to %s (%d walks left open: minLength 999999999999)\n", written, out.c_str(), endless);
  const std::string command = "/usr/bin/python3 " + SourceDir() + "/engine/structured/validate_outputs.py " + out.string();
  const int status = std::system(command.c_str());
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0) << command;
}

}  // namespace
}  // namespace kimi::structured
