// kimi-engine tokenize: UTF-8 text on stdin -> comma-separated token ids on stdout.
#include <cstdio>

#include "kimi/tokenizer.h"
#include "tools/command.h"
#include "tools/flags.h"
#include "tools/stdio_text.h"

namespace kimi::tools {
namespace {

const std::vector<FlagSpec>& TokenizeFlags() {
  static const std::vector<FlagSpec> flags = {
      {"tokenizer", true, "DIR  directory with tiktoken.model (and tokenizer_config.json)"},
      {"allow-special", false, "     recognise special-token texts such as <|open|> (default: plain text)"},
      {"help", false, "     this text"},
  };
  return flags;
}

}  // namespace

int RunTokenize(const Args& args) {
  const CommandLine line =
      ParseCommandLine("tokenize", args, TokenizeFlags(),
                       "tokenize --tokenizer DIR [--allow-special] < text\n"
                       "Encodes every byte of stdin (a trailing newline is text too) and prints the ids.");
  if (!line.flags) return line.exit_status;
  const Flags& flags = *line.flags;
  auto dir = flags.Require("tokenizer");
  if (!dir.ok()) return FailUsage("tokenize", dir.status());
  auto tokenizer = Tokenizer::LoadDirectory(*dir);
  if (!tokenizer.ok()) return FailInput("tokenize", tokenizer.status());
  auto text = ReadAllStdin();
  if (!text.ok()) return FailInput("tokenize", text.status());
  auto ids = tokenizer->Encode(*text, flags.Has("allow-special"));
  if (!ids.ok()) return FailInput("tokenize", ids.status());
  std::printf("%s\n", FormatIdList(*ids).c_str());
  return kExitOk;
}

}  // namespace kimi::tools
