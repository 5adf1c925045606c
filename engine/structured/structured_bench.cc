// kimi-bench-structured: time per token mask on K3's real vocabulary (163,840 tokens) along
// random walks through every schema of the verifier's cases.
//
//   kimi-bench-structured [walks_per_schema]
//
// For each schema one walk is drawn (uniform among allowed tokens for 30 steps, then steered
// to the end, at most 600 tokens), then replayed three times through fresh matchers: with
// every cache empty (a schema's first request in a fresh process); with an empty cache for the
// schema but the vocabulary-wide cache of shared pieces (free strings, numbers) that earlier
// schemas filled (a new schema in a running server); and sharing the schema's filled cache
// (every later request with that schema); and once more sharing the filled cache with
// max_tokens equal to the walk's length, so that every step is inside the closing window and
// KeepCompletableWithin runs (the last steps of a request that nears max_tokens). A step's time
// is computing the allowed set and applying it to a TokenMask (TokenConstraint::FillMask's
// work), in CPU time of the measuring thread.
#include <algorithm>
#include <chrono>
#include <ctime>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>
#include <vector>

#include "kimi/sampler.h"
#include "structured/structured_test_util.h"

namespace {

// CPU time of this thread: the machine is shared, and a preempted step says nothing about
// the mask's cost.
struct Clock {
  using duration = std::chrono::nanoseconds;
  static std::chrono::time_point<Clock, duration> now() {
    timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return std::chrono::time_point<Clock, duration>(duration(int64_t(ts.tv_sec) * 1000000000 + ts.tv_nsec));
  }
};
using kimi::structured::GrammarMatcher;
using kimi::structured::MaskCache;

double Micros(Clock::duration d) { return std::chrono::duration<double, std::micro>(d).count(); }

void Report(const char* what, std::vector<double> v) {
  if (v.empty()) return;
  std::sort(v.begin(), v.end());
  double sum = 0;
  for (double x : v) sum += x;
  auto at = [&](double q) { return v[std::min(v.size() - 1, size_t(q * double(v.size())))]; };
  std::printf("%-34s steps %6zu  median %8.1f us  p90 %8.1f us  p99 %9.1f us  max %9.1f us  mean %8.1f us\n", what, v.size(),
              at(0.5), at(0.9), at(0.99), v.back(), sum / double(v.size()));
}

}  // namespace

int main(int argc, char** argv) {
  const int walks_per_schema = argc > 1 ? std::max(1, std::atoi(argv[1])) : 1;
  const auto start = Clock::now();
  const auto trie = kimi::structured::testing::RealTrie();
  const auto built = Clock::now();
  std::printf("vocabulary: %d tokens, trie of %zu nodes, longest token %d bytes, built in %.0f ms (tokenizer load included)\n",
              trie->vocab_size(), trie->nodes().size(), trie->max_token_bytes(), Micros(built - start) / 1000);
  auto cases = kimi::structured::testing::VerifierSchemaCases();
  if (!cases.ok()) {
    std::fprintf(stderr, "%s\n", cases.status().ToString().c_str());
    return 2;
  }
  const int32_t end_token = *trie->end_of_msg;
  std::mt19937_64 rng(1);
  std::vector<double> cold, fresh_schema, warm, closing, apply;
  auto vocabulary_wide = std::make_shared<MaskCache>();
  size_t tokens = 0, cache_entries = 0;
  for (const auto& c : *cases) {
    auto grammar = kimi::structured::testing::CompileSchema(c.schema);
    if (!grammar.ok()) continue;
    for (int w = 0; w < walks_per_schema; ++w) {
      kimi::structured::testing::Walk walk = kimi::structured::testing::RandomWalk(*grammar, trie, end_token, rng, 30, 600);
      auto cache = std::make_shared<MaskCache>(vocabulary_wide);
      for (int replay = 0; replay < 4; ++replay) {
        auto isolated = std::make_shared<MaskCache>();
        GrammarMatcher matcher(*grammar, trie, replay == 0 ? isolated : cache, {end_token});
        std::vector<double>& times = replay == 0 ? cold : replay == 1 ? fresh_schema : replay == 2 ? warm : closing;
        const int64_t max_tokens = int64_t(walk.tokens.size()) + 1;  // the walk, then the end token
        std::vector<uint64_t> words;
        for (size_t t = 0; t <= walk.tokens.size(); ++t) {
          kimi::TokenMask mask(trie->vocab_size(), true);
          const auto t0 = Clock::now();
          matcher.AllowedTokens(&words);
          if (replay == 3) matcher.KeepCompletableWithin(max_tokens - int64_t(t), &words);
          const auto t1 = Clock::now();
          mask.Intersect(words);
          const auto t2 = Clock::now();
          times.push_back(Micros(t2 - t0));
          apply.push_back(Micros(t2 - t1));
          if (t < walk.tokens.size()) (void)matcher.Advance(walk.tokens[t]);
        }
      }
      tokens += walk.tokens.size();
      cache_entries += cache->size();
    }
  }
  std::printf("schemas: %zu, walks: %zu tokens, mask cache entries: %zu\n", cases->size(), tokens, cache_entries);
  Report("fresh process, first request", cold);
  Report("running server, new schema", fresh_schema);
  Report("later requests of a schema", warm);
  Report("the same, closing before max_tokens", closing);
  Report("of which: mask applied to TokenMask", apply);
  return 0;
}
