// Runs the built kimi-engine's text subcommands (tokenize, detokenize, render) and synth's
// tokenizer step as operators and scripts use them: stdin in, stdout/stderr and exit status out.
#include <gtest/gtest.h>

#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "kimi/kimi_data.h"

namespace {

namespace fs = std::filesystem;

struct CliRun {
  int status = -1;
  std::string out;  // stdout
  std::string err;  // stderr
};

std::string ReadFile(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

fs::path TempDir() {
  static const fs::path dir = [] {
    fs::path d = fs::temp_directory_path() / ("kimi_text_cli_" + std::to_string(getpid()));
    fs::create_directories(d);
    return d;
  }();
  return dir;
}

// Runs `kimi-engine args` with `input` on stdin.
CliRun Engine(const std::string& args, const std::string& input = "") {
  const char* build = std::getenv("KIMI_BUILD_DIR");
  const fs::path in = TempDir() / "stdin", out = TempDir() / "stdout", err = TempDir() / "stderr";
  std::ofstream(in, std::ios::binary) << input;
  const std::string cmd = std::string(build ? build : ".") + "/engine/kimi-engine " + args + " < " + in.string() +
                          " > " + out.string() + " 2> " + err.string();
  CliRun r;
  int raw = std::system(cmd.c_str());
  r.status = (raw != -1 && WIFEXITED(raw)) ? WEXITSTATUS(raw) : -1;
  r.out = ReadFile(out);
  r.err = ReadFile(err);
  return r;
}

// A k3-nano model directory written once by synth: its demo tokenizer serves the tests below.
class TextCliTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    model_dir_ = new fs::path(TempDir() / "nano");
    synth_ = new CliRun(Engine("synth --preset k3-nano --out " + model_dir_->string()));
  }
  static void TearDownTestSuite() {
    fs::remove_all(TempDir());
    delete model_dir_;
    delete synth_;
  }
  static std::string Tok() { return " --tokenizer " + model_dir_->string(); }

  static fs::path* model_dir_;
  static CliRun* synth_;
};
fs::path* TextCliTest::model_dir_ = nullptr;
CliRun* TextCliTest::synth_ = nullptr;

TEST_F(TextCliTest, SynthWritesADemoTokenizerOfThePresetsVocabulary) {
  ASSERT_EQ(synth_->status, 0) << synth_->err;
  EXPECT_NE(synth_->out.find("tokenizer: demo BPE, 4096 ranks + 256 K3 special tokens"), std::string::npos)
      << synth_->out;
  EXPECT_TRUE(fs::is_regular_file(*model_dir_ / "tiktoken.model"));
  EXPECT_TRUE(fs::is_regular_file(*model_dir_ / "tokenizer_config.json"));
  // Special tokens follow the 4096 ranks at K3's offsets: <|open|> is 4096 + 3.
  CliRun open = Engine("tokenize --allow-special" + Tok(), "<|open|>");
  ASSERT_EQ(open.status, 0) << open.err;
  EXPECT_EQ(open.out, "4099\n");
}

TEST_F(TextCliTest, TokenizeDetokenizeRoundTrip) {
  ASSERT_EQ(synth_->status, 0) << synth_->err;
  const std::string text = "Hello, world! 你好，世界。 it's 12345 <|open|> café 🙂\n\ttabs  and  spaces\n";
  CliRun ids = Engine("tokenize" + Tok(), text);
  ASSERT_EQ(ids.status, 0) << ids.err;
  ASSERT_FALSE(ids.out.empty());
  EXPECT_EQ(ids.out.back(), '\n');
  EXPECT_EQ(ids.out.find(' '), std::string::npos);  // "1,2,3\n"
  CliRun back = Engine("detokenize" + Tok(), ids.out);
  ASSERT_EQ(back.status, 0) << back.err;
  EXPECT_EQ(back.out, text);
  // Without --allow-special the typed marker is text; with it, it is one id more or less.
  CliRun special = Engine("tokenize --allow-special" + Tok(), text);
  ASSERT_EQ(special.status, 0);
  EXPECT_NE(special.out, ids.out);
  EXPECT_NE(special.out.find(",4099,"), std::string::npos) << special.out;
  EXPECT_EQ(ids.out.find(",4099,"), std::string::npos) << ids.out;
  // Whitespace-separated ids are accepted too; empty input is zero ids.
  EXPECT_EQ(Engine("detokenize" + Tok(), "4099 4101\n").out, "<|open|><|sep|>");
  CliRun empty = Engine("tokenize" + Tok(), "");
  EXPECT_EQ(empty.status, 0);
  EXPECT_EQ(empty.out, "\n");
}

TEST_F(TextCliTest, RenderPrintsThePromptAndItsIds) {
  ASSERT_EQ(synth_->status, 0) << synth_->err;
  const std::string request = R"({"messages":[{"role":"user","content":"hi"}],"thinking":{"type":"disabled"}})";
  CliRun text = Engine("render" + Tok(), request);
  ASSERT_EQ(text.status, 0) << text.err;
  EXPECT_EQ(text.out,
            "<|open|>message role=\"user\"<|sep|>hi<|close|>message<|sep|><|end_of_msg|>"
            "<|open|>message role=\"assistant\"<|sep|><|open|>response<|sep|>");
  CliRun ids = Engine("render --ids" + Tok(), request);
  ASSERT_EQ(ids.status, 0) << ids.err;
  EXPECT_EQ(ids.out.rfind("4099,", 0), 0u) << ids.out;   // starts with <|open|>
  EXPECT_NE(ids.out.find(",4099,"), std::string::npos);  // and <|open|>response later
  EXPECT_NE(ids.err.find("with the 3-token generation stub"), std::string::npos) << ids.err;
  // The ids decode to the rendered text.
  CliRun back = Engine("detokenize" + Tok(), ids.out);
  EXPECT_EQ(back.out, text.out);
}

TEST_F(TextCliTest, InvalidInputFailsWithAReadableMessage) {
  ASSERT_EQ(synth_->status, 0) << synth_->err;
  CliRun bad_utf8 = Engine("tokenize" + Tok(), std::string("ok \xC3\x28 bad"));
  EXPECT_EQ(bad_utf8.status, 1);
  EXPECT_NE(bad_utf8.err.find("UTF-8"), std::string::npos) << bad_utf8.err;
  CliRun bad_ids = Engine("detokenize" + Tok(), "1,2,x");
  EXPECT_EQ(bad_ids.status, 1);
  EXPECT_NE(bad_ids.err.find("'x'"), std::string::npos) << bad_ids.err;
  EXPECT_EQ(Engine("detokenize" + Tok(), "1,,2").status, 1);
  EXPECT_EQ(Engine("detokenize" + Tok(), "99999999").status, 1);  // outside the vocabulary
  CliRun bad_json = Engine("render" + Tok(), "{\"messages\": [");
  EXPECT_EQ(bad_json.status, 1);
  EXPECT_NE(bad_json.err.find("not valid JSON"), std::string::npos) << bad_json.err;
  CliRun bad_effort = Engine("render" + Tok(), R"({"messages":[{"role":"user","content":"x"}],"thinking_effort":"ultra"})");
  EXPECT_EQ(bad_effort.status, 1);
  EXPECT_NE(bad_effort.err.find("thinking_effort"), std::string::npos) << bad_effort.err;
  EXPECT_EQ(Engine("render" + Tok(), R"({"messages":[{"content":"x"}]})").status, 1);
  // Usage errors: exit 2.
  EXPECT_EQ(Engine("tokenize", "x").status, 2);
  EXPECT_EQ(Engine("render --bogus" + Tok(), "{}").status, 2);
  EXPECT_EQ(Engine("tokenize --tokenizer /nonexistent/dir", "x").status, 1);
  CliRun no_corpus = Engine("synth --preset k3-nano --out " + (TempDir() / "nocorpus").string() +
                            " --source-dir /nonexistent/src");
  EXPECT_NE(no_corpus.status, 0);
  EXPECT_NE(no_corpus.err.find("no demo-tokenizer corpus"), std::string::npos) << no_corpus.err;
}

TEST_F(TextCliTest, RenderIdsCountsTheVerifierPromptsWithRealRanks) {
  const std::string plain = R"({"messages":[{"role":"user","content":"请用 JSON 格式回答：北京是中国的首都吗？答案需要包含键 capital。"}],)"
                            R"("thinking":{"type":"disabled"})";
  const std::string schema =
      R"(,"response_format":{"type":"json_schema","json_schema":{"name":"capital_answer","schema":)"
      R"({"type":"object","properties":{"capital":{"type":"boolean"}},"required":["capital"],"additionalProperties":false}}})";
  CliRun a = Engine("render --ids --tokenizer " + kimi::KimiDataDir(), plain + "}");
  ASSERT_EQ(a.status, 0) << a.err;
  EXPECT_NE(a.err.find("prompt_tokens 36 (39 ids with the 3-token generation stub)"), std::string::npos) << a.err;
  CliRun b = Engine("render --ids --tokenizer " + kimi::KimiDataDir(), plain + schema + "}");
  ASSERT_EQ(b.status, 0) << b.err;
  EXPECT_NE(b.err.find("prompt_tokens 119 (122 ids with the 3-token generation stub)"), std::string::npos) << b.err;
}

TEST_F(TextCliTest, SynthCopiesATokenizerThatFits) {
  ASSERT_EQ(synth_->status, 0) << synth_->err;
  const fs::path copy = TempDir() / "nano_copy";
  CliRun r = Engine("synth --preset k3-nano --out " + copy.string() + Tok());
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("tokenizer: copied from"), std::string::npos) << r.out;
  EXPECT_EQ(ReadFile(copy / "tiktoken.model"), ReadFile(*model_dir_ / "tiktoken.model"));
  EXPECT_EQ(ReadFile(copy / "tokenizer_config.json"), ReadFile(*model_dir_ / "tokenizer_config.json"));
}

// With Kimi's ranks, k3-nano keeps its widths but takes the real 163,840-id vocabulary, so
// its special ids are K3's own (the demo model of `make run` is made this way).
TEST_F(TextCliTest, SynthGivesThePresetTheRealTokenizersVocabulary) {
  const fs::path dir = TempDir() / "nano_real";
  CliRun nano = Engine("synth --preset k3-nano --out " + dir.string() + " --tokenizer " + kimi::KimiDataDir());
  ASSERT_EQ(nano.status, 0) << nano.err;
  EXPECT_NE(nano.out.find("tokenizer: copied from"), std::string::npos) << nano.out;
  EXPECT_NE(ReadFile(dir / "config.json").find("\"vocab_size\": 163840"), std::string::npos);
  EXPECT_EQ(ReadFile(dir / "tiktoken.model"), ReadFile(fs::path(kimi::KimiDataDir()) / "tiktoken.model"));
  CliRun open = Engine("tokenize --allow-special --tokenizer " + dir.string(), "<|open|>");
  ASSERT_EQ(open.status, 0) << open.err;
  EXPECT_EQ(open.out, "163587\n");
}

}  // namespace
