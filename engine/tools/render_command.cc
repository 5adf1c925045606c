// kimi-engine render: an OpenAI chat-completions request body (JSON on stdin) -> the Kimi K3
// prompt the server feeds the model, as text or (--ids) as token ids.
#include <algorithm>
#include <cstdio>

#include "kimi/chat_format.h"
#include "kimi/prompt_encoding.h"
#include "kimi/tokenizer.h"
#include "tools/command.h"
#include "tools/flags.h"
#include "tools/stdio_text.h"

namespace kimi::tools {
namespace {

const std::vector<FlagSpec>& RenderFlags() {
  static const std::vector<FlagSpec> flags = {
      {"tokenizer", true, "DIR  directory with tiktoken.model (and tokenizer_config.json)"},
      {"ids", false, "     print the prompt's token ids instead of its text"},
      {"help", false, "     this text"},
  };
  return flags;
}

}  // namespace

int RunRender(const Args& args) {
  const CommandLine line =
      ParseCommandLine("render", args, RenderFlags(),
                       "render --tokenizer DIR [--ids] < request.json\n"
                       "Prints the rendered prompt exactly (no newline added). With --ids prints its token ids on\n"
                       "one line and, on stderr, `prompt_tokens N (M ids with the K-token generation stub)`:\n"
                       "N is what usage.prompt_tokens reports.");
  if (!line.flags) return line.exit_status;
  const Flags& flags = *line.flags;
  auto dir = flags.Require("tokenizer");
  if (!dir.ok()) return FailUsage("render", dir.status());
  // Loaded before reading the request so that a bad directory fails the same way with or
  // without --ids.
  auto tokenizer = Tokenizer::LoadDirectory(*dir);
  if (!tokenizer.ok()) return FailInput("render", tokenizer.status());
  auto body = ReadAllStdin();
  if (!body.ok()) return FailInput("render", body.status());
  // ParseChatRequest parses as nlohmann::ordered_json: tool-call argument order is kept.
  auto request = ParseChatRequest(std::string_view(*body));
  if (!request.ok()) return FailInput("render", request.status());
  auto prompt = ChatFormat::Render(*request);
  if (!prompt.ok()) return FailInput("render", prompt.status());

  if (!flags.Has("ids")) {
    if (std::fwrite(prompt->text.data(), 1, prompt->text.size(), stdout) != prompt->text.size()) {
      return FailInput("render", Status::IOError("writing stdout failed"));
    }
    return kExitOk;
  }
  auto encoded = EncodePrompt(*tokenizer, *prompt);
  if (!encoded.ok()) return FailInput("render", encoded.status());
  const std::vector<int32_t>* ids = &encoded->ids;
  const size_t counted = encoded->prompt_tokens;
  std::printf("%s\n", FormatIdList(*ids).c_str());
  std::fprintf(stderr, "prompt_tokens %zu (%zu ids with the %zu-token generation stub)\n", counted, ids->size(),
               ids->size() - counted);
  return kExitOk;
}

}  // namespace kimi::tools
