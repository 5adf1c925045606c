// kimi-engine: the engine's command line. Dispatches to one subcommand from the table below.
#include <cstdio>
#include <cstring>
#include <string>

#include "core/float_mode.h"
#include "tools/command.h"

namespace kimi::tools {
namespace {

// One entry per subcommand; keep the list sorted by name.
constexpr Command kCommands[] = {
    {"bench", "prefill and decode tokens/s against the machine's measured bandwidth and FMA peak", RunBench},
    {"detokenize", "token ids on stdin -> the text they spell", RunDetokenize},
    {"eval", "run token ids through a model; write the logits of every position", RunEval},
    {"generate", "greedy generation from token ids; print the generated ids", RunGenerate},
    {"info", "print a model's configuration, sizes and memory arithmetic; validate its files", RunInfo},
    {"quantize", "rewrite a model directory's dense BF16 matrices as int8 or MXFP4 (compressed-tensors)", RunQuantize},
    {"render", "chat-completions request JSON on stdin -> the K3 prompt text or its ids", RunRender},
    {"serve", "serve a model over HTTP as a vLLM-compatible OpenAI chat-completions worker", RunServe},
    {"synth", "write a random-weight model directory of the Kimi K3 architecture", RunSynth},
    {"tokenize", "UTF-8 text on stdin -> comma-separated token ids", RunTokenize},
};

void PrintUsage(std::FILE* out) {
  std::fprintf(out, "usage: kimi-engine <command> [flags]\n\ncommands:\n");
  for (const auto& c : kCommands) std::fprintf(out, "  %-11s %s\n", c.name, c.summary);
  std::fprintf(out, "\nrun `kimi-engine <command> --help` for a command's flags\n");
}

}  // namespace
}  // namespace kimi::tools

int main(int argc, char** argv) {
  using namespace kimi::tools;
  // Every engine thread flushes subnormals (docs/kernels.md "Subnormals"); the pools the
  // commands build set it on their workers.
  kimi::SetThreadSubnormals(kimi::Subnormals::kFlushToZero);
  if (argc < 2) {
    PrintUsage(stderr);
    return kExitUsage;
  }
  std::string name = argv[1];
  if (name == "--help" || name == "-h" || name == "help") {
    PrintUsage(stdout);
    return kExitOk;
  }
  for (const auto& c : kCommands) {
    if (name == c.name) return c.run(Args(argv + 2, argv + argc));
  }
  std::fprintf(stderr, "kimi-engine: unknown command '%s'\n\n", name.c_str());
  PrintUsage(stderr);
  return kExitUsage;
}
