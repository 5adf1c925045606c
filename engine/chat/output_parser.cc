// The parser-independent parts of output parsing: folding events, the whole-output parse,
// the registry of parsers by name, and a text splitter that stands in for a tokenizer.
#include "kimi/output_parser.h"

#include <map>
#include <mutex>
#include <utility>

#include "chat/k3_output_parser.h"

namespace kimi {

void FoldEvent(const OutputEvent& event, ParsedOutput* out) {
  switch (event.kind) {
    case OutputEventKind::kReasoning: out->reasoning += event.text; break;
    case OutputEventKind::kAnswer: out->answer += event.text; break;
    case OutputEventKind::kToolCallBegin: {
      ParsedToolCall call;
      call.name = event.tool_name;
      call.index = event.tool_index;
      out->tool_calls.push_back(std::move(call));
      break;
    }
    case OutputEventKind::kToolCallArguments:
    case OutputEventKind::kToolCallEnd:
      for (ParsedToolCall& call : out->tool_calls) {
        if (call.index != event.tool_index) continue;
        if (event.kind == OutputEventKind::kToolCallEnd) {
          call.finished = true;
        } else {
          call.arguments += event.text;
        }
      }
      break;
  }
}

ParsedOutput FoldEvents(std::span<const OutputEvent> events) {
  ParsedOutput out;
  for (const OutputEvent& event : events) FoldEvent(event, &out);
  return out;
}

ParsedOutput ParseOutput(OutputParser& parser, std::span<const GeneratedToken> tokens) {
  std::vector<OutputEvent> events;
  for (const GeneratedToken& token : tokens) parser.Feed(token, &events);
  parser.Finish(&events);
  return FoldEvents(events);
}

std::vector<OwnedToken> SplitAtSpecialTokens(std::string_view text, const SpecialTokenIds& ids,
                                             size_t max_piece_bytes) {
  const std::pair<std::string_view, int32_t> specials[] = {
      {"<|open|>", ids.open}, {"<|close|>", ids.close}, {"<|sep|>", ids.sep},
      {"<|end_of_msg|>", ids.end_of_message}, {"[EOS]", ids.eos}};
  std::vector<OwnedToken> tokens;
  std::string piece;
  auto flush_piece = [&] {
    if (!piece.empty()) tokens.push_back({-1, std::move(piece)});
    piece.clear();
  };
  size_t i = 0;
  while (i < text.size()) {
    bool matched = false;
    for (const auto& [special, id] : specials) {
      if (text.substr(i).starts_with(special)) {
        flush_piece();
        tokens.push_back({id, std::string(special)});
        i += special.size();
        matched = true;
        break;
      }
    }
    if (matched) continue;
    piece.push_back(text[i++]);
    if (max_piece_bytes != 0 && piece.size() >= max_piece_bytes) flush_piece();
  }
  flush_piece();
  return tokens;
}

std::vector<GeneratedToken> AsGeneratedTokens(const std::vector<OwnedToken>& tokens) {
  std::vector<GeneratedToken> out;
  out.reserve(tokens.size());
  for (const OwnedToken& token : tokens) out.push_back({token.id, token.text});
  return out;
}

namespace {

class Registry {
 public:
  Registry() { factories_["kimi_k3"] = chat::MakeK3OutputParser; }

  Result<std::unique_ptr<OutputParser>> Create(std::string_view name, const OutputParserOptions& options) {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = factories_.find(std::string(name));
    if (it == factories_.end()) {
      std::string known;
      for (const auto& entry : factories_) known += (known.empty() ? "" : ", ") + entry.first;
      return Status::NotFound("output parser \"" + std::string(name) + "\" is not registered (known: " + known + ")");
    }
    return it->second(options);
  }

  Status Register(std::string name, OutputParserFactory factory) {
    if (name.empty() || !factory) return Status::InvalidArgument("an output parser needs a name and a factory");
    std::lock_guard<std::mutex> lock(mu_);
    if (!factories_.emplace(name, std::move(factory)).second) {
      return Status::AlreadyExists("output parser \"" + name + "\" is already registered");
    }
    return Status::OK();
  }

  std::vector<std::string> Names() {
    std::lock_guard<std::mutex> lock(mu_);
    std::vector<std::string> names;
    for (const auto& entry : factories_) names.push_back(entry.first);
    return names;
  }

 private:
  std::mutex mu_;
  std::map<std::string, OutputParserFactory> factories_;  // guarded by mu_
};

Registry& GlobalRegistry() {
  static Registry* registry = new Registry();  // never destroyed: usable during shutdown
  return *registry;
}

}  // namespace

Result<std::unique_ptr<OutputParser>> OutputParserRegistry::Create(std::string_view name,
                                                                   const OutputParserOptions& options) {
  return GlobalRegistry().Create(name, options);
}

Status OutputParserRegistry::Register(std::string name, OutputParserFactory factory) {
  return GlobalRegistry().Register(std::move(name), std::move(factory));
}

std::vector<std::string> OutputParserRegistry::Names() { return GlobalRegistry().Names(); }

}  // namespace kimi
