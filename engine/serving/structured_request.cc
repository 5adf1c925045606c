#include "serving/structured_request.h"

#include <vector>

namespace kimi::serving {
namespace {

using Json = nlohmann::ordered_json;

// Bounds (structured_request.h) keeps at most 256 compiled schemas (past it the cache starts
// over; schemas repeat in practice: an agent sends the same tools with every turn), 2,000,000
// grammar states among them (one schema may compile to 200,000, CompileBudget::max_states, and
// 256 of those would hold gigabytes), and 16 MiB of the texts they are keyed by.
// Calls a required tool choice may make when parallel_tool_calls is true.
constexpr int kMaxParallelCalls = 4;

// The function tools of a request: global `tools` and the dynamic tools of system messages,
// each with the request path of its parameters, so that an error in one names it (`param`).
std::vector<StrictTool> DeclaredTools(const ChatRequest& request) {
  std::vector<StrictTool> tools;
  auto add = [&tools](const Json& list, const std::string& list_path) {
    if (!list.is_array()) return;
    for (size_t i = 0; i < list.size(); ++i) {
      const Json& tool = list[i];
      if (!tool.is_object() || !tool.contains("function") || !tool["function"].is_object()) continue;
      const Json& function = tool["function"];
      StrictTool strict;
      strict.name = function.value("name", "");
      if (function.contains("parameters") && !function["parameters"].is_null()) {
        strict.parameters_json = function["parameters"].dump();
        strict.parameters_path = list_path + "[" + std::to_string(i) + "].function.parameters";
      }
      tools.push_back(std::move(strict));
    }
  };
  add(request.tools, "tools");
  if (request.messages.is_array()) {
    for (size_t m = 0; m < request.messages.size(); ++m) {
      const Json& message = request.messages[m];
      if (message.is_object() && message.value("role", "") == "system" && message.contains("tools")) {
        add(message["tools"], "messages[" + std::to_string(m) + "].tools");
      }
    }
  }
  return tools;
}

}  // namespace

StructuredRequests::StructuredRequests(std::shared_ptr<const StructuredVocabulary> vocabulary, Bounds bounds)
    : vocabulary_(std::move(vocabulary)), bounds_(bounds) {}

StructuredRequests::Compiled StructuredRequests::Cached(const std::string& key,
                                                        const std::function<Compiled()>& compile) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (auto it = compiled_.find(key); it != compiled_.end()) return it->second;
    if (auto it = refused_.find(key); it != refused_.end()) return it->second;
  }
  // Compiled outside the lock: a slow schema must not hold up requests with cached ones.
  Compiled compiled = compile();
  std::lock_guard<std::mutex> lock(mu_);
  if (!compiled.ok()) {
    if (compiled.status().code() == Status::Code::kInvalidArgument) RememberRefusal(key, compiled.status());
    return compiled;
  }
  Keep(key, *compiled);
  return compiled;
}

void StructuredRequests::Keep(const std::string& key, const std::shared_ptr<const StructuredOutput>& output) {
  const size_t states = output->grammar_states();
  // Compiled for this request alone: kept, it would pass a bound by itself.
  if (bounds_.compiled == 0 || key.size() > bounds_.key_bytes / 16 || states > bounds_.states) return;
  // When the kept schemas' masks leave a new schema no room for its own, the kept ones go (their
  // masks with them, once no request runs them).
  const bool masks_full = vocabulary_->cached_mask_room() < StructuredVocabulary::kMaxCachedMaskBytesPerSchema;
  if (compiled_.size() >= bounds_.compiled || compiled_states_ + states > bounds_.states ||
      compiled_key_bytes_ + key.size() > bounds_.key_bytes || masks_full) {
    compiled_.clear();
    compiled_states_ = 0;
    compiled_key_bytes_ = 0;
  }
  if (compiled_.emplace(key, output).second) {
    compiled_states_ += states;
    compiled_key_bytes_ += key.size();
  }
}

void StructuredRequests::RememberRefusal(const std::string& key, const Status& status) {
  const size_t bytes = key.size() + status.message().size();
  if (bounds_.refusals == 0 || bytes > bounds_.refusal_bytes / 16) return;
  if (refused_.size() >= bounds_.refusals || refused_bytes_ + bytes > bounds_.refusal_bytes) {
    refused_.clear();
    refused_bytes_ = 0;
  }
  if (refused_.emplace(key, status).second) refused_bytes_ += bytes;
}

size_t StructuredRequests::kept() const {
  std::lock_guard<std::mutex> lock(mu_);
  return compiled_.size();
}

size_t StructuredRequests::kept_states() const {
  std::lock_guard<std::mutex> lock(mu_);
  return compiled_states_;
}

size_t StructuredRequests::refusals_kept() const {
  std::lock_guard<std::mutex> lock(mu_);
  return refused_.size();
}

Result<std::shared_ptr<TokenConstraint>> StructuredRequests::ConstraintFor(const ServingRequest& serving) {
  const ChatRequest& request = serving.chat;
  StructuredOutputOptions options;
  options.vocabulary = vocabulary_;
  options.frame = StructuredOutputOptions::Frame::kK3;
  options.thinking = ChatFormat::OutputStartFor(request) == OutputStart::kThinkChannel;
  const std::string frame_key = options.thinking ? "think\n" : "answer\n";

  std::shared_ptr<const StructuredOutput> output;
  std::string field;  // the request field the grammar comes from
  const Json& format = request.response_format;
  const std::string format_type =
      request.has_response_format && format.is_object() ? format.value("type", "") : std::string();
  if (format_type == "json_schema") {
    const Json& spec = format.contains("json_schema") ? format["json_schema"] : Json();
    if (!spec.is_object() || !spec.contains("schema")) {
      return Status::InvalidArgument("response_format.json_schema.schema is required");
    }
    const std::string schema = spec["schema"].dump();
    Compiled compiled = Cached("schema\n" + frame_key + schema, [&] { return StructuredOutput::ForJsonSchema(schema, options); });
    // The message starts with the request field, as the API's request rules write theirs, so
    // the error's `param` names it.
    if (!compiled.ok() && compiled.status().code() == Status::Code::kInvalidArgument) {
      return Status::InvalidArgument("response_format.json_schema.schema " + compiled.status().message());
    }
    KIMI_RETURN_IF_ERROR(compiled.status());
    output = *std::move(compiled);
    field = "response_format.json_schema.schema";
  } else if (format_type == "json_object") {
    KIMI_ASSIGN_OR_RETURN(output, Cached("object\n" + frame_key,
                                         [&] { return StructuredOutput::ForJsonObject(options); }));
  } else if (request.has_tool_choice && request.tool_choice == "required") {
    const std::vector<StrictTool> tools = DeclaredTools(request);
    if (tools.empty()) return Status::InvalidArgument("tool_choice: \"required\" needs at least one tool");
    // One call unless the client asks for parallel calls explicitly: every further call a
    // constrained model may add is room taken from max_tokens.
    const int max_calls = serving.parallel_tool_calls ? kMaxParallelCalls : 1;
    std::string key = "tools\n" + frame_key + std::to_string(max_calls) + "\n";
    for (const StrictTool& tool : tools) key += tool.name + "\n" + tool.parameters_json + "\n";
    KIMI_ASSIGN_OR_RETURN(output, Cached(key, [&] {
                            return StructuredOutput::ForRequiredToolCalls(tools, max_calls, options);
                          }));
    // The tool whose parameters the output is held to, when there is one; else all of them.
    field = tools.size() == 1 && !tools[0].parameters_path.empty() ? tools[0].parameters_path : "tools";
  } else {
    return std::shared_ptr<TokenConstraint>();
  }
  return output->NewConstraint(field);
}

}  // namespace kimi::serving
