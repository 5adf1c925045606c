// A byte-level BPE trainer for the demo tokenizer that fresh clones use in place of Kimi's
// real ranks (which are not part of the project). It learns merges the classic way - count
// adjacent symbol pairs inside the pre-tokeniser's pieces, merge the most frequent, repeat -
// and writes the result as a Kimi tokenizer directory: tiktoken.model plus a
// tokenizer_config.json whose added_tokens_decoder puts K3's special tokens after the ranks
// at the same offsets as the real vocabulary ([BOS] +0 ... [PAD] +255).
//
// Training is deterministic: the same texts and vocab_size give the same ranks, byte for
// byte (ties between equally frequent pairs go to the smaller pair of ids).
//
// Thread safety: the functions share no state; call them from any thread.
#pragma once

#include <string>
#include <vector>

#include "kimi/status.h"

namespace kimi::text {

// Token byte strings by rank: the 256 single bytes in byte order, then one token per merge
// in the order learned, until vocab_size tokens or no pair occurs twice.
// Errors: InvalidArgument when vocab_size < 256 or a text is not valid UTF-8.
Result<std::vector<std::string>> TrainByteLevelBpe(const std::vector<std::string>& texts, int vocab_size);

}  // namespace kimi::text

namespace kimi {

// Trains on the given files (read whole, in the order given) and writes
// out_dir/tiktoken.model and out_dir/tokenizer_config.json, creating out_dir.
// Errors: NotFound/IOError for files, InvalidArgument as TrainByteLevelBpe.
Status TrainDemoTokenizer(const std::vector<std::string>& corpus_files, int vocab_size,
                          const std::string& out_dir);

// The repository's text that the demo tokenizer is trained on, sorted by path: docs/*.md,
// README.md, tests/data/tokenizer/*.txt and the engine's C++ sources. Missing folders are
// skipped (the list may be shorter in a partial checkout).
std::vector<std::string> DemoCorpusFiles(const std::string& source_dir);

// The tokenizer_config.json written beside demo ranks of num_base_tokens tokens.
std::string DemoTokenizerConfigJson(int num_base_tokens);

}  // namespace kimi
