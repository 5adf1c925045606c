// Structured output: token masks that keep generation inside a JSON Schema (OpenAI's
// response_format json_schema and json_object, and strict tools with tool_choice "required"),
// through the runtime's constrained-decoding hook (kimi::TokenConstraint).
//
//   auto vocabulary = StructuredVocabulary::Build(tokenizer);          // once per tokenizer
//   auto output = StructuredOutput::ForJsonSchema(schema_text, {vocabulary, ...});  // per request
//   if (!output.ok()) -> HTTP 400 with output.status().message() (names keyword and pointer)
//   request.constraint = (*output)->NewConstraint();
//
// A StructuredOutput is compiled once per schema and may be kept (keyed by the schema text)
// and shared: its mask cache then serves every request with that schema. Masks: see
// docs/structured-output.md.
//
// Owns: the compiled grammar, the vocabulary reference and the shared mask cache.
// Thread safety: StructuredVocabulary and StructuredOutput are immutable (the cache inside is
// locked) and may be shared across threads; each constraint NewConstraint() returns belongs to
// one request and is called from the scheduler thread only.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "kimi/runtime.h"
#include "kimi/status.h"
#include "kimi/tokenizer.h"

namespace kimi {

namespace structured {
struct Grammar;
class TokenTrie;
class MaskCache;
class MaskBudget;
}  // namespace structured

// The byte trie of a tokenizer's vocabulary and its K3 markup tokens. Build once, share.
class StructuredVocabulary {
 public:
  // The bytes of cached masks (about 20 KB each on K3's vocabulary) that all the schemas
  // compiled over one vocabulary may hold together, and that one schema may hold.
  static constexpr size_t kMaxCachedMaskBytes = size_t(256) << 20;
  static constexpr size_t kMaxCachedMaskBytesPerSchema = size_t(32) << 20;

  static Result<std::shared_ptr<const StructuredVocabulary>> Build(const Tokenizer& tokenizer,
                                                                   size_t max_cached_mask_bytes = kMaxCachedMaskBytes);
  const std::shared_ptr<const structured::TokenTrie>& trie() const { return trie_; }
  // Masks of grammar pieces every schema shares (free strings, numbers), computed once.
  const std::shared_ptr<structured::MaskCache>& shared_masks() const { return shared_masks_; }
  // What every mask cache over this vocabulary charges its masks to.
  const std::shared_ptr<structured::MaskBudget>& mask_budget() const { return mask_budget_; }
  // Bytes of masks cached now, and the most the caches may take before a new schema would find
  // no room for its own (a cache of compiled schemas starts over below that).
  size_t cached_mask_bytes() const;
  size_t cached_mask_room() const;

 private:
  std::shared_ptr<const structured::TokenTrie> trie_;
  std::shared_ptr<structured::MaskBudget> mask_budget_;
  std::shared_ptr<structured::MaskCache> shared_masks_;
};

struct StructuredOutputOptions {
  std::shared_ptr<const StructuredVocabulary> vocabulary;  // required

  // kBare: the output is the JSON value alone, then one of end_token_ids.
  // kK3: the output is K3's assistant turn, as the prompt's generation stub left it:
  //   thinking on:  REASONING (free) <|close|>think<|sep|><|open|>response<|sep|> ...
  //   thinking off: ... (generation starts inside the response channel)
  // then, for a json_schema / json_object: JSON <|close|>response<|sep|><|close|>message<|sep|>
  // and for tool calls: <|close|>response<|sep|><|open|>tools<|sep|> CALLS
  // <|close|>tools<|sep|><|close|>message<|sep|>; then <|end_of_msg|> (end_token_ids ignored).
  enum class Frame { kBare, kK3 } frame = Frame::kBare;
  bool thinking = false;          // kK3: generation starts in the think channel
  std::vector<int32_t> end_token_ids;  // kBare: allowed once the value is complete
};

// The most tools one ForRequiredToolCalls() takes (OpenAI's bound on `tools`): each adds its
// call markup to the grammar, once per allowed call.
inline constexpr size_t kMaxStrictTools = 128;

// A strict tool: its name and `parameters` schema as JSON text (empty: any JSON object), and
// where the request holds that schema ("tools[0].function.parameters"; empty: unknown), which
// starts the message of an error in it.
struct StrictTool {
  std::string name;
  std::string parameters_json;
  std::string parameters_path;
};

class StructuredOutput {
 public:
  // response_format {"type":"json_schema"}: the schema's JSON text. Errors: InvalidArgument
  // naming an unsupported keyword and its JSON pointer, or a schema that admits no value.
  static Result<std::shared_ptr<const StructuredOutput>> ForJsonSchema(std::string_view schema_json,
                                                                        const StructuredOutputOptions& options);
  // The bounds of docs/structured-output.md "Limits" that need no compiling (size, depth, enum
  // values, pattern length, $ref cycles that consume nothing and long $ref chains), for a
  // request check in front of any backend; every For*() here applies them too, and compiles
  // within a grammar-state, step and time budget. Errors: InvalidArgument naming the bound.
  static Status CheckSchemaLimits(std::string_view schema_json);
  // response_format {"type":"json_object"}: any JSON object.
  static Result<std::shared_ptr<const StructuredOutput>> ForJsonObject(const StructuredOutputOptions& options);
  // tool_choice "required" (or a named tool: pass only that one): between 1 and max_calls calls,
  // each `<|open|>call tool="NAME" index="i"<|sep|><|open|>json type="object"<|sep|>ARGS
  // <|close|>json<|sep|><|close|>call<|sep|>` with ARGS valid for that tool's parameters.
  // Requires options.frame == kK3. Errors: as ForJsonSchema, the message naming the tool.
  static Result<std::shared_ptr<const StructuredOutput>> ForRequiredToolCalls(std::span<const StrictTool> tools,
                                                                               int max_calls,
                                                                               const StructuredOutputOptions& options);

  // A fresh per-request constraint (state at the start of generation). It closes the output
  // (ends free reasoning, picks the shortest completions) as the request's max_tokens nears, so
  // a constrained output reaching max_tokens still ends complete when the budget allows any
  // complete output at all. A grammar the matcher stops following (too ambiguous, see
  // structured/matcher.h) fails the request with InvalidArgument starting "<request_field>: "
  // (the field the schema came from, as the API's `param` names it) when one is given.
  std::shared_ptr<TokenConstraint> NewConstraint(std::string request_field = "") const;

  size_t grammar_states() const;
  size_t cached_masks() const;
  size_t cached_mask_bytes() const;

  struct Parts;
  explicit StructuredOutput(std::shared_ptr<const Parts> parts) : parts_(std::move(parts)) {}

 private:
  std::shared_ptr<const Parts> parts_;
};

}  // namespace kimi
