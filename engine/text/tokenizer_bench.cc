// kimi-bench-tokenizer: encoding and decoding throughput, in MB/s of UTF-8 input, on a mixed
// English / Chinese / Vietnamese / C++ corpus built from the repository's own text.
//
//   kimi-bench-tokenizer [--source DIR] [--tokenizer DIR] [--megabytes N] [--rounds N]
//
// The demo tokenizer (4096 ranks, trained here on the same repository text) is always
// measured, and Kimi's real ranks: data/kimi-k3 (KimiDataDir()) or the directory --tokenizer names.
// The corpus repeats the repository text up to N megabytes, so the tokenizer's piece cache
// sees repeated pieces, as it does on real traffic; the figures say so beside the corpus.
// Times are CPU seconds of the measuring thread, best of --rounds runs.
#include <algorithm>
#include <chrono>
#include <ctime>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include "core/machine_limits.h"
#include "kimi/kimi_data.h"
#include "kimi/tokenizer.h"
#include "kimi/tokenizer_utf8.h"
#include "text/bpe_trainer.h"
#include "text/pretokenizer.h"
#include "core/whole_file.h"

namespace {

using Clock = std::chrono::steady_clock;
using kimi::ThreadCpuSeconds;

struct Corpus {
  std::string text;
  size_t han_bytes = 0, ascii_bytes = 0, other_bytes = 0;
  size_t distinct_bytes = 0;  // the repository text before repetition
  size_t files = 0;
};

Corpus BuildCorpus(const std::string& source_dir, size_t target_bytes) {
  Corpus corpus;
  std::string unique;
  std::string multilingual;
  for (const std::string& path : kimi::DemoCorpusFiles(source_dir)) {
    auto contents = kimi::ReadWholeFile(path);
    if (!contents.ok() || !kimi::text::ValidateUtf8(*contents).ok()) continue;
    const std::string& text = *contents;
    if (path.ends_with("multilingual.txt")) multilingual = text;
    unique += text;
    ++corpus.files;
  }
  // Weight the prose in three languages as much as the code and English docs together,
  // so that the figure is not only a measure of ASCII.
  const size_t code_and_docs = unique.size();
  while (!multilingual.empty() && unique.size() < 2 * code_and_docs) unique += multilingual;
  corpus.distinct_bytes = unique.size();
  while (corpus.text.size() < target_bytes && !unique.empty()) corpus.text += unique;
  for (size_t pos = 0; pos < corpus.text.size();) {
    const kimi::text::Utf8Step step = kimi::text::DecodeUtf8At(corpus.text, pos);
    if (step.length == 1) {
      corpus.ascii_bytes += 1;
    } else if (step.code_point >= 0x4E00 && step.code_point <= 0x9FFF) {
      corpus.han_bytes += step.length;
    } else {
      corpus.other_bytes += step.length;
    }
    pos += step.length;
  }
  return corpus;
}

// Best of `rounds` in CPU time of this thread: the build machines are shared, and wall time
// would measure the neighbours as much as the tokenizer.
template <typename F>
double BestSeconds(int rounds, F f) {
  double best = 1e30;
  for (int i = 0; i < rounds; ++i) {
    const double start = ThreadCpuSeconds();
    f();
    best = std::min(best, ThreadCpuSeconds() - start);
  }
  return best;
}

void Measure(const char* name, const kimi::Tokenizer& tokenizer, const Corpus& corpus, int rounds) {
  const double mb = corpus.text.size() / 1e6;
  std::vector<int32_t> ids;
  const double encode_s = BestSeconds(rounds, [&] {
    ids = std::move(tokenizer.Encode(corpus.text, false)).value();
  });
  std::string decoded;
  const double decode_s = BestSeconds(rounds, [&] { decoded = std::move(tokenizer.Decode(ids)).value(); });
  if (decoded != corpus.text) {
    std::fprintf(stderr, "%s: decode(encode(corpus)) differs from the corpus\n", name);
    std::exit(1);
  }
  std::printf("%-22s vocab %6d  encode %7.1f MB/s  decode %7.1f MB/s  %9zu tokens  %.2f bytes/token\n", name,
              tokenizer.vocab_size(), mb / encode_s, mb / decode_s, ids.size(),
              static_cast<double>(corpus.text.size()) / ids.size());
}

}  // namespace

int main(int argc, char** argv) {
  std::string source_dir = std::getenv("KIMI_SOURCE_DIR") ? std::getenv("KIMI_SOURCE_DIR") : KIMI_BENCH_SOURCE_DIR;
  std::string real_dir = kimi::KimiDataDir();
  size_t megabytes = 8;
  int rounds = 3;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string flag = argv[i];
    if (flag == "--source") source_dir = argv[i + 1];
    else if (flag == "--tokenizer") real_dir = argv[i + 1];
    else if (flag == "--megabytes") megabytes = std::strtoul(argv[i + 1], nullptr, 10);
    else if (flag == "--rounds") rounds = std::atoi(argv[i + 1]);
    else {
      std::fprintf(stderr, "usage: %s [--source DIR] [--tokenizer DIR] [--megabytes N] [--rounds N]\n", argv[0]);
      return 2;
    }
  }

  const Corpus corpus = BuildCorpus(source_dir, megabytes * 1000000);
  if (corpus.text.empty()) {
    std::fprintf(stderr, "no corpus text under %s\n", source_dir.c_str());
    return 1;
  }
  std::printf("corpus: %.2f MB (%zu files, %.0f kB distinct, repeated); bytes: %.0f%% ASCII, %.0f%% Han, %.0f%% other\n",
              corpus.text.size() / 1e6, corpus.files, corpus.distinct_bytes / 1e3,
              100.0 * corpus.ascii_bytes / corpus.text.size(), 100.0 * corpus.han_bytes / corpus.text.size(),
              100.0 * corpus.other_bytes / corpus.text.size());

  std::vector<std::string_view> pieces;
  const double split_s = BestSeconds(rounds, [&] {
    pieces.clear();
    kimi::text::PreTokenize(corpus.text, &pieces);
  });
  std::printf("%-22s %7.1f MB/s  %9zu pieces\n", "pre-tokeniser only", corpus.text.size() / 1e6 / split_s, pieces.size());

  const std::string demo_dir = (std::filesystem::temp_directory_path() / "kimi-bench-demo-tokenizer").string();
  const auto train_start = Clock::now();
  const kimi::Status trained = kimi::TrainDemoTokenizer(kimi::DemoCorpusFiles(source_dir), 4096, demo_dir);
  if (!trained.ok()) {
    std::fprintf(stderr, "training the demo tokenizer failed: %s\n", trained.ToString().c_str());
    return 1;
  }
  std::printf("demo tokenizer trained in %.1f s\n", std::chrono::duration<double>(Clock::now() - train_start).count());
  Measure("demo (4096 ranks)", std::move(kimi::Tokenizer::LoadDirectory(demo_dir)).value(), corpus, rounds);

  if (std::filesystem::exists(std::filesystem::path(real_dir) / "tiktoken.model")) {
    auto real = kimi::Tokenizer::LoadFiles((std::filesystem::path(real_dir) / "tiktoken.model").string(), "");
    if (!real.ok()) {
      std::fprintf(stderr, "%s\n", real.status().ToString().c_str());
      return 1;
    }
    Measure("kimi (163584 ranks)", *real, corpus, rounds);
  } else {
    std::printf("real ranks not found at %s: measured the demo tokenizer only\n", real_dir.c_str());
  }
  std::filesystem::remove_all(demo_dir);
  return 0;
}
