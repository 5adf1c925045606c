// ChatFormat: renders an OpenAI chat-completions request into the Kimi K3 prompt text.
//
// The output is, byte for byte, what the reference template Kimi-K3.jinja renders for the
// same conversation (run in the Jinja environment Hugging Face transformers builds for chat
// templates), written natively: no template engine runs at serving time. docs/chat-format.md
// describes the format, the request fields that steer it and where this renderer is stricter
// than the template. Errors the template raises become Status::InvalidArgument naming the
// request field at fault.
//
// Request JSON must be parsed as nlohmann::ordered_json: the template writes a tool call's
// argument mapping in its key order, and ordered_json keeps it.
//
// Owns nothing between calls. Thread safety: all functions are pure and may be called from
// any thread concurrently.
#pragma once

#include <cstddef>
#include <functional>
#include <string>
#include <vector>
#include <string_view>

#include <nlohmann/json.hpp>

#include "kimi/output_parser.h"
#include "kimi/status.h"

namespace kimi {

// The request fields the K3 prompt depends on, taken from an OpenAI chat-completions body.
struct ChatRequest {
  // messages[]: kept as JSON because the template reads them loosely (any scalar is printed
  // the way Python's str() prints it, unknown roles and non-object entries are skipped).
  nlohmann::ordered_json messages = nlohmann::ordered_json::array();
  nlohmann::ordered_json tools;                            // null: no global tools
  bool has_tool_choice = false;
  nlohmann::ordered_json tool_choice;                      // "auto", "none", "required" or an object
  bool has_response_format = false;
  nlohmann::ordered_json response_format;                  // {"type": "json_object" | "json_schema", ...}
  bool add_generation_prompt = true;
  bool thinking = true;                                    // K3 default: thinking on
  nlohmann::ordered_json thinking_effort = "max";          // "low".."max", or null for no effort line
  // false: reasoning of assistant turns before the last user message is left out (the
  // current tool-calling turn keeps its reasoning). true is the template's own behaviour.
  bool preserve_thinking = true;
};

// Reads the fields above from a chat-completions body. Sources, first match wins:
//   thinking:          chat_template_kwargs.thinking (bool) | thinking (bool or {"type": "enabled"|"disabled"})
//   thinking_effort:   chat_template_kwargs.thinking_effort | thinking_effort | reasoning_effort
//   preserve_thinking: chat_template_kwargs.preserve_thinking | preserve_thinking
//   add_generation_prompt (bool, default true), tools, tool_choice, response_format, messages.
// Fails with InvalidArgument naming the field when a field has the wrong JSON type.
Result<ChatRequest> ParseChatRequest(const nlohmann::ordered_json& body);
// Same, from the body's text (parsed as ordered_json).
Result<ChatRequest> ParseChatRequest(std::string_view body_json);

// Every text of a chat request that the prompt prints from the caller: message content and
// text parts, `name`, `reasoning_content`/`reasoning`, a tool message's `tool`, tool calls'
// names and arguments (a JSON object text as its decoded keys and values), the tools declared
// globally or on a system message (every key and value: names, descriptions, parameter
// schemas) and `response_format` (its schema's keys and values); and the texts an upstream's
// template may print that K3's does not: a message's `id` and `tool_call_id`, a call's `id`
// and `type`, a named `tool_choice`. Numbers are handed over as
// the prompt prints them. `visit` may rewrite a text in place (a policy masking a value); the
// request then renders with the rewritten text. This is the one list of rendered fields,
// used by every policy that must see what the model reads: rendered_texts_test.cc holds it
// to what Render() writes. InvalidArgument, naming the field, for a request the renderer
// would refuse for its nesting.
using RenderedTextVisitor = std::function<void(std::string* text)>;
Status ForEachRenderedText(ChatRequest* request, const RenderedTextVisitor& visit);
// Every object key and every string and number of `value`, decoded, with the same rewriting
// rules (what a stored copy of a whole request holds). InvalidArgument when nested too deep.
Status ForEachText(nlohmann::ordered_json* value, const RenderedTextVisitor& visit);

// A rendered prompt. When add_generation_prompt was set, the text ends with the generation
// stub (see GenerationStub); usage.prompt_tokens counts the tokens of text_without_stub().
// A run of the rendered text that the template wrote as special-token markup.
struct MarkupSpan {
  size_t offset = 0;
  size_t size = 0;
};

struct RenderedPrompt {
  std::string text;
  size_t generation_stub_size = 0;  // bytes of the stub at the end of text, 0 without one
  // Where special tokens may be recognised when the text is tokenised: only here, so that a
  // user who types "<|open|>" gets ordinary text (EncodePrompt in kimi/prompt_encoding.h).
  std::vector<MarkupSpan> markup;

  std::string_view text_without_stub() const {
    return std::string_view(text).substr(0, text.size() - generation_stub_size);
  }
};

class ChatFormat {
 public:
  // "<|open|>think<|sep|>" when thinking, else "<|open|>response<|sep|>": the three tokens that
  // open the channel the model writes first. They follow the assistant message header.
  static std::string_view GenerationStub(bool thinking);

  // Where the model's output starts for this request, for OutputParserOptions::start: inside
  // the channel the stub opened, or before the assistant header without a generation prompt.
  static OutputStart OutputStartFor(const ChatRequest& request);

  // Renders the prompt. Errors: InvalidArgument for an unsupported thinking_effort, a tool
  // call that is not an object or has no function name, arguments that are neither an
  // object nor a JSON text, a tool message whose tool cannot be resolved, a message without
  // a role, content that is neither text, parts nor null.
  static Result<RenderedPrompt> Render(const ChatRequest& request);
  static Result<RenderedPrompt> Render(const nlohmann::ordered_json& body);
};

}  // namespace kimi
