// The K3 prompt renderer. Each function mirrors one macro of Kimi-K3.jinja; comments name
// the template rule where the behaviour is not obvious from the output format.
#include "kimi/chat_format.h"

#include <algorithm>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "chat/prompt_work_count.h"
#include "kimi/log.h"
#include "kimi/python_text.h"

namespace kimi {
namespace {

using chat::Json;
using chat::PythonStr;
using chat::PythonTruthy;

constexpr std::string_view kOpen = "<|open|>";
constexpr std::string_view kClose = "<|close|>";
constexpr std::string_view kSep = "<|sep|>";
constexpr std::string_view kEndOfMessage = "<|end_of_msg|>";
constexpr std::string_view kImagePlaceholder = "<|kimi_image_placeholder|>";
constexpr std::string_view kThinkStub = "<|open|>think<|sep|>";
constexpr std::string_view kResponseStub = "<|open|>response<|sep|>";

constexpr std::string_view kStaticToolsPreamble =
    "# Tools\nHere are the available tools, described in JSONSchema.\n\n```json\n";
constexpr std::string_view kDynamicToolsPreamble =
    "## New Tools Available\nThe system dynamically extends the toolset via lazy-loading.\n"
    "You have access to all existing and extended tools.\nHere are the specs for the extended tools.\n\n```json\n";
constexpr std::string_view kRawJsonRule =
    "Your response must be raw JSON data without markdown code blocks (```json) or any additional formatting.";

// dict.get(key): the value, or nullptr for a missing key (Python's None is a JSON null).
const Json* Get(const Json& object, std::string_view key) {
  if (!object.is_object()) return nullptr;
  auto it = object.find(key);
  return it == object.end() ? nullptr : &*it;
}

bool IsNone(const Json* value) { return value == nullptr || value->is_null(); }

bool RoleIs(const Json& message, std::string_view role) {
  const Json* r = Get(message, "role");
  return r != nullptr && r->is_string() && r->get_ref<const std::string&>() == role;
}

// tool_call.function when it is a mapping, else the call itself (flat calls).
const Json& FunctionOf(const Json& tool_call) {
  const Json* fn = Get(tool_call, "function");
  return (fn != nullptr && fn->is_object()) ? *fn : tool_call;
}

// message.get('tool_call_id', message.get('id')).
const Json* ResultIdOf(const Json& message) {
  if (const Json* id = Get(message, "tool_call_id")) return id;
  return Get(message, "id");
}

std::string Path(size_t message_index) { return "messages[" + std::to_string(message_index) + "]"; }

class Renderer {
 public:
  explicit Renderer(const ChatRequest& request) : request_(request) {}

  Result<RenderedPrompt> Run() {
    const bool thinking = request_.thinking;
    const Json& effort = request_.thinking_effort;
    const bool effort_known = effort.is_string() && IsKnownEffort(effort.get_ref<const std::string&>());
    if (thinking && !effort.is_null() && !effort_known) {
      return Status::InvalidArgument("thinking_effort: unsupported value " + PythonStr(effort) +
                                     "; supported values are low, medium, high and max");
    }
    if (PythonTruthy(request_.tools)) ToolDeclare(request_.tools, /*dynamic=*/false);
    if (thinking && effort_known) {
      InternalSystemMessage(
          "thinking-effort",
          "`thinking_effort` guides on how much to think in your thinking channel (not including the response "
          "channel), supported values include `low`, `medium`, `high`, and `max`.\nNow the system is invoked "
          "with `thinking_effort=" + effort.get<std::string>() + "`.");
    }

    const Json& messages = request_.messages;
    last_user_index_ = -1;
    for (size_t i = 0; i < messages.size(); ++i) {
      if (RoleIs(messages[i], "user")) last_user_index_ = static_cast<int64_t>(i);
    }
    for (size_t i = 0; i < messages.size(); ++i) {
      KIMI_RETURN_IF_ERROR(Message(i));
    }

    if (request_.has_tool_choice && request_.tool_choice.is_string()) {
      const auto& choice = request_.tool_choice.get_ref<const std::string&>();
      if (choice == "required") {
        InternalSystemMessage("tool-choice",
                              "The system is invoked with `tool_choice=required`.\nYou MUST call tools in the next message.");
      } else if (choice == "none") {
        InternalSystemMessage("tool-choice",
                              "The system is invoked with `tool_choice=none`.\nYou MUST NOT call any tools in the next message.");
      }
    }
    ResponseFormat();

    RenderedPrompt prompt;
    if (request_.add_generation_prompt) {
      OpenTag("message", {{"role", "assistant"}});
      const std::string_view stub = ChatFormat::GenerationStub(thinking);
      AppendMarkup(stub);
      prompt.generation_stub_size = stub.size();
    }
    prompt.text = std::move(out_);
    prompt.markup = std::move(markup_);
    return prompt;
  }

 private:
  using Attrs = std::vector<std::pair<std::string_view, std::string>>;

  // Special-token text the template itself writes; everything else (content, names, schemas)
  // must tokenise as ordinary text even when it spells a special token.
  void AppendMarkup(std::string_view special) {
    markup_.push_back({out_.size(), special.size()});
    out_.append(special);
  }

  static bool IsKnownEffort(const std::string& e) {
    return e == "low" || e == "medium" || e == "high" || e == "max";
  }

  // open_tag: attribute values escape only & and ", in that order.
  void OpenTag(std::string_view tag, const Attrs& attrs = {}) {
    AppendMarkup(kOpen);
    out_.append(tag);
    for (const auto& [key, value] : attrs) {
      out_.push_back(' ');
      out_.append(key).append("=\"");
      for (char c : value) {
        if (c == '&') {
          out_.append("&amp;");
        } else if (c == '"') {
          out_.append("&quot;");
        } else {
          out_.push_back(c);
        }
      }
      out_.push_back('"');
    }
    AppendMarkup(kSep);
  }

  void CloseTag(std::string_view tag) {
    AppendMarkup(kClose);
    out_.append(tag);
    AppendMarkup(kSep);
  }

  void EndMessage() {
    CloseTag("message");
    AppendMarkup(kEndOfMessage);
  }

  void InternalSystemMessage(std::string_view type, std::string_view body) {
    OpenTag("message", {{"role", "system"}, {"type", std::string(type)}});
    out_.append(chat::PythonStrip(body));
    EndMessage();
  }

  void ToolDeclare(const Json& tools, bool dynamic) {
    OpenTag("message", {{"role", "system"}, {"type", "tool-declare"}});
    out_.append(dynamic ? kDynamicToolsPreamble : kStaticToolsPreamble);
    out_.append(chat::SortedCompactJson(tools));
    out_.append("\n```");
    EndMessage();
  }

  // render_content: text, a list of parts (images become placeholders, other parts print
  // part.text), or nothing for null. A mapping iterates its keys, which print nothing.
  Status Content(const Json* content, const std::string& field) {
    if (IsNone(content) || content->is_object()) return Status::OK();
    if (content->is_string()) {
      out_.append(content->get_ref<const std::string&>());
      return Status::OK();
    }
    if (!content->is_array()) {
      return Status::InvalidArgument(field + ": content must be a string, an array of parts or null");
    }
    for (const Json& part : *content) {
      const Json* type = Get(part, "type");
      if (type != nullptr && type->is_string() &&
          (type->get_ref<const std::string&>() == "image" || type->get_ref<const std::string&>() == "image_url")) {
        AppendMarkup(kImagePlaceholder);
      } else if (const Json* text = Get(part, "text")) {
        out_.append(PythonStr(*text));
      }
    }
    return Status::OK();
  }

  void NameAttr(const Json& message, Attrs* attrs) {
    const Json* name = Get(message, "name");
    if (name != nullptr && PythonTruthy(*name)) attrs->emplace_back("name", PythonStr(*name));
  }

  Status Message(size_t index) {
    const Json& message = request_.messages[index];
    if (!message.is_object()) return Status::OK();  // the template skips non-mappings
    if (!message.contains("role")) return Status::InvalidArgument(Path(index) + ": a message needs a role");
    const Json* tools = Get(message, "tools");
    // OpenAI's `developer` role is the system role of its newer models; K3's template knows only
    // `system`, so a developer message is written exactly as a system message.
    const bool system = RoleIs(message, "system") || RoleIs(message, "developer");
    const bool declares_tools = system && tools != nullptr && PythonTruthy(*tools);
    if (RoleIs(message, "user") || (system && !declares_tools)) {
      Attrs attrs = {{"role", system ? "system" : "user"}};
      NameAttr(message, &attrs);
      OpenTag("message", attrs);
      KIMI_RETURN_IF_ERROR(Content(Get(message, "content"), Path(index)));
      EndMessage();
      return Status::OK();
    }
    if (declares_tools) {  // a system message carrying tools: dynamic tool declaration
      ToolDeclare(*tools, /*dynamic=*/true);
      return Status::OK();
    }
    if (RoleIs(message, "assistant")) return Assistant(index);
    if (RoleIs(message, "tool")) {
      if (index > 0 && RoleIs(request_.messages[index - 1], "tool")) return Status::OK();  // rendered with its run
      return ToolRun(index);
    }
    log::Warn("chat format: message with an unknown role left out of the prompt",
              {{"field", Path(index) + ".role"}, {"role", PythonStr(message["role"])}});
    return Status::OK();
  }

  Status Assistant(size_t index) {
    const Json& message = request_.messages[index];
    const std::string field = Path(index);
    const Json* tool_calls = Get(message, "tool_calls");
    if (!IsNone(tool_calls) && !tool_calls->is_array()) {
      return Status::InvalidArgument(field + ".tool_calls: must be an array");
    }
    tool_calls_ = IsNone(tool_calls) ? nullptr : tool_calls;
    tool_index_ = 0;
    call_index_.clear();
    call_index_built_ = false;

    Attrs attrs = {{"role", "assistant"}};
    NameAttr(message, &attrs);
    OpenTag("message", attrs);
    if (request_.thinking) {
      OpenTag("think");
      const bool keep = request_.preserve_thinking || static_cast<int64_t>(index) > last_user_index_;
      const Json* reasoning = Get(message, "reasoning_content");
      if (reasoning == nullptr || !PythonTruthy(*reasoning)) reasoning = Get(message, "reasoning");
      if (keep && !IsNone(reasoning)) {
        std::string text = PythonStr(*reasoning);
        if (!chat::PythonStrip(text).empty()) out_.append(text);
      }
      CloseTag("think");
    }
    OpenTag("response");
    KIMI_RETURN_IF_ERROR(Content(Get(message, "content"), field));
    CloseTag("response");
    if (tool_calls_ != nullptr && !tool_calls_->empty()) {
      OpenTag("tools");
      for (size_t j = 0; j < tool_calls_->size(); ++j) {
        KIMI_RETURN_IF_ERROR(ToolCall((*tool_calls_)[j], j, field + ".tool_calls[" + std::to_string(j) + "]"));
      }
      CloseTag("tools");
    }
    EndMessage();
    return Status::OK();
  }

  Status ToolCall(const Json& call, size_t j, const std::string& field) {
    if (!call.is_object()) return Status::InvalidArgument(field + ": a tool call must be an object");
    const Json& fn = FunctionOf(call);
    const std::string fn_field = (&fn == &call) ? field : field + ".function";
    const Json* name = Get(fn, "name");
    if (IsNone(name)) return Status::InvalidArgument(fn_field + ".name: a tool call needs a function name");
    OpenTag("call", {{"tool", PythonStr(*name)}, {"index", std::to_string(j + 1)}});
    // Arguments are normalised as Kimi's published encoder does before rendering
    // (encoding_k3.normalize_tool_arguments): a JSON object text renders as typed `argument`
    // elements exactly like a mapping, and only text that does not parse as JSON is kept
    // verbatim in a `json` block. That block is the encoder's own derived field
    // (`_xtml_json_block`), so a request cannot supply it. One known gap: Python's json.loads
    // also accepts NaN and Infinity, which nlohmann refuses; such text stays a `json` block.
    if (const Json* arguments = Get(fn, "arguments"); !IsNone(arguments)) {
      KIMI_RETURN_IF_ERROR(CallArguments(*arguments, fn_field));
    }
    CloseTag("call");
    return Status::OK();
  }

  // A call's arguments: a mapping, or a JSON object text (rendered alike), or text that is not
  // JSON at all (kept verbatim); whitespace-only text renders as no arguments.
  Status CallArguments(const Json& arguments, const std::string& fn_field) {
    if (arguments.is_object()) {
      ArgumentElements(arguments);
      return Status::OK();
    }
    if (!arguments.is_string()) {
      return Status::InvalidArgument(fn_field + ".arguments: must be an object or a JSON object text");
    }
    const auto& text = arguments.get_ref<const std::string&>();
    if (chat::PythonStrip(text).empty()) return Status::OK();
    const Json parsed = Json::parse(text, nullptr, /*allow_exceptions=*/false);
    if (parsed.is_discarded()) {
      OpenTag("json", {{"type", "object"}});
      out_.append(text);
      CloseTag("json");
      return Status::OK();
    }
    if (!parsed.is_object()) {
      return Status::InvalidArgument(fn_field + ".arguments: a JSON text of arguments must be an object");
    }
    if (!chat::NestingWithin(parsed, chat::kMaxNesting)) {
      return Status::InvalidArgument(fn_field + ".arguments: nested deeper than " +
                                     std::to_string(chat::kMaxNesting) + " levels");
    }
    ArgumentElements(parsed);
    return Status::OK();
  }

  // One typed `argument` element per key, in the mapping's order: a string value is written
  // raw, any other value as its json.dumps text.
  void ArgumentElements(const Json& arguments) {
    for (const auto& [key, value] : arguments.items()) {
      OpenTag("argument", {{"key", key}, {"type", XtmlType(value)}});
      out_.append(value.is_string() ? value.get<std::string>() : chat::PythonJsonDumps(value));
      CloseTag("argument");
    }
  }

  static std::string XtmlType(const Json& value) {
    if (value.is_boolean()) return "boolean";
    if (value.is_null()) return "null";
    if (value.is_number()) return "number";
    if (value.is_string()) return "string";
    if (value.is_object()) return "object";
    return "array";
  }

  // A run of consecutive tool messages. When every result names a call id of the latest
  // assistant turn, results are written in the order of that turn's calls; otherwise in
  // message order, each naming its tool itself or taking the call at its position.
  //
  // Ids match as Python's str() prints them (7 matches "7"). A result goes with the first call
  // of its id; results of one id keep their message order. The turn's ids are indexed once
  // (CallIndex), so a run costs one lookup per result whatever the number of calls or runs.
  Status ToolRun(size_t first) {
    const Json& messages = request_.messages;
    // (position of the result's call in the turn, message index), for the results in the run.
    std::vector<std::pair<size_t, size_t>> matched;
    size_t run_size = 0;
    bool all_resolved = true;
    for (size_t k = first; k < messages.size() && RoleIs(messages[k], "tool"); ++k) {
      ++run_size;
      if (!all_resolved) continue;
      const Json* call_id = ResultIdOf(messages[k]);
      if (IsNone(call_id) || tool_calls_ == nullptr) {
        all_resolved = false;
        continue;
      }
      const auto& index = CallIndex();
      const auto it = index.find(PythonStr(*call_id));
      if (it == index.end()) {
        all_resolved = false;
        continue;
      }
      matched.emplace_back(it->second, k);
    }
    if (run_size > 0 && all_resolved) {
      // Call order first, message order among the results of one call (k rises in `matched`).
      std::stable_sort(matched.begin(), matched.end(),
                       [](const auto& a, const auto& b) { return a.first < b.first; });
      for (const auto& [call, k] : matched) {
        KIMI_RETURN_IF_ERROR(ToolMessage(k, Get(FunctionOf((*tool_calls_)[call]), "name")));
      }
      return Status::OK();
    }
    for (size_t k = first; k < first + run_size; ++k) KIMI_RETURN_IF_ERROR(ToolMessage(k, nullptr));
    return Status::OK();
  }

  // The latest assistant turn's call ids (as str() prints them) -> the position of the first
  // call with that id; built on first use after each assistant turn. Precondition: tool_calls_.
  const std::unordered_map<std::string, size_t>& CallIndex() {
    if (call_index_built_) return call_index_;
    call_index_built_ = true;
    for (size_t j = 0; j < tool_calls_->size(); ++j) {
      const Json* id = Get((*tool_calls_)[j], "id");
      if (!IsNone(id)) call_index_.emplace(PythonStr(*id), j);
    }
    return call_index_;
  }

  Status ToolMessage(size_t index, const Json* resolved_name) {
    const Json& message = request_.messages[index];
    ++tool_index_;
    const Json* name = resolved_name;
    if (IsNone(name)) name = message.contains("tool") ? &message["tool"] : Get(message, "name");
    if (IsNone(name) && tool_calls_ != nullptr && tool_index_ <= tool_calls_->size()) {
      name = Get(FunctionOf((*tool_calls_)[tool_index_ - 1]), "name");
    }
    if (IsNone(name)) {
      return Status::InvalidArgument(
          Path(index) + ": the tool message's tool cannot be resolved; set tool_call_id to the id of a "
          "preceding assistant tool call, or name the tool in `name`");
    }
    OpenTag("message", {{"role", "tool"}, {"tool", PythonStr(*name)}, {"index", std::to_string(tool_index_)}});
    KIMI_RETURN_IF_ERROR(Content(Get(message, "content"), Path(index)));
    EndMessage();
    return Status::OK();
  }

  void ResponseFormat() {
    if (!request_.has_response_format) return;
    const Json& format = request_.response_format;
    Json schema;  // None unless a json_schema wrapper is given
    const Json* wrapper = Get(format, "json_schema");
    if (!IsNone(wrapper)) {
      if (wrapper->is_object() && wrapper->contains("schema")) {
        schema = (*wrapper)["schema"];
      } else if (wrapper->is_object() && wrapper->contains("json_schema")) {
        schema = (*wrapper)["json_schema"];
      } else {
        schema = *wrapper;
      }
    }
    const Json* type = format.is_object() ? Get(format, "type") : &format;
    if (type == nullptr || !type->is_string()) return;
    const auto& t = type->get_ref<const std::string&>();
    if (t == "json_object") {
      InternalSystemMessage("response-format",
                            "The system is invoked with `response_format=json_object`.\n" + std::string(kRawJsonRule));
    } else if (t == "json_schema") {
      InternalSystemMessage("response-format",
                            "The system is invoked with `response_format=json_schema`.\n" + std::string(kRawJsonRule) +
                                "\nThe JSON data must match the following schema:\n```json\n" +
                                chat::SortedCompactJson(schema) + "\n```");
    }
  }

  const ChatRequest& request_;
  std::string out_;
  std::vector<MarkupSpan> markup_;  // spans of out_ written as special-token text, in order
  const Json* tool_calls_ = nullptr;  // the latest assistant turn's tool_calls (template: state.tool_calls)
  size_t tool_index_ = 0;             // tool results written since that turn (state.tool_index)
  std::unordered_map<std::string, size_t> call_index_;  // see CallIndex()
  bool call_index_built_ = false;
  int64_t last_user_index_ = -1;
};

}  // namespace

std::string_view ChatFormat::GenerationStub(bool thinking) { return thinking ? kThinkStub : kResponseStub; }

OutputStart ChatFormat::OutputStartFor(const ChatRequest& request) {
  if (!request.add_generation_prompt) return OutputStart::kBeforeMessage;
  return request.thinking ? OutputStart::kThinkChannel : OutputStart::kResponseChannel;
}

Result<RenderedPrompt> ChatFormat::Render(const ChatRequest& request) {
  if (!request.messages.is_array()) return Status::InvalidArgument("messages: must be an array of messages");
  for (const auto& [field, value] : {std::pair<const char*, const Json*>{"messages", &request.messages},
                                     {"tools", &request.tools}, {"response_format", &request.response_format}}) {
    if (!chat::NestingWithin(*value, chat::kMaxNesting)) {
      return Status::InvalidArgument(std::string(field) + ": nested deeper than " +
                                     std::to_string(chat::kMaxNesting) + " levels");
    }
  }
  chat::CountPromptRender();
  return Renderer(request).Run();
}

Result<RenderedPrompt> ChatFormat::Render(const nlohmann::ordered_json& body) {
  KIMI_ASSIGN_OR_RETURN(ChatRequest request, ParseChatRequest(body));
  return Render(request);
}

}  // namespace kimi
