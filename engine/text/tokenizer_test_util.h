// Helpers shared by the tokenizer's tests: where the test data and Kimi's ranks live, a demo
// tokenizer trained once per test process, and random Unicode text.
//
// Thread safety: test-only; the cached demo tokenizer is built under a function-local static.
#pragma once

#include <cstdint>
#include <random>
#include <string>

#include "kimi/tokenizer.h"

namespace kimi::text::testing {

// <source>/tests/data/tokenizer, from KIMI_SOURCE_DIR or, outside CTest, this file's path.
std::string TokenizerDataDir();
std::string ReadTestFile(const std::string& path);

// The directory holding Kimi's tiktoken.model: data/kimi-k3 in the source tree (KimiDataDir()).
std::string RealRanksDir();
// The real tokenizer with K3's special-token table; loaded once (throws when the ranks are
// missing, so a test that needs them fails rather than skips).
const Tokenizer& RealTokenizer();

// A small tokenizer (512 ranks) trained on tests/data/tokenizer/multilingual.txt; built once.
const Tokenizer& DemoTokenizer();

// Random valid UTF-8 built from the kinds of text that stress the pre-tokeniser: code points
// from every plane, combining marks, emoji with modifiers and joiners, CJK, Vietnamese,
// runs of mixed whitespace, apostrophes before contraction letters, digit runs.
std::string RandomUnicodeText(std::mt19937_64& rng, size_t max_code_points);

}  // namespace kimi::text::testing
