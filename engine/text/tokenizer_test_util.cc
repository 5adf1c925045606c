#include "text/tokenizer_test_util.h"

#include <cstdlib>
#include <filesystem>
#include <stdexcept>

#include "kimi/tokenizer_utf8.h"
#include "text/bpe_trainer.h"
#include "kimi/kimi_data.h"
#include "core/whole_file.h"
#include "text/tokenizer_ranks.h"

namespace kimi::text::testing {

std::string TokenizerDataDir() {
  if (const char* src = std::getenv("KIMI_SOURCE_DIR")) {
    return (std::filesystem::path(src) / "tests" / "data" / "tokenizer").string();
  }
  return (std::filesystem::path(__FILE__).parent_path() / ".." / ".." / "tests" / "data" / "tokenizer").string();
}

std::string ReadTestFile(const std::string& path) {
  auto contents = ReadWholeFile(path);
  if (!contents.ok()) throw std::runtime_error(contents.status().ToString());
  return std::move(contents).value();
}

std::string RealRanksDir() { return KimiDataDir(); }

const Tokenizer& RealTokenizer() {
  static const Tokenizer* tokenizer = [] {
    auto loaded = Tokenizer::LoadFiles((std::filesystem::path(RealRanksDir()) / "tiktoken.model").string(), "");
    if (!loaded.ok()) throw std::runtime_error(loaded.status().ToString());
    return new Tokenizer(std::move(loaded).value());
  }();
  return *tokenizer;
}

const Tokenizer& DemoTokenizer() {
  static const Tokenizer* tokenizer = [] {
    const std::string text = ReadTestFile(TokenizerDataDir() + "/multilingual.txt");
    auto tokens = TrainByteLevelBpe({text}, 512);
    if (!tokens.ok()) throw std::runtime_error(tokens.status().ToString());
    auto table = RankTable::FromTokens(std::move(tokens).value());
    if (!table.ok()) throw std::runtime_error(table.status().ToString());
    auto loaded = Tokenizer::FromContents(table->ToTiktoken(), DemoTokenizerConfigJson(table->size()));
    if (!loaded.ok()) throw std::runtime_error(loaded.status().ToString());
    return new Tokenizer(std::move(loaded).value());
  }();
  return *tokenizer;
}

std::string RandomUnicodeText(std::mt19937_64& rng, size_t max_code_points) {
  static const char32_t kSpaces[] = {' ', ' ', ' ', '\t', '\n', '\r', 0x0B, 0x0C, 0x85, 0xA0, 0x1680,
                                     0x2000, 0x2009, 0x200A, 0x2028, 0x2029, 0x202F, 0x3000, 0x1C};
  static const char32_t kMarks[] = {0x0300, 0x0301, 0x0308, 0x0323, 0x0345, 0x0489, 0x0903, 0x093C,
                                    0x20DD, 0x302A, 0xFE0F, 0x1F3FB, 0x200D, 0xE0100};
  static const char32_t kEmoji[] = {0x1F600, 0x1F44D, 0x1F3FD, 0x1F1FB, 0x1F1F3, 0x2764, 0xFE0F, 0x200D,
                                    0x1F468, 0x1F469, 0x1F467, 0x1F389, 0x1F680, 0x2600};
  static const char32_t kContractionLetters[] = {'s', 'S', 't', 'T', 'r', 'R', 'e', 'E', 'v', 'V',
                                                 'm', 'M', 'l', 'L', 'd', 'D', 0x17F};
  static const std::u32string kVietnamese = U"ViệtNamđượcngườiởẠạẢảẤấẦầẨẩẪẫẬậĂăƯưƠơ";
  static const std::u32string kOther = U"ǅǈʰˆ々〇ー「」。，、？！：；ÅΩ½²Ⅻ٣߀ⅷ";

  std::uniform_int_distribution<size_t> length(0, max_code_points);
  std::uniform_int_distribution<int> kind(0, 99);
  std::string out;
  const size_t n = length(rng);
  auto pick = [&rng](auto& arr) { return arr[std::uniform_int_distribution<size_t>(0, std::size(arr) - 1)(rng)]; };
  auto in_range = [&rng](char32_t lo, char32_t hi) { return std::uniform_int_distribution<char32_t>(lo, hi)(rng); };
  for (size_t i = 0; i < n; ++i) {
    const int k = kind(rng);
    char32_t cp;
    if (k < 20) {
      cp = in_range(0x20, 0x7E);                          // ASCII letters, digits, punctuation
    } else if (k < 26) {
      cp = in_range('0', '9');
    } else if (k < 30) {
      AppendUtf8('\'', &out);
      cp = pick(kContractionLetters);
    } else if (k < 40) {
      cp = pick(kSpaces);
    } else if (k < 46) {
      cp = pick(kMarks);
    } else if (k < 52) {
      cp = pick(kEmoji);
    } else if (k < 62) {
      cp = in_range(0x4E00, 0x9FFF);                      // CJK unified ideographs
    } else if (k < 64) {
      cp = in_range(0x20000, 0x2A6DF);                    // CJK extension B (plane 2)
    } else if (k < 67) {
      cp = in_range(0x3040, 0x30FF);                      // kana
    } else if (k < 70) {
      cp = in_range(0xAC00, 0xD7A3);                      // Hangul
    } else if (k < 76) {
      cp = kVietnamese[std::uniform_int_distribution<size_t>(0, kVietnamese.size() - 1)(rng)];
    } else if (k < 80) {
      cp = kOther[std::uniform_int_distribution<size_t>(0, kOther.size() - 1)(rng)];
    } else if (k < 84) {
      cp = in_range(0x80, 0x7FF);                         // two-byte range
    } else if (k < 90) {
      cp = in_range(0x800, 0xFFFD);                       // rest of the BMP
    } else {
      cp = in_range(0x10000, 0x10FFFF);                   // every supplementary plane
    }
    if (cp >= 0xD800 && cp <= 0xDFFF) cp = 0xFFFD;        // surrogates are not scalar values
    AppendUtf8(cp, &out);
  }
  return out;
}

}  // namespace kimi::text::testing
