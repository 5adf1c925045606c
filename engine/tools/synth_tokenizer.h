// The tokenizer step of `kimi-engine synth`: every synthesized model directory gets a
// tokenizer whose vocabulary is the model's. Either a copy of a real tokenizer directory
// (checked to fit the preset's vocab_size) or a demo byte-level BPE vocabulary trained by
// kimi::TrainDemoTokenizer on the repository's own text, so fresh clones (which have no
// real ranks) can tokenize, render and generate end to end.
//
// Thread safety: the function shares no state; run it on distinct directories concurrently.
#pragma once

#include <string>

#include "kimi/config.h"
#include "kimi/status.h"

namespace kimi::tools {

struct SynthTokenizerOptions {
  std::string real_tokenizer_dir;  // non-empty: copy this directory's tokenizer files
  std::string source_dir;          // where the demo corpus lives (the repository root)
};

// Writes out_dir/tiktoken.model (and tokenizer_config.json). Returns one line saying what was
// written. Errors: FailedPrecondition when the real tokenizer's vocabulary does not fit
// config.vocab_size or the demo vocabulary cannot reach it; NotFound when no corpus is found
// under source_dir; the loader's errors for a broken real tokenizer.
Result<std::string> WriteSynthTokenizer(const K3Config& config, const SynthTokenizerOptions& options,
                                        const std::string& out_dir);

}  // namespace kimi::tools
