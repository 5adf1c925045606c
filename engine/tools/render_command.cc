// kimi-engine render: an OpenAI chat-completions request body (JSON on stdin) -> the Kimi K3
// prompt the server feeds the model, as text or (--ids) as token ids.
#include <algorithm>
#include <cstdio>

#include "kimi/chat_format.h"
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
  auto flags = Flags::Parse(args, RenderFlags());
  if (!flags.ok()) return FailUsage("render", flags.status());
  if (flags->Has("help")) {
    std::printf(
        "usage: kimi-engine render --tokenizer DIR [--ids] < request.json\n"
        "Prints the rendered prompt exactly (no newline added). With --ids prints its token ids on\n"
        "one line and, on stderr, `prompt_tokens N (M ids with the K-token generation stub)`:\n"
        "N is what usage.prompt_tokens reports.\n%s",
        Flags::Usage(RenderFlags()).c_str());
    return kExitOk;
  }
  auto dir = flags->Require("tokenizer");
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

  if (!flags->Has("ids")) {
    if (std::fwrite(prompt->text.data(), 1, prompt->text.size(), stdout) != prompt->text.size()) {
      return FailInput("render", Status::IOError("writing stdout failed"));
    }
    return kExitOk;
  }
  // The rendered text is markup and content in one string, so special tokens are allowed
  // across all of it (see docs/chat-format.md, "Token ids").
  auto ids = tokenizer->Encode(prompt->text, /*allow_special=*/true);
  if (!ids.ok()) return FailInput("render", ids.status());
  auto counted = tokenizer->Encode(prompt->text_without_stub(), /*allow_special=*/true);
  if (!counted.ok()) return FailInput("render", counted.status());
  // The stub starts with a special token, so no BPE piece spans it: the prompt's ids are a
  // prefix of the full ids. Check rather than assume.
  if (counted->size() > ids->size() || !std::equal(counted->begin(), counted->end(), ids->begin())) {
    return FailInput("render", Status::Internal("prompt ids are not a prefix of the ids with the generation stub"));
  }
  std::printf("%s\n", FormatIdList(*ids).c_str());
  std::fprintf(stderr, "prompt_tokens %zu (%zu ids with the %zu-token generation stub)\n", counted->size(),
               ids->size(), ids->size() - counted->size());
  return kExitOk;
}

}  // namespace kimi::tools
