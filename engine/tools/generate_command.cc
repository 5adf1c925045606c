// kimi-engine generate: greedy generation. Prefills the prompt, then decodes --max-tokens ids
// one at a time, each the argmax of the previous step's logits, and prints them comma-separated.
#include <cstdio>

#include "tools/command.h"
#include "tools/flags.h"
#include "tools/model_args.h"

namespace kimi::tools {
namespace {

const std::vector<FlagSpec>& GenerateFlags() {
  static const std::vector<FlagSpec> flags = {
      {"model", true, "DIR   model directory"},
      {"token-ids", true, "IDS   comma-separated prompt token ids"},
      {"max-tokens", true, "N     ids to generate (default 16)"},
      {"threads", true, "N     kernel threads (default: one per hardware thread)"},
      {"help", false, "      this text"},
  };
  return flags;
}

int32_t Argmax(const float* row, int64_t n) {
  int64_t best = 0;
  for (int64_t v = 1; v < n; ++v) best = row[v] > row[best] ? v : best;
  return static_cast<int32_t>(best);
}

Status Generate(const Flags& flags) {
  KIMI_ASSIGN_OR_RETURN(std::string dir, flags.Require("model"));
  KIMI_ASSIGN_OR_RETURN(std::string ids_text, flags.Require("token-ids"));
  KIMI_ASSIGN_OR_RETURN(std::vector<int32_t> prompt, ParseTokenIds(ids_text));
  KIMI_ASSIGN_OR_RETURN(uint64_t max_tokens, flags.GetUint("max-tokens", 16));
  KIMI_ASSIGN_OR_RETURN(uint64_t threads, flags.GetUint("threads", 0));

  ModelOptions options;
  options.threads = int(threads);
  KIMI_ASSIGN_OR_RETURN(std::unique_ptr<Model> model, Model::Load(dir, options));
  const int64_t V = model->config().vocab_size;
  std::unique_ptr<SequenceState> seq = model->NewSequence();
  std::vector<float> logits;
  KIMI_RETURN_IF_ERROR(model->Prefill(*seq, prompt, LogitsRows::kLast, &logits));
  SequenceState* states[] = {seq.get()};
  for (uint64_t step = 0; step < max_tokens; ++step) {
    const int32_t next = Argmax(logits.data(), V);
    std::printf("%s%d", step ? "," : "", next);
    std::fflush(stdout);
    if (step + 1 < max_tokens) {
      KIMI_RETURN_IF_ERROR(model->DecodeBatch(states, std::span<const int32_t>(&next, 1), &logits));
    }
  }
  std::printf("\n");
  return Status::OK();
}

}  // namespace

int RunGenerate(const Args& args) {
  return RunWithFlags("generate", args, GenerateFlags(),
                      "generate --model DIR --token-ids 1,2,3 [--max-tokens N]", Generate);
}

}  // namespace kimi::tools
