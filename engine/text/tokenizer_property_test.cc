// Property tests: random Unicode text round-trips through Encode and Decode, with the demo
// ranks and the real ones (data/kimi-k3); the pre-tokeniser's pieces always cover
// the text exactly; the stream decoder, fed any split of the ids, rebuilds the same text.
#include <gtest/gtest.h>

#include <atomic>
#include <random>
#include <thread>

#include "kimi/tokenizer.h"
#include "kimi/tokenizer_utf8.h"
#include "text/pretokenizer.h"
#include "text/pretokenizer_classes.h"
#include "text/tokenizer_test_util.h"

namespace kimi::text {
namespace {

void CheckRoundTrips(const Tokenizer& tokenizer, uint64_t seed, int rounds) {
  std::mt19937_64 rng(seed);
  for (int round = 0; round < rounds; ++round) {
    const std::string text = testing::RandomUnicodeText(rng, 120);
    ASSERT_TRUE(ValidateUtf8(text).ok());
    for (bool allow_special : {false, true}) {
      auto ids = tokenizer.Encode(text, allow_special);
      ASSERT_TRUE(ids.ok()) << ids.status().ToString();
      for (int32_t id : *ids) ASSERT_LT(id, tokenizer.num_base_tokens());  // no special text in it
      auto decoded = tokenizer.Decode(*ids);
      ASSERT_TRUE(decoded.ok());
      ASSERT_EQ(*decoded, text) << "seed " << seed << " round " << round;
    }
  }
}

void CheckStreaming(const Tokenizer& tokenizer, uint64_t seed, int rounds) {
  std::mt19937_64 rng(seed);
  for (int round = 0; round < rounds; ++round) {
    // Special tokens inside the text exercise the flush before a special token.
    const std::string text = testing::RandomUnicodeText(rng, 60) + "<|open|>" + testing::RandomUnicodeText(rng, 60);
    auto ids = tokenizer.Encode(text, true);
    ASSERT_TRUE(ids.ok());
    StreamDecoder decoder(tokenizer);
    std::string streamed;
    for (int32_t id : *ids) {
      const size_t before = streamed.size();
      ASSERT_TRUE(decoder.Push(id, &streamed).ok());
      // Every emitted chunk is whole characters.
      ASSERT_TRUE(ValidateUtf8(std::string_view(streamed).substr(before)).ok());
    }
    decoder.Flush(&streamed);
    ASSERT_EQ(streamed, text);
  }
}

TEST(TokenizerPropertyTest, PiecesCoverTheText) {
  std::mt19937_64 rng(11);
  for (int round = 0; round < 2000; ++round) {
    const std::string text = testing::RandomUnicodeText(rng, 80);
    std::vector<std::string_view> pieces;
    PreTokenize(text, &pieces);
    std::string joined;
    for (std::string_view p : pieces) {
      ASSERT_FALSE(p.empty());
      ASSERT_TRUE(ValidateUtf8(p).ok());  // pieces never split a character
      joined.append(p);
    }
    ASSERT_EQ(joined, text);
  }
}

TEST(TokenizerPropertyTest, RandomTextRoundTripsWithDemoRanks) {
  CheckRoundTrips(testing::DemoTokenizer(), 1, 1500);
}

TEST(TokenizerPropertyTest, RandomTextRoundTripsWithRealRanks) {
  CheckRoundTrips(testing::RealTokenizer(), 2, 1500);
}

TEST(TokenizerPropertyTest, StreamDecoderRebuildsTheText) {
  CheckStreaming(testing::DemoTokenizer(), 3, 300);
  CheckStreaming(testing::RealTokenizer(), 4, 300);
}

// tokenization_kimi.py's cuts, written plainly: a new slice where a run of Python-whitespace
// (or non-whitespace) code points would exceed 25,000, and every 400,000 code points.
std::vector<std::string> ReferenceSlices(const std::string& text) {
  std::vector<std::string> slices(1);
  size_t run = 0, chunk = 0;
  bool run_is_space = false;
  for (size_t pos = 0; pos < text.size();) {
    const Utf8Step step = DecodeUtf8At(text, pos);
    const bool is_space = (CharClasses::Get().Of(step.code_point) & kClassPySpace) != 0;
    if (chunk == 400000) {
      slices.emplace_back();
      chunk = 0;
      run = 0;
    }
    if (run == 0 || is_space != run_is_space) {
      run_is_space = is_space;
      run = 1;
    } else if (++run > 25000) {
      slices.emplace_back();
      run = 1;
    }
    ++chunk;
    slices.back().append(text, pos, step.length);
    pos += step.length;
  }
  return slices;
}

TEST(TokenizerPropertyTest, LongRunsAreCutLikeTokenizationKimi) {
  // Runs just under, at and over 25,000 code points, of ASCII and of multi-byte characters
  // (U+3000 is whitespace; Han is not; either has more bytes than code points), with and
  // without text between them: the ids are those of the reference slices encoded one by one.
  const std::string space = " ", ideographic_space = "\u3000", han = "\u4e2d", letter = "a";
  auto repeat = [](const std::string& s, size_t n) {
    std::string out;
    for (size_t i = 0; i < n; ++i) out += s;
    return out;
  };
  const std::vector<std::string> texts = {
      repeat(space, 30000) + repeat(letter, 26000) + "b",
      repeat(letter, 25000) + " " + repeat(letter, 25001),
      repeat(han, 25000),
      repeat(han, 25001) + "x",
      repeat(ideographic_space, 9000) + "x" + repeat(ideographic_space, 25001) + "y",
      repeat("\u4e2d\u6587 ", 6000) + repeat(han, 20000),
      repeat(letter + ideographic_space, 20000),
  };
  for (const Tokenizer* t : {&testing::DemoTokenizer(), &testing::RealTokenizer()}) {
    for (const std::string& text : texts) {
      std::vector<int32_t> expected;
      const std::vector<std::string> slices = ReferenceSlices(text);
      for (const std::string& slice : slices) ASSERT_TRUE(t->EncodeAppend(slice, false, &expected).ok());
      auto ids = t->Encode(text, false);
      ASSERT_TRUE(ids.ok());
      EXPECT_EQ(*ids, expected) << text.size() << " bytes in " << slices.size() << " slices";
      EXPECT_EQ(*t->Decode(*ids), text);
    }
  }
}

TEST(TokenizerPropertyTest, RandomBytesAreRejectedOrRoundTripNeverCrash) {
  const Tokenizer& t = testing::DemoTokenizer();
  std::mt19937_64 rng(9);
  int rejected = 0;
  for (int round = 0; round < 3000; ++round) {
    std::string bytes = testing::RandomUnicodeText(rng, 30);
    const int flips = static_cast<int>(rng() % 3);
    for (int f = 0; f < flips && !bytes.empty(); ++f) bytes[rng() % bytes.size()] = static_cast<char>(rng());
    auto ids = t.Encode(bytes, round % 2 == 0);
    if (ValidateUtf8(bytes).ok()) {
      ASSERT_TRUE(ids.ok());
      ASSERT_EQ(*t.Decode(*ids), bytes);
    } else {
      ASSERT_EQ(ids.status().code(), Status::Code::kInvalidArgument);
      ++rejected;
    }
  }
  EXPECT_GT(rejected, 100);  // the flips did produce invalid text
}

TEST(TokenizerPropertyTest, StreamDecoderOutputIsAlwaysValidUtf8) {
  // Arbitrary ids, as a model may generate them: byte tokens in any order, specials between.
  const Tokenizer& t = testing::DemoTokenizer();
  std::mt19937_64 rng(13);
  for (int round = 0; round < 500; ++round) {
    StreamDecoder decoder(t);
    std::string text;
    for (int i = 0; i < 40; ++i) {
      const int32_t id = static_cast<int32_t>(rng() % t.vocab_size());
      ASSERT_TRUE(decoder.Push(id, &text).ok());
    }
    decoder.Flush(&text);
    ASSERT_TRUE(ValidateUtf8(text).ok());
  }
}

TEST(TokenizerPropertyTest, ConcurrentEncodesAgreeWithOneThread) {
  // Each thread has its own piece cache; the shared state is read-only.
  const Tokenizer& t = testing::DemoTokenizer();
  std::mt19937_64 rng(5);
  std::vector<std::string> texts;
  for (int i = 0; i < 200; ++i) texts.push_back(testing::RandomUnicodeText(rng, 100));
  std::vector<std::vector<int32_t>> expected;
  for (const auto& text : texts) expected.push_back(*t.Encode(text, true));
  std::vector<std::thread> threads;
  std::atomic<int> mismatches{0};
  for (int k = 0; k < 4; ++k) {
    threads.emplace_back([&, k] {
      for (int round = 0; round < 3; ++round) {
        for (size_t i = 0; i < texts.size(); ++i) {
          const size_t j = (i * 7 + k) % texts.size();
          if (*t.Encode(texts[j], true) != expected[j]) ++mismatches;
        }
      }
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(mismatches.load(), 0);
}

}  // namespace
}  // namespace kimi::text
