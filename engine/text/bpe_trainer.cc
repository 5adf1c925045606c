#include "text/bpe_trainer.h"

#include <algorithm>
#include <filesystem>
#include <map>
#include <queue>
#include <unordered_map>
#include <unordered_set>

#include <nlohmann/json.hpp>

#include "kimi/special_token_text.h"
#include "kimi/tokenizer.h"
#include "kimi/tokenizer_utf8.h"
#include "text/pretokenizer.h"
#include "core/whole_file.h"
#include "text/tokenizer_ranks.h"

namespace kimi::text {
namespace {

using PairKey = uint64_t;  // (left id << 32) | right id

PairKey MakePair(int32_t a, int32_t b) { return (static_cast<uint64_t>(a) << 32) | static_cast<uint32_t>(b); }
int32_t Left(PairKey p) { return static_cast<int32_t>(p >> 32); }
int32_t Right(PairKey p) { return static_cast<int32_t>(p & 0xFFFFFFFFu); }

struct Word {
  std::vector<int32_t> symbols;
  int64_t count;
};

struct Candidate {
  int64_t count;
  PairKey pair;
  // Most frequent first; on a tie the smaller pair, so the order never depends on hashing.
  bool operator<(const Candidate& o) const { return count != o.count ? count < o.count : pair > o.pair; }
};

class Trainer {
 public:
  explicit Trainer(std::vector<Word> words) : words_(std::move(words)) {
    for (int b = 0; b < 256; ++b) tokens_.push_back(std::string(1, static_cast<char>(b)));
    for (size_t w = 0; w < words_.size(); ++w) AddPairs(static_cast<int32_t>(w));
    for (const auto& [pair, count] : pair_counts_) heap_.push({count, pair});
  }

  std::vector<std::string> Run(int vocab_size) {
    while (static_cast<int>(tokens_.size()) < vocab_size) {
      PairKey best;
      if (!PopBest(&best)) break;
      Merge(best);
    }
    return std::move(tokens_);
  }

 private:
  bool PopBest(PairKey* best) {
    while (!heap_.empty()) {
      const Candidate top = heap_.top();
      heap_.pop();
      auto it = pair_counts_.find(top.pair);
      if (it == pair_counts_.end() || it->second != top.count) continue;  // stale
      if (top.count < 2) return false;  // a pair seen once teaches nothing
      *best = top.pair;
      return true;
    }
    return false;
  }

  void AddPairs(int32_t w) {
    const Word& word = words_[w];
    for (size_t i = 0; i + 1 < word.symbols.size(); ++i) {
      const PairKey p = MakePair(word.symbols[i], word.symbols[i + 1]);
      pair_counts_[p] += word.count;
      where_[p].push_back(w);
      touched_.insert(p);
    }
  }

  void RemovePairs(int32_t w) {
    const Word& word = words_[w];
    for (size_t i = 0; i + 1 < word.symbols.size(); ++i) {
      const PairKey p = MakePair(word.symbols[i], word.symbols[i + 1]);
      auto it = pair_counts_.find(p);
      it->second -= word.count;
      if (it->second == 0) pair_counts_.erase(it);
      touched_.insert(p);
    }
  }

  void Merge(PairKey pair) {
    const int32_t a = Left(pair), b = Right(pair);
    const std::string joined = tokens_[a] + tokens_[b];
    // Two different pairs can spell the same bytes ("ab"+"c", "a"+"bc"): reuse the id.
    int32_t merged;
    auto existing = id_of_.find(joined);
    if (existing != id_of_.end()) {
      merged = existing->second;
    } else {
      merged = static_cast<int32_t>(tokens_.size());
      tokens_.push_back(joined);
      id_of_.emplace(joined, merged);
    }

    std::vector<int32_t> affected = std::move(where_[pair]);
    where_.erase(pair);
    std::sort(affected.begin(), affected.end());
    affected.erase(std::unique(affected.begin(), affected.end()), affected.end());
    touched_.clear();
    for (int32_t w : affected) {
      std::vector<int32_t>& s = words_[w].symbols;
      bool present = false;
      for (size_t i = 0; i + 1 < s.size(); ++i) present |= (s[i] == a && s[i + 1] == b);
      if (!present) continue;  // a stale entry of where_
      RemovePairs(w);
      std::vector<int32_t> next;
      next.reserve(s.size());
      for (size_t i = 0; i < s.size();) {
        if (i + 1 < s.size() && s[i] == a && s[i + 1] == b) {
          next.push_back(merged);
          i += 2;
        } else {
          next.push_back(s[i]);
          ++i;
        }
      }
      s = std::move(next);
      AddPairs(w);
    }
    for (PairKey p : touched_) {
      auto it = pair_counts_.find(p);
      if (it != pair_counts_.end()) heap_.push({it->second, p});
    }
  }

  std::vector<Word> words_;
  std::vector<std::string> tokens_;
  std::unordered_map<std::string, int32_t> id_of_;
  std::unordered_map<PairKey, int64_t> pair_counts_;
  std::unordered_map<PairKey, std::vector<int32_t>> where_;
  std::unordered_set<PairKey> touched_;
  std::priority_queue<Candidate> heap_;
};

}  // namespace

Result<std::vector<std::string>> TrainByteLevelBpe(const std::vector<std::string>& texts, int vocab_size) {
  if (vocab_size < 256) return Status::InvalidArgument("vocab_size must be at least 256 (the single bytes)");
  // Piece frequencies, in a sorted map so that word order (and so everything after) is fixed.
  std::map<std::string, int64_t> piece_counts;
  std::vector<std::string_view> pieces;
  for (size_t i = 0; i < texts.size(); ++i) {
    KIMI_RETURN_IF_ERROR(ValidateUtf8(texts[i]).WithContext("training text " + std::to_string(i)));
    pieces.clear();
    PreTokenize(texts[i], &pieces);
    for (std::string_view piece : pieces) ++piece_counts[std::string(piece)];
  }
  std::vector<Word> words;
  words.reserve(piece_counts.size());
  for (const auto& [piece, count] : piece_counts) {
    Word word{{}, count};
    for (char c : piece) word.symbols.push_back(static_cast<uint8_t>(c));
    words.push_back(std::move(word));
  }
  return Trainer(std::move(words)).Run(vocab_size);
}

}  // namespace kimi::text

namespace kimi {

std::string DemoTokenizerConfigJson(int num_base_tokens) {
  nlohmann::ordered_json decoder = nlohmann::ordered_json::object();
  for (const SpecialToken& t : Tokenizer::K3SpecialTokens(num_base_tokens)) {
    if (t.text == ReservedSpecialTokenName(t.id)) continue;  // implicit, as in the real config
    decoder[std::to_string(t.id)] = {{"content", t.text},   {"lstrip", false}, {"normalized", false},
                                     {"rstrip", false},     {"single_word", false}, {"special", true}};
  }
  nlohmann::ordered_json config = {
      {"added_tokens_decoder", decoder},
      {"bos_token", std::string(k3::kBos)},
      {"eos_token", std::string(k3::kEos)},
      {"pad_token", std::string(k3::kPad)},
      {"unk_token", std::string(k3::kUnk)},
      {"tokenizer_class", "TikTokenTokenizer"},
      {"kimi_demo_tokenizer", true},
  };
  return config.dump(2) + "\n";
}

Status TrainDemoTokenizer(const std::vector<std::string>& corpus_files, int vocab_size,
                          const std::string& out_dir) {
  std::vector<std::string> texts;
  for (const std::string& path : corpus_files) {
    auto contents = ReadWholeFile(path);
    if (!contents.ok()) return contents.status().WithContext("training file");
    texts.push_back(std::move(contents).value());
    if (!text::ValidateUtf8(texts.back()).ok()) {
      return Status::InvalidArgument("training file is not valid UTF-8: " + path);
    }
  }
  KIMI_ASSIGN_OR_RETURN(std::vector<std::string> tokens, text::TrainByteLevelBpe(texts, vocab_size));
  const int num_base = static_cast<int>(tokens.size());
  KIMI_ASSIGN_OR_RETURN(text::RankTable table, text::RankTable::FromTokens(std::move(tokens)));

  std::error_code ec;
  std::filesystem::create_directories(out_dir, ec);
  if (ec) return Status::IOError("cannot create " + out_dir + ": " + ec.message());
  const std::pair<std::string, std::string> files[] = {
      {"tiktoken.model", table.ToTiktoken()},
      {"tokenizer_config.json", DemoTokenizerConfigJson(num_base)},
  };
  for (const auto& [name, contents] : files) {
    KIMI_RETURN_IF_ERROR(WriteWholeFile((std::filesystem::path(out_dir) / name).string(), contents));
  }
  return Status::OK();
}

std::vector<std::string> DemoCorpusFiles(const std::string& source_dir) {
  namespace fs = std::filesystem;
  const fs::path root(source_dir);
  std::vector<std::string> files;
  auto add_matching = [&](const fs::path& dir, bool recursive, auto accept) {
    std::error_code ec;
    if (!fs::is_directory(dir, ec)) return;
    auto visit = [&](const fs::directory_entry& e) {
      if (e.is_regular_file() && accept(e.path())) files.push_back(e.path().string());
    };
    if (recursive) {
      for (const auto& e : fs::recursive_directory_iterator(dir, ec)) visit(e);
    } else {
      for (const auto& e : fs::directory_iterator(dir, ec)) visit(e);
    }
  };
  auto ext_is = [](std::initializer_list<const char*> exts) {
    return [exts](const fs::path& p) {
      for (const char* e : exts) {
        if (p.extension() == e) return true;
      }
      return false;
    };
  };
  add_matching(root / "docs", false, ext_is({".md"}));
  add_matching(root / "tests" / "data" / "tokenizer", false, ext_is({".txt"}));
  add_matching(root / "engine", true, ext_is({".h", ".cc"}));
  std::error_code ec;
  if (fs::is_regular_file(root / "README.md", ec)) files.push_back((root / "README.md").string());
  std::sort(files.begin(), files.end());
  return files;
}

}  // namespace kimi
