#include "chat/k3_output_parser.h"

#include <string>
#include <utility>

#include <nlohmann/json.hpp>

#include "chat/k3_tag.h"
#include "chat/utf8_assembler.h"
#include "kimi/log.h"
#include "kimi/python_text.h"

namespace kimi::chat {
namespace {

// Longer than any tag the template writes (a tool name and an argument key included).
constexpr size_t kMaxTagHeaderBytes = 1024;

class K3OutputParser final : public OutputParser {
 public:
  explicit K3OutputParser(const OutputParserOptions& options) : ids_(options.special_ids) {
    switch (options.start) {
      case OutputStart::kThinkChannel: mode_ = Mode::kThink; break;
      case OutputStart::kResponseChannel: mode_ = Mode::kResponse; break;
      case OutputStart::kBeforeMessage: mode_ = Mode::kTop; break;
    }
  }

  void Feed(const GeneratedToken& token, std::vector<OutputEvent>* events) override {
    events_ = events;
    const int32_t id = token.id;
    if (id == ids_.open || id == ids_.close) {
      AbandonPendingTag();
      FlushText();
      pending_tag_ = (id == ids_.open) ? PendingTag::kOpen : PendingTag::kClose;
      tag_text_.clear();
    } else if (id == ids_.sep) {
      if (pending_tag_ == PendingTag::kNone) {
        FlushText();
        Warn("a <|sep|> outside a tag (dropped)");
      } else {
        const bool opening = pending_tag_ == PendingTag::kOpen;
        pending_tag_ = PendingTag::kNone;
        if (opening) {
          OpenTag();
        } else {
          CloseTag();
        }
      }
    } else if (id == ids_.end_of_message || id == ids_.eos) {
      AbandonPendingTag();
      FlushText();
      EndOfMessage();
    } else if (pending_tag_ != PendingTag::kNone) {
      tag_text_.append(token.text);
      if (tag_text_.size() > kMaxTagHeaderBytes) AbandonPendingTag();
    } else {
      Text(token.text);
    }
    events_ = nullptr;
  }

  void Finish(std::vector<OutputEvent>* events) override {
    events_ = events;
    AbandonPendingTag();
    FlushText();
    if (InCall()) {
      Warn("the output ended inside a tool call");
      EndCall();
    }
    events_ = nullptr;
  }

  bool done() const override { return mode_ == Mode::kDone; }
  size_t warning_count() const override { return warnings_; }

 private:
  enum class Mode { kTop, kThink, kResponse, kTools, kCall, kArgument, kJson, kDone };
  enum class PendingTag { kNone, kOpen, kClose };
  enum class ArgumentsForm { kNone, kArguments, kJsonBlock };

  bool InCall() const { return mode_ == Mode::kCall || mode_ == Mode::kArgument || mode_ == Mode::kJson; }

  void Warn(std::string_view what) {
    ++warnings_;
    log::Warn("kimi_k3 output parser: malformed model output", {{"problem", what}});
  }

  void Emit(OutputEventKind kind, std::string text) {
    if (text.empty() && (kind == OutputEventKind::kReasoning || kind == OutputEventKind::kAnswer ||
                         kind == OutputEventKind::kToolCallArguments)) {
      return;
    }
    OutputEvent event;
    event.kind = kind;
    event.text = std::move(text);
    if (kind == OutputEventKind::kToolCallBegin || kind == OutputEventKind::kToolCallEnd ||
        kind == OutputEventKind::kToolCallArguments) {
      event.tool_index = call_index_;
      if (kind != OutputEventKind::kToolCallArguments) event.tool_name = call_name_;
    }
    events_->push_back(std::move(event));
  }

  // Text bytes of the current channel: whole characters go out, a split one waits.
  void Text(std::string_view bytes) { Route(utf8_.Push(bytes)); }

  void FlushText() {
    const size_t before = utf8_.replacements();
    std::string rest = utf8_.Flush();
    if (utf8_.replacements() != before) Warn("a UTF-8 character cut off by a tag");
    Route(std::move(rest));
  }

  void Route(std::string text) {
    if (text.empty()) return;
    switch (mode_) {
      case Mode::kThink: Emit(OutputEventKind::kReasoning, std::move(text)); break;
      case Mode::kResponse: Emit(OutputEventKind::kAnswer, std::move(text)); break;
      case Mode::kArgument:
        if (argument_is_string_) {
          std::string escaped;
          AppendJsonEscaped(text, &escaped);
          Emit(OutputEventKind::kToolCallArguments, std::move(escaped));
        } else {
          argument_value_ += text;
        }
        break;
      case Mode::kJson:
        json_block_ += text;
        Emit(OutputEventKind::kToolCallArguments, std::move(text));
        break;
      case Mode::kDone:
        if (!stray_warned_) Warn("text after the end of the message (ignored)");
        stray_warned_ = true;
        break;
      case Mode::kTop:
      case Mode::kTools:
      case Mode::kCall:
        if (!stray_warned_) Warn("text outside any channel (kept as answer text)");
        stray_warned_ = true;
        Emit(OutputEventKind::kAnswer, std::move(text));
        break;
    }
  }

  // An <|open|> or <|close|> that no <|sep|> completes (another marker, the end, or
  // kMaxTagHeaderBytes came first) was not a tag: the control token is dropped and the bytes
  // after it are ordinary text of the current channel.
  void AbandonPendingTag() {
    if (pending_tag_ == PendingTag::kNone) return;
    pending_tag_ = PendingTag::kNone;
    Warn("a tag without its <|sep|> (marker dropped)");
    Text(tag_text_);
    tag_text_.clear();
  }

  // A whole tag the grammar does not allow here is markup, not text: it is dropped, so a
  // control token never reaches the client as content.
  void DropTag(std::string_view why) { Warn(why); }

  void OpenTag() {
    stray_warned_ = false;
    std::optional<K3TagHeader> tag = ParseK3TagHeader(tag_text_);
    if (!tag) return DropTag("a tag header that does not parse");
    const std::string& name = tag->name;
    // A channel opening while the previous one is still open closes it.
    if ((name == "response" || name == "tools") && mode_ == Mode::kThink) {
      Warn("the think channel was not closed");
      mode_ = Mode::kTop;
    }
    if (name == "tools" && mode_ == Mode::kResponse) {
      Warn("the response channel was not closed");
      mode_ = Mode::kTop;
    }
    if (mode_ == Mode::kTop) {
      if (name == "message" && !seen_channel_) return;  // the assistant header, when not in the prompt
      if (name == "think") return Enter(Mode::kThink);
      if (name == "response") return Enter(Mode::kResponse);
      if (name == "tools") return Enter(Mode::kTools);
    } else if (mode_ == Mode::kTools && name == "call") {
      const std::string* tool = tag->Find("tool");
      if (tool == nullptr || tool->empty()) return DropTag("a tool call without a tool name");
      return BeginCall(*tool);
    } else if (mode_ == Mode::kCall && name == "argument" && form_ != ArgumentsForm::kJsonBlock) {
      const std::string* key = tag->Find("key");
      const std::string* type = tag->Find("type");
      if (key == nullptr || type == nullptr) return DropTag("an argument without key or type");
      return BeginArgument(*key, *type);
    } else if (mode_ == Mode::kCall && name == "json" && form_ == ArgumentsForm::kNone) {
      form_ = ArgumentsForm::kJsonBlock;
      mode_ = Mode::kJson;
      return;
    }
    DropTag("a tag that does not belong here (dropped)");
  }

  void Enter(Mode mode) {
    seen_channel_ = true;
    mode_ = mode;
  }

  void CloseTag() {
    stray_warned_ = false;
    const std::string& name = tag_text_;
    if (mode_ == Mode::kThink && name == "think") return Enter(Mode::kTop);
    if (mode_ == Mode::kResponse && name == "response") return Enter(Mode::kTop);
    if (mode_ == Mode::kTools && name == "tools") return Enter(Mode::kTop);
    if (mode_ == Mode::kArgument && name == "argument") return EndArgument();
    if (mode_ == Mode::kJson && name == "json") {
      mode_ = Mode::kCall;
      return;
    }
    if (mode_ == Mode::kCall && name == "call") return EndCall();
    if (name == "message" && mode_ != Mode::kDone) {
      if (mode_ != Mode::kTop) Warn("the message ended with a channel still open");
      if (InCall()) EndCall();
      mode_ = Mode::kDone;
      return;
    }
    DropTag("a closing tag that does not match the open one (dropped)");
  }

  void EndOfMessage() {
    if (InCall()) {
      Warn("the message ended inside a tool call");
      EndCall();
    }
    mode_ = Mode::kDone;
  }

  void BeginCall(const std::string& name) {
    Utf8Assembler assembler;
    call_name_ = assembler.Push(name) + assembler.Flush();
    form_ = ArgumentsForm::kNone;
    json_block_.clear();
    mode_ = Mode::kCall;
    Emit(OutputEventKind::kToolCallBegin, {});
  }

  void BeginArgument(const std::string& key, const std::string& type) {
    std::string prefix(form_ == ArgumentsForm::kNone ? "{" : ",");
    form_ = ArgumentsForm::kArguments;
    Utf8Assembler assembler;
    prefix.push_back('"');
    AppendJsonEscaped(assembler.Push(key) + assembler.Flush(), &prefix);
    prefix.append("\":");
    argument_is_string_ = type == "string";
    argument_value_.clear();
    if (argument_is_string_) prefix.push_back('"');
    mode_ = Mode::kArgument;
    Emit(OutputEventKind::kToolCallArguments, std::move(prefix));
  }

  // Non-string values arrive as JSON text; one that does not parse is kept as a string.
  void EndArgument() {
    mode_ = Mode::kCall;
    if (argument_is_string_) return Emit(OutputEventKind::kToolCallArguments, "\"");
    const nlohmann::json value = nlohmann::json::parse(argument_value_, nullptr, /*allow_exceptions=*/false);
    if (!value.is_discarded()) return Emit(OutputEventKind::kToolCallArguments, argument_value_);
    Warn("an argument value that is not valid JSON (kept as a string)");
    std::string quoted = "\"";
    AppendJsonEscaped(argument_value_, &quoted);
    quoted.push_back('"');
    Emit(OutputEventKind::kToolCallArguments, std::move(quoted));
  }

  void EndCall() {
    if (mode_ == Mode::kArgument) EndArgument();
    if (form_ == ArgumentsForm::kArguments) Emit(OutputEventKind::kToolCallArguments, "}");
    if (form_ == ArgumentsForm::kNone) Emit(OutputEventKind::kToolCallArguments, "{}");
    if (form_ == ArgumentsForm::kJsonBlock) {
      const nlohmann::json value = nlohmann::json::parse(json_block_, nullptr, /*allow_exceptions=*/false);
      if (value.is_discarded() || !value.is_object()) Warn("a json arguments block that is not a JSON object");
    }
    Emit(OutputEventKind::kToolCallEnd, {});
    ++call_index_;
    mode_ = Mode::kTools;
  }

  const SpecialTokenIds ids_;
  std::vector<OutputEvent>* events_ = nullptr;  // the caller's event list during one call
  Mode mode_ = Mode::kThink;
  bool seen_channel_ = false;
  bool stray_warned_ = false;  // one warning per run of stray text
  PendingTag pending_tag_ = PendingTag::kNone;
  std::string tag_text_;  // bytes between <|open|>/<|close|> and <|sep|>
  Utf8Assembler utf8_;
  // The current tool call.
  int call_index_ = 0;
  std::string call_name_;
  ArgumentsForm form_ = ArgumentsForm::kNone;
  bool argument_is_string_ = false;
  std::string argument_value_;  // a non-string argument's JSON text, checked at its end
  std::string json_block_;      // a json block's text, checked at the call's end
  size_t warnings_ = 0;
};

}  // namespace

std::unique_ptr<OutputParser> MakeK3OutputParser(const OutputParserOptions& options) {
  return std::make_unique<K3OutputParser>(options);
}

}  // namespace kimi::chat
