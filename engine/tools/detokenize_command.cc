// kimi-engine detokenize: token ids on stdin -> the bytes they spell on stdout.
#include <cstdio>

#include "kimi/tokenizer.h"
#include "tools/command.h"
#include "tools/flags.h"
#include "tools/stdio_text.h"

namespace kimi::tools {
namespace {

const std::vector<FlagSpec>& DetokenizeFlags() {
  static const std::vector<FlagSpec> flags = {
      {"tokenizer", true, "DIR  directory with tiktoken.model (and tokenizer_config.json)"},
      {"help", false, "     this text"},
  };
  return flags;
}

}  // namespace

int RunDetokenize(const Args& args) {
  const CommandLine line =
      ParseCommandLine("detokenize", args, DetokenizeFlags(),
                       "detokenize --tokenizer DIR < ids\n"
                       "Reads ids separated by commas or whitespace; writes exactly the bytes they spell\n"
                       "(special tokens as their text, no newline added).");
  if (!line.flags) return line.exit_status;
  const Flags& flags = *line.flags;
  auto dir = flags.Require("tokenizer");
  if (!dir.ok()) return FailUsage("detokenize", dir.status());
  auto tokenizer = Tokenizer::LoadDirectory(*dir);
  if (!tokenizer.ok()) return FailInput("detokenize", tokenizer.status());
  auto input = ReadAllStdin();
  if (!input.ok()) return FailInput("detokenize", input.status());
  auto ids = ParseIdList(*input);
  if (!ids.ok()) return FailInput("detokenize", ids.status());
  auto text = tokenizer->Decode(*ids);
  if (!text.ok()) return FailInput("detokenize", text.status());
  if (std::fwrite(text->data(), 1, text->size(), stdout) != text->size() || std::fflush(stdout) != 0) {
    return FailInput("detokenize", Status::IOError("writing stdout failed"));
  }
  return kExitOk;
}

}  // namespace kimi::tools
