// The tokenizer step of `kimi-engine synth`: every synthesized model directory gets a
// tokenizer whose vocabulary is the model's. Either a copy of a real tokenizer directory (the
// model then takes its vocabulary, or, for a shape-only preset that stands for the published
// model, it must fit the preset's vocab_size) or a demo byte-level BPE vocabulary trained by
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
  // With a real tokenizer: true gives the model the tokenizer's vocabulary (its ranks, then
  // K3's 256 special ids); false requires the tokenizer to fit config->vocab_size.
  bool adopt_vocabulary = true;
  std::string source_dir;          // where the demo corpus lives (the repository root)
};

// Writes out_dir/tiktoken.model (and tokenizer_config.json), first, so that the weights are
// written for the vocabulary it settles in *config. Returns one line saying what was written.
// Errors: FailedPrecondition when a real tokenizer's vocabulary does not fit (adopt_vocabulary
// false) or the demo vocabulary cannot reach config->vocab_size; NotFound when no corpus is
// found under source_dir; the loader's errors for a broken real tokenizer.
Result<std::string> WriteSynthTokenizer(K3Config* config, const SynthTokenizerOptions& options,
                                        const std::string& out_dir);

}  // namespace kimi::tools
