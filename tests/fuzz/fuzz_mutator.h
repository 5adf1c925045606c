// The deterministic mutator of the standalone fuzz driver: the mutations libFuzzer applies
// first (bit flips, byte insertion and deletion, chunk duplication, splicing two corpus
// entries, dictionary tokens), driven by a seeded generator so that a run of `make test` is
// the same run every time and a failure reproduces from its iteration number.
//
// Thread safety: a Mutator is used by one thread.
#pragma once

#include <cstddef>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "kimi/status.h"

namespace kimi::fuzz {

using Bytes = std::vector<uint8_t>;

// The tokens of a libFuzzer dictionary file: one `"token"` or `name="token"` per line, with
// \\, \" and \xNN escapes; `#` comments and blank lines. Errors: a malformed line, by number.
Result<std::vector<Bytes>> ParseDictionary(const std::string& text);

class Mutator {
 public:
  // `corpus` is spliced from; `dictionary` may be empty. Outputs never exceed max_size bytes.
  Mutator(uint64_t seed, const std::vector<Bytes>* corpus, std::vector<Bytes> dictionary, size_t max_size);

  // A mutant of `input`: one to four mutations stacked.
  Bytes Mutate(const Bytes& input);
  // A mutant of a corpus entry chosen at random. Precondition: the corpus is not empty.
  Bytes Next() { return Mutate((*corpus_)[Below(corpus_->size())]); }

 private:
  size_t Below(size_t n) { return n == 0 ? 0 : std::uniform_int_distribution<size_t>(0, n - 1)(rng_); }
  void MutateOnce(Bytes* data);

  std::mt19937_64 rng_;
  const std::vector<Bytes>* corpus_;
  std::vector<Bytes> dictionary_;
  size_t max_size_;
};

}  // namespace kimi::fuzz
