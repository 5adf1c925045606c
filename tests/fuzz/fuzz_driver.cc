#include "fuzz_driver.h"

#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "fuzz_mutator.h"

namespace kimi::fuzz {
namespace {

namespace fs = std::filesystem;

// An input that needs longer than this is a hang (the known ones take forever, not seconds).
constexpr unsigned kPerInputLimitS = 20;

// The input being run and where to save it, for the signal handler.
const Bytes* g_current = nullptr;
char g_crash_path[4096];
// The handlers before ours (a sanitizer's), restored to report the signal after the save.
struct sigaction g_previous[NSIG];

void SaveCurrentInput(int sig) {
  static const char kMessage[] = "fuzz driver: the input being run is saved to ";
  if (g_current != nullptr) {
    int fd = open(g_crash_path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd >= 0) {
      const uint8_t* p = g_current->data();
      size_t left = g_current->size();
      while (left > 0) {
        ssize_t n = write(fd, p, left);
        if (n <= 0) break;
        p += n;
        left -= size_t(n);
      }
      close(fd);
      (void)!write(2, kMessage, sizeof(kMessage) - 1);
      (void)!write(2, g_crash_path, strlen(g_crash_path));
      (void)!write(2, "\n", 1);
    }
  }
  if (sig == SIGALRM) {
    static const char kHang[] = "fuzz driver: an input ran past the per-input limit (a hang)\n";
    (void)!write(2, kHang, sizeof(kHang) - 1);
    sig = SIGABRT;
  }
  sigaction(sig, &g_previous[sig], nullptr);
  raise(sig);
}

void InstallHandlers(const char* argv0) {
  const std::string path = "fuzz-crash-" + fs::path(argv0).filename().string();
  std::snprintf(g_crash_path, sizeof(g_crash_path), "%s", path.c_str());
  // A stack overflow (deep recursion) must still reach the handler.
  static std::vector<char> alt_stack(1 << 16);
  stack_t ss{};
  ss.ss_sp = alt_stack.data();
  ss.ss_size = alt_stack.size();
  sigaltstack(&ss, nullptr);
  struct sigaction sa {};
  sa.sa_handler = SaveCurrentInput;
  sa.sa_flags = SA_ONSTACK;
  for (int sig : {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT, SIGALRM}) sigaction(sig, &sa, &g_previous[sig]);
}

bool Run(FuzzEntry entry, const Bytes& input) {
  g_current = &input;
  alarm(kPerInputLimitS);
  const bool accepted = entry(input.data(), input.size());
  alarm(0);
  g_current = nullptr;
  return accepted;
}

Bytes ReadFile(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), {}};
}

bool StartsWith(const std::string& s, const char* prefix) { return s.rfind(prefix, 0) == 0; }

struct Options {
  std::string corpus;
  std::string dict;
  uint64_t iterations = 0;
  uint64_t seed = 1;
  size_t max_size = 64 * 1024;
  std::vector<std::string> files;
};

bool ParseOptions(int argc, char** argv, Options* o) {
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    const bool has_value = i + 1 < argc;
    if (arg == "--corpus" && has_value) {
      o->corpus = argv[++i];
    } else if (arg == "--dict" && has_value) {
      o->dict = argv[++i];
    } else if (arg == "--iterations" && has_value) {
      o->iterations = std::strtoull(argv[++i], nullptr, 10);
    } else if (arg == "--seed" && has_value) {
      o->seed = std::strtoull(argv[++i], nullptr, 10);
    } else if (arg == "--max-size" && has_value) {
      o->max_size = std::strtoull(argv[++i], nullptr, 10);
    } else if (!StartsWith(arg, "--")) {
      o->files.push_back(arg);
    } else {
      std::fprintf(stderr, "unknown or incomplete option %s\n", arg.c_str());
      return false;
    }
  }
  if (o->corpus.empty() == o->files.empty()) {
    std::fprintf(stderr, "usage: %s --corpus DIR [--dict FILE] [--iterations N] [--seed S] [--max-size B] | FILE...\n",
                 argv[0]);
    return false;
  }
  return true;
}

}  // namespace

int RunFuzzDriver(int argc, char** argv, FuzzEntry entry) {
  Options options;
  if (!ParseOptions(argc, argv, &options)) return 2;
  InstallHandlers(argv[0]);

  if (!options.files.empty()) {
    for (const std::string& file : options.files) {
      const bool accepted = Run(entry, ReadFile(file));
      std::printf("%s: %s\n", file.c_str(), accepted ? "accepted" : "refused");
    }
    return 0;
  }

  std::vector<fs::path> paths;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(options.corpus, ec)) {
    if (e.is_regular_file()) paths.push_back(e.path());
  }
  if (ec || paths.empty()) {
    std::fprintf(stderr, "no corpus files in %s\n", options.corpus.c_str());
    return 1;
  }
  std::sort(paths.begin(), paths.end());

  int failures = 0, good = 0, bad = 0;
  std::vector<Bytes> corpus;
  for (const fs::path& path : paths) {
    const std::string name = path.filename().string();
    corpus.push_back(ReadFile(path));
    const bool accepted = Run(entry, corpus.back());
    if (StartsWith(name, "good_")) {
      ++good;
      if (!accepted) std::fprintf(stderr, "FAIL %s: refused, expected accepted\n", name.c_str());
      failures += !accepted;
    } else if (StartsWith(name, "bad_")) {
      ++bad;
      if (accepted) std::fprintf(stderr, "FAIL %s: accepted, expected refused\n", name.c_str());
      failures += accepted;
    }
  }
  std::printf("replayed %zu corpus files (%d good, %d bad): %d failed\n", corpus.size(), good, bad, failures);

  std::vector<Bytes> dictionary;
  if (!options.dict.empty()) {
    std::ifstream in(options.dict, std::ios::binary);
    Result<std::vector<Bytes>> parsed = ParseDictionary({std::istreambuf_iterator<char>(in), {}});
    if (!in.good() && !in.eof()) parsed = Status::NotFound(options.dict);
    if (!parsed.ok()) {
      std::fprintf(stderr, "%s: %s\n", options.dict.c_str(), parsed.status().ToString().c_str());
      return 1;
    }
    dictionary = std::move(parsed).value();
  }
  // Mutants start from the entries within max_size: a seed kept for its size (the 7 MB
  // username) is replayed above, but copying it for every mutant would only slow the run.
  std::vector<Bytes> seeds;
  for (const Bytes& entry : corpus) {
    if (entry.size() <= options.max_size) seeds.push_back(entry);
  }
  if (seeds.empty()) seeds.push_back({});
  Mutator mutator(options.seed, &seeds, std::move(dictionary), options.max_size);
  uint64_t accepted = 0;
  const auto start = std::chrono::steady_clock::now();
  for (uint64_t i = 0; i < options.iterations; ++i) accepted += Run(entry, mutator.Next());
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::printf("%llu mutants (seed %llu, %llu accepted) in %.2f s: %.0f exec/s\n",
              static_cast<unsigned long long>(options.iterations), static_cast<unsigned long long>(options.seed),
              static_cast<unsigned long long>(accepted), seconds,
              seconds > 0 ? double(options.iterations) / seconds : 0.0);
  return failures == 0 ? 0 : 1;
}

}  // namespace kimi::fuzz
