// kimi-engine eval: runs token ids through the model and writes the logits of every position as
// float32 little-endian [n_tokens × vocab] (what tests/reference/check_engine.py compares).
// --mode prefill runs them in one Prefill; --mode decode feeds them one by one through
// DecodeBatch, exercising the decode path.
#include <cstdio>
#include <cstring>

#include "tools/command.h"
#include "tools/flags.h"
#include "tools/model_args.h"

namespace kimi::tools {
namespace {

const std::vector<FlagSpec>& EvalFlags() {
  static const std::vector<FlagSpec> flags = {
      {"model", true, "DIR   model directory"},
      {"token-ids", true, "IDS   comma-separated token ids"},
      {"dump-logits", true, "FILE  write float32 LE logits [n_tokens x vocab]"},
      {"mode", true, "MODE  prefill (default) or decode (token by token)"},
      {"threads", true, "N     kernel threads (default: one per hardware thread)"},
      {"help", false, "      this text"},
  };
  return flags;
}

Status WriteLogits(const std::string& path, const std::vector<float>& logits) {
  static_assert(std::endian::native == std::endian::little, "logits are written little-endian");
  std::FILE* f = std::fopen(path.c_str(), "wb");
  if (f == nullptr) return Status::IOError(path + ": cannot open for writing");
  const size_t written = std::fwrite(logits.data(), sizeof(float), logits.size(), f);
  const bool closed = std::fclose(f) == 0;
  if (written != logits.size() || !closed) return Status::IOError(path + ": short write");
  return Status::OK();
}

Status Eval(const Flags& flags) {
  KIMI_ASSIGN_OR_RETURN(std::string dir, flags.Require("model"));
  KIMI_ASSIGN_OR_RETURN(std::string ids_text, flags.Require("token-ids"));
  KIMI_ASSIGN_OR_RETURN(std::vector<int32_t> ids, ParseTokenIds(ids_text));
  KIMI_ASSIGN_OR_RETURN(uint64_t threads, flags.GetUint("threads", 0));
  const std::string mode = flags.Get("mode").value_or("prefill");
  if (mode != "prefill" && mode != "decode") return Status::InvalidArgument("--mode must be prefill or decode");

  ModelOptions options;
  options.threads = int(threads);
  KIMI_ASSIGN_OR_RETURN(std::unique_ptr<Model> model, Model::Load(dir, options));
  const int64_t V = model->config().vocab_size;
  std::unique_ptr<SequenceState> seq = model->NewSequence();
  std::vector<float> logits;
  if (mode == "prefill") {
    KIMI_RETURN_IF_ERROR(model->Prefill(*seq, ids, LogitsRows::kAll, &logits));
  } else {
    std::vector<float> step;
    SequenceState* states[] = {seq.get()};
    for (int32_t id : ids) {
      KIMI_RETURN_IF_ERROR(model->DecodeBatch(states, std::span<const int32_t>(&id, 1), &step));
      logits.insert(logits.end(), step.begin(), step.begin() + V);
    }
  }
  if (auto path = flags.Get("dump-logits")) {
    KIMI_RETURN_IF_ERROR(WriteLogits(*path, logits));
  } else {
    // Without a dump file, print each position's argmax.
    for (size_t t = 0; t < ids.size(); ++t) {
      const float* row = logits.data() + t * V;
      int64_t best = 0;
      for (int64_t v = 1; v < V; ++v) best = row[v] > row[best] ? v : best;
      std::printf("%s%lld", t ? " " : "", static_cast<long long>(best));
    }
    std::printf("\n");
  }
  return Status::OK();
}

}  // namespace

int RunEval(const Args& args) {
  return RunWithFlags("eval", args, EvalFlags(),
                      "eval --model DIR --token-ids 1,2,3 [--dump-logits FILE] [--mode prefill|decode]", Eval);
}

}  // namespace kimi::tools
