#include "tools/synth_tokenizer.h"

#include <filesystem>
#include <system_error>

#include "io/k3_presets.h"
#include "kimi/tokenizer.h"
#include "text/bpe_trainer.h"

namespace kimi::tools {
namespace {

namespace fs = std::filesystem;

Status CopyFile(const fs::path& from, const fs::path& to) {
  std::error_code ec;
  fs::copy_file(from, to, fs::copy_options::overwrite_existing, ec);
  if (ec) return Status::IOError("copying " + from.string() + " to " + to.string() + ": " + ec.message());
  return Status::OK();
}

Result<std::string> CopyRealTokenizer(K3Config& config, const std::string& from_dir, bool adopt_vocabulary,
                                      const std::string& out_dir) {
  KIMI_ASSIGN_OR_RETURN(Tokenizer real, Tokenizer::LoadDirectory(from_dir));
  if (adopt_vocabulary) SetK3Vocabulary(config, real.num_base_tokens());
  if (real.vocab_size() > config.vocab_size) {
    return Status::FailedPrecondition("the tokenizer in " + from_dir + " has " +
                                      std::to_string(real.vocab_size()) + " ids but the model's vocab_size is " +
                                      std::to_string(config.vocab_size) +
                                      "; use a preset with the full K3 vocabulary (k3-full-shape) or drop --tokenizer");
  }
  KIMI_RETURN_IF_ERROR(CopyFile(fs::path(from_dir) / "tiktoken.model", fs::path(out_dir) / "tiktoken.model"));
  std::error_code ec;
  const fs::path config_path = fs::path(from_dir) / "tokenizer_config.json";
  const bool has_config = fs::is_regular_file(config_path, ec);
  if (has_config) KIMI_RETURN_IF_ERROR(CopyFile(config_path, fs::path(out_dir) / "tokenizer_config.json"));
  return "tokenizer: copied from " + from_dir + " (" + std::to_string(real.num_base_tokens()) + " ranks + " +
         std::to_string(Tokenizer::kNumSpecialTokens) + " special, " +
         (has_config ? "its tokenizer_config.json" : "K3's special-token table") + ")";
}

Result<std::string> TrainDemo(const K3Config& config, const std::string& source_dir, const std::string& out_dir) {
  const std::vector<std::string> corpus = DemoCorpusFiles(source_dir);
  if (corpus.empty()) {
    return Status::NotFound("no demo-tokenizer corpus under '" + source_dir +
                            "' (expected docs/*.md, engine/**/*.cc|h): pass --source-dir REPO "
                            "or --tokenizer DIR with real ranks");
  }
  const int64_t ordinary = config.vocab_size - Tokenizer::kNumSpecialTokens;
  if (ordinary < 256) {
    return Status::FailedPrecondition("vocab_size " + std::to_string(config.vocab_size) +
                                      " leaves fewer than 256 ordinary ids for a byte-level vocabulary");
  }
  KIMI_RETURN_IF_ERROR(TrainDemoTokenizer(corpus, static_cast<int>(ordinary), out_dir));
  // The trainer stops early when no pair repeats; a smaller vocabulary would not match the
  // model's special-token ids, so check what was written.
  KIMI_ASSIGN_OR_RETURN(Tokenizer demo, Tokenizer::LoadDirectory(out_dir));
  if (demo.vocab_size() != config.vocab_size) {
    return Status::FailedPrecondition("the demo corpus under " + source_dir + " yields only " +
                                      std::to_string(demo.num_base_tokens()) + " ranks; the model needs " +
                                      std::to_string(ordinary));
  }
  return "tokenizer: demo BPE, " + std::to_string(ordinary) + " ranks + " +
         std::to_string(Tokenizer::kNumSpecialTokens) + " K3 special tokens, trained on " +
         std::to_string(corpus.size()) + " files under " + source_dir;
}

}  // namespace

Result<std::string> WriteSynthTokenizer(K3Config* config, const SynthTokenizerOptions& options,
                                        const std::string& out_dir) {
  std::error_code ec;
  fs::create_directories(out_dir, ec);
  if (ec) return Status::IOError("creating " + out_dir + ": " + ec.message());
  if (!options.real_tokenizer_dir.empty()) {
    return CopyRealTokenizer(*config, options.real_tokenizer_dir, options.adopt_vocabulary, out_dir);
  }
  return TrainDemo(*config, options.source_dir, out_dir);
}

}  // namespace kimi::tools
