#include "fuzz_mutator.h"

#include <algorithm>

namespace kimi::fuzz {

namespace {

int HexDigit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// The token between the first and the last quote of a dictionary line.
Result<Bytes> ParseToken(const std::string& line) {
  const size_t open = line.find('"');
  const size_t close = line.rfind('"');
  if (open == std::string::npos || close == open) return Status::InvalidArgument("no quoted token");
  Bytes out;
  for (size_t i = open + 1; i < close; ++i) {
    if (line[i] != '\\') {
      out.push_back(uint8_t(line[i]));
      continue;
    }
    if (i + 1 >= close) return Status::InvalidArgument("a backslash at the end of the token");
    const char next = line[++i];
    if (next == '\\' || next == '"') {
      out.push_back(uint8_t(next));
    } else if (next == 'x' && i + 2 < close && HexDigit(line[i + 1]) >= 0 && HexDigit(line[i + 2]) >= 0) {
      out.push_back(uint8_t(HexDigit(line[i + 1]) * 16 + HexDigit(line[i + 2])));
      i += 2;
    } else {
      return Status::InvalidArgument(std::string("an unknown escape \\") + next);
    }
  }
  return out;
}

}  // namespace

Result<std::vector<Bytes>> ParseDictionary(const std::string& text) {
  std::vector<Bytes> tokens;
  size_t start = 0;
  for (int number = 1; start < text.size(); ++number) {
    size_t end = text.find('\n', start);
    if (end == std::string::npos) end = text.size();
    const std::string line = text.substr(start, end - start);
    start = end + 1;
    const size_t first = line.find_first_not_of(" \t\r");
    if (first == std::string::npos || line[first] == '#') continue;
    Result<Bytes> token = ParseToken(line);
    if (!token.ok()) return token.status().WithContext("dictionary line " + std::to_string(number));
    tokens.push_back(std::move(token).value());
  }
  return tokens;
}

Mutator::Mutator(uint64_t seed, const std::vector<Bytes>* corpus, std::vector<Bytes> dictionary, size_t max_size)
    : rng_(seed), corpus_(corpus), dictionary_(std::move(dictionary)), max_size_(max_size) {}

Bytes Mutator::Mutate(const Bytes& input) {
  Bytes data = input;
  const size_t rounds = 1 + Below(4);
  for (size_t i = 0; i < rounds; ++i) MutateOnce(&data);
  if (data.size() > max_size_) data.resize(max_size_);
  return data;
}

void Mutator::MutateOnce(Bytes* data) {
  Bytes& d = *data;
  switch (Below(dictionary_.empty() ? 6 : 8)) {
    case 0:  // flip one bit
      if (!d.empty()) d[Below(d.size())] ^= uint8_t(1u << Below(8));
      break;
    case 1:  // insert a byte, often a structural one
      d.insert(d.begin() + Below(d.size() + 1), Below(2) ? uint8_t(Below(256)) : uint8_t("{}[]\",:\\0-"[Below(10)]));
      break;
    case 2:  // delete a run of bytes
      if (!d.empty()) {
        const size_t at = Below(d.size());
        const size_t n = 1 + Below(std::min<size_t>(d.size() - at, 16));
        d.erase(d.begin() + at, d.begin() + at + n);
      }
      break;
    case 3:  // duplicate a chunk in place (repetition: deep nesting, long lists)
      if (!d.empty()) {
        const size_t at = Below(d.size());
        const size_t n = 1 + Below(std::min<size_t>(d.size() - at, 64));
        const Bytes chunk(d.begin() + at, d.begin() + at + n);
        const size_t copies = 1 + Below(Below(2) ? 2 : 32);
        for (size_t c = 0; c < copies && d.size() + n <= max_size_; ++c) d.insert(d.begin() + at, chunk.begin(), chunk.end());
      }
      break;
    case 4:  // splice: this input's head, another entry's tail
      if (!corpus_->empty()) {
        const Bytes& other = (*corpus_)[Below(corpus_->size())];
        const size_t cut = Below(d.size() + 1);
        const size_t from = Below(other.size() + 1);
        d.resize(cut);
        d.insert(d.end(), other.begin() + from, other.end());
      }
      break;
    case 5:  // overwrite a byte with an interesting value
      if (!d.empty()) {
        static constexpr uint8_t kInteresting[] = {0x00, 0x01, 0x7f, 0x80, 0xff, '0', ' ', '9', '"', '\\'};
        d[Below(d.size())] = kInteresting[Below(sizeof(kInteresting))];
      }
      break;
    case 6: {  // insert a dictionary token
      const Bytes& token = dictionary_[Below(dictionary_.size())];
      d.insert(d.begin() + Below(d.size() + 1), token.begin(), token.end());
      break;
    }
    default: {  // overwrite with a dictionary token
      const Bytes& token = dictionary_[Below(dictionary_.size())];
      const size_t at = Below(d.size() + 1);
      d.erase(d.begin() + at, d.begin() + std::min(d.size(), at + token.size()));
      d.insert(d.begin() + at, token.begin(), token.end());
      break;
    }
  }
}

}  // namespace kimi::fuzz
