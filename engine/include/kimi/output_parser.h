// OutputParser: splits a model's generated tokens into typed events as they arrive.
//
// The events are the channels an OpenAI-shaped response needs: reasoning text, answer text,
// and tool calls (started with a name and an index, argument text, finished). Parsers are
// per model family and registered by name; OutputParserRegistry::Create("kimi_k3") gives the
// Kimi K3 parser (docs/chat-format.md describes its grammar and its event model). Special
// tokens are recognised by id only, so text that merely spells "<|open|>" stays text.
//
// Every text an event carries is valid UTF-8 made of whole characters: bytes of a character
// split across tokens are held back until the character is complete.
//
// Thread safety: an OutputParser instance belongs to one generation stream and must not be
// used from two threads at once. The registry's functions may be called from any thread.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "kimi/status.h"

namespace kimi {

// Ids of the special tokens that structure the K3 format. K3() is the K3 tokenizer's table;
// a demo vocabulary passes its own ids.
struct SpecialTokenIds {
  int32_t eos = 163585;             // [EOS]
  int32_t end_of_message = 163586;  // <|end_of_msg|>
  int32_t open = 163587;            // <|open|>
  int32_t close = 163588;           // <|close|>
  int32_t sep = 163589;             // <|sep|>

  static SpecialTokenIds K3() { return SpecialTokenIds{}; }
};

// One generated token: its id and its detokenised bytes (possibly part of a UTF-8 character).
struct GeneratedToken {
  int32_t id = -1;
  std::string_view text;
};

enum class OutputEventKind {
  kReasoning,          // text: reasoning (thinking channel)
  kAnswer,             // text: answer (response channel, or malformed output degraded to text)
  kToolCallBegin,      // tool_name, tool_index
  kToolCallArguments,  // tool_index, text: the next piece of the call's arguments JSON object
  kToolCallEnd,        // tool_name, tool_index; the arguments text is complete
};

struct OutputEvent {
  OutputEventKind kind = OutputEventKind::kAnswer;
  std::string text;
  std::string tool_name;
  int tool_index = -1;  // 0-based position of the call in this output

  bool operator==(const OutputEvent&) const = default;
};

// Where generation starts: after the "think" or "response" generation stub of the prompt
// (ChatFormat::GenerationStub), or before the assistant message header.
enum class OutputStart { kThinkChannel, kResponseChannel, kBeforeMessage };

struct OutputParserOptions {
  SpecialTokenIds special_ids;
  OutputStart start = OutputStart::kThinkChannel;
};

class OutputParser {
 public:
  virtual ~OutputParser() = default;

  // Consumes one token and appends the events it completes to *events. Never fails:
  // malformed output becomes answer text and a logged warning.
  virtual void Feed(const GeneratedToken& token, std::vector<OutputEvent>* events) = 0;
  // Generation stopped: flushes held-back bytes and ends a tool call left open.
  // Preconditions: called once, after the last Feed.
  virtual void Finish(std::vector<OutputEvent>* events) = 0;
  // True once the end of the assistant message (<|end_of_msg|>, [EOS]) was seen.
  virtual bool done() const = 0;
  // Warnings raised so far (each was also logged).
  virtual size_t warning_count() const = 0;
};

struct ParsedToolCall {
  std::string name;
  int index = -1;
  std::string arguments;  // one JSON object
  bool finished = false;  // its kToolCallEnd event was seen

  bool operator==(const ParsedToolCall&) const = default;
};

// The fold of an event stream.
struct ParsedOutput {
  std::string reasoning;
  std::string answer;
  std::vector<ParsedToolCall> tool_calls;

  bool operator==(const ParsedOutput&) const = default;
};

// Adds one event to a fold.
void FoldEvent(const OutputEvent& event, ParsedOutput* out);
ParsedOutput FoldEvents(std::span<const OutputEvent> events);

// Whole-output parse: feeds every token, finishes the parser and folds the events; defined
// as exactly that fold, so streaming and whole-output parsing cannot disagree.
// Preconditions: `parser` is fresh (nothing fed yet).
ParsedOutput ParseOutput(OutputParser& parser, std::span<const GeneratedToken> tokens);

// A token with owned text, for callers that build token lists from text (tests, tools).
struct OwnedToken {
  int32_t id = -1;
  std::string text;
};
// Splits K3-format text at the special tokens' texts (<|open|>, <|close|>, <|sep|>,
// <|end_of_msg|>, [EOS]), giving them their ids; the text between becomes pieces of at most
// max_piece_bytes bytes (0: unlimited) with id -1. Stands in for a tokenizer in tests.
std::vector<OwnedToken> SplitAtSpecialTokens(std::string_view text, const SpecialTokenIds& ids,
                                             size_t max_piece_bytes = 0);
std::vector<GeneratedToken> AsGeneratedTokens(const std::vector<OwnedToken>& tokens);

using OutputParserFactory = std::function<std::unique_ptr<OutputParser>(const OutputParserOptions&)>;

// Parsers by name. "kimi_k3" is registered from the start.
class OutputParserRegistry {
 public:
  // NotFound (listing the registered names) for an unknown name.
  static Result<std::unique_ptr<OutputParser>> Create(std::string_view name,
                                                      const OutputParserOptions& options = {});
  // AlreadyExists when the name is taken; InvalidArgument for an empty name or factory.
  static Status Register(std::string name, OutputParserFactory factory);
  static std::vector<std::string> Names();
};

}  // namespace kimi
