#include "kimi/structured_output.h"

#include <algorithm>
#include <chrono>
#include <limits>

#include "structured/grammar.h"
#include "structured/matcher.h"
#include "structured/schema_compiler.h"
#include "structured/schema_limits.h"
#include "structured/token_trie.h"

namespace kimi {

using structured::GrammarBuilder;
using structured::GrammarMatcher;
using structured::Json;
using structured::JsonValueRules;
using structured::SchemaCompiler;

struct StructuredOutput::Parts {
  std::shared_ptr<const structured::Grammar> grammar;
  std::shared_ptr<const structured::TokenTrie> trie;
  std::shared_ptr<structured::MaskCache> cache;
  std::vector<int32_t> end_tokens;
};

namespace {

// How long the schemas of one request may take to compile, all together (the step and state
// bounds of CompileBudget come first for any schema that is merely large).
constexpr std::chrono::milliseconds kCompileTimeLimit{2000};

structured::CompileBudget RequestBudget() {
  structured::CompileBudget budget;
  budget.deadline = std::chrono::steady_clock::now() + kCompileTimeLimit;
  return budget;
}

// The per-request constraint: the matcher advanced by the tokens generated since the last call.
class GrammarConstraint final : public TokenConstraint {
 public:
  GrammarConstraint(std::shared_ptr<const StructuredOutput::Parts> parts, std::string request_field)
      : parts_(parts),
        matcher_(parts->grammar, parts->trie, parts->cache, parts->end_tokens),
        request_field_(std::move(request_field)) {}

  Status FillMask(std::span<const int32_t> generated, int64_t tokens_left, TokenMask* mask) override {
    if (mask->vocab_size() != parts_->trie->vocab_size()) {
      return Status::InvalidArgument("a token mask of " + std::to_string(mask->vocab_size()) +
                                     " tokens for a structured-output vocabulary of " + std::to_string(parts_->trie->vocab_size()));
    }
    for (; consumed_ < generated.size(); ++consumed_) {
      if (!matcher_.status().ok()) break;
      KIMI_RETURN_IF_ERROR(matcher_.Advance(generated[consumed_]).WithContext("structured output"));
    }
    if (matcher_.status().ok()) {
      matcher_.AllowedTokens(&words_);
      matcher_.KeepCompletableWithin(tokens_left, &words_);
    }
    if (!matcher_.status().ok()) {
      return request_field_.empty() ? matcher_.status().WithContext("structured output")
                                    : matcher_.status().WithContext(request_field_);
    }
    mask->Intersect(words_);
    return Status::OK();
  }

 private:
  std::shared_ptr<const StructuredOutput::Parts> parts_;
  GrammarMatcher matcher_;
  std::string request_field_;
  size_t consumed_ = 0;
  std::vector<uint64_t> words_;
};

// Writes a sequence of markup pieces from one state to the next.
class Chain {
 public:
  Chain(GrammarBuilder* builder, int32_t rule, int32_t at) : b_(builder), rule_(rule), at_(at) {}
  Chain& Special(int32_t token) {
    const int32_t next = b_->NewState(rule_);
    b_->AddSpecial(at_, token, next);
    at_ = next;
    return *this;
  }
  Chain& Text(std::string_view text) {
    const int32_t next = b_->NewState(rule_);
    b_->AddLiteral(at_, text, next);
    at_ = next;
    return *this;
  }
  Chain& Call(int32_t rule) {
    const int32_t next = b_->NewState(rule_);
    b_->AddCall(at_, rule, next);
    at_ = next;
    return *this;
  }
  int32_t at() const { return at_; }

 private:
  GrammarBuilder* b_;
  int32_t rule_;
  int32_t at_;
};

struct Markup {
  int32_t open, close, sep, end_of_msg;
};

Result<Markup> K3Markup(const structured::TokenTrie& trie) {
  if (!trie.open || !trie.close || !trie.sep || !trie.end_of_msg) {
    return Status::FailedPrecondition("the tokenizer has no K3 markup tokens (<|open|>, <|close|>, <|sep|>, <|end_of_msg|>)");
  }
  return Markup{*trie.open, *trie.close, *trie.sep, *trie.end_of_msg};
}

// The reasoning (when thinking) and the opening of the response channel.
Chain OpenResponse(GrammarBuilder* b, int32_t rule, const Markup& m, const StructuredOutputOptions& options) {
  Chain chain(b, rule, b->RuleStart(rule));
  if (!options.thinking) return chain;
  structured::ByteSet any;
  any.AddRange(0, 255);
  const int32_t reasoning = b->NewRule("reasoning");
  const int32_t head = b->RuleStart(reasoning), end = b->NewState(reasoning);
  b->MarkEnd(end);
  b->AddBytes(head, any, head);
  b->AddEpsilon(head, end);
  chain.Call(reasoning).Special(m.close).Text("think").Special(m.sep).Special(m.open).Text("response").Special(m.sep);
  return chain;
}

Result<std::shared_ptr<const StructuredOutput>> Finish(GrammarBuilder* b, int32_t root, std::string_view what,
                                                       const StructuredOutputOptions& options, std::vector<int32_t> end_tokens) {
  KIMI_ASSIGN_OR_RETURN(std::shared_ptr<const structured::Grammar> grammar, b->Finish(root, what));
  auto parts = std::make_shared<StructuredOutput::Parts>();
  parts->grammar = std::move(grammar);
  parts->trie = options.vocabulary->trie();
  parts->cache = std::make_shared<structured::MaskCache>(options.vocabulary->shared_masks(), options.vocabulary->mask_budget(),
                                                         StructuredVocabulary::kMaxCachedMaskBytesPerSchema);
  parts->end_tokens = std::move(end_tokens);
  return std::make_shared<const StructuredOutput>(std::move(parts));
}

// A response_format answer: the value alone, or framed as K3's response channel.
Result<std::shared_ptr<const StructuredOutput>> ForValue(GrammarBuilder* b, int32_t value, std::string_view what,
                                                         const StructuredOutputOptions& options) {
  if (options.frame == StructuredOutputOptions::Frame::kBare) return Finish(b, value, what, options, options.end_token_ids);
  KIMI_ASSIGN_OR_RETURN(Markup m, K3Markup(*options.vocabulary->trie()));
  const int32_t turn = b->NewRule("k3 answer");
  Chain chain = OpenResponse(b, turn, m, options);
  chain.Call(value).Special(m.close).Text("response").Special(m.sep).Special(m.close).Text("message").Special(m.sep);
  b->MarkEnd(chain.at());
  return Finish(b, turn, what, options, {m.end_of_msg});
}

Status CheckOptions(const StructuredOutputOptions& options) {
  if (!options.vocabulary) return Status::InvalidArgument("structured output needs a vocabulary");
  return Status::OK();
}

Result<Json> ParseSchema(std::string_view text, std::string_view what) {
  Json schema = Json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (schema.is_discarded()) return Status::InvalidArgument(std::string(what) + " is not valid JSON");
  return schema;
}

std::string EscapeAttribute(std::string_view value) {
  std::string out;
  for (char c : value) {
    if (c == '&') {
      out += "&amp;";
    } else if (c == '"') {
      out += "&quot;";
    } else {
      out += c;
    }
  }
  return out;
}

}  // namespace

Result<std::shared_ptr<const StructuredVocabulary>> StructuredVocabulary::Build(const Tokenizer& tokenizer,
                                                                                size_t max_cached_mask_bytes) {
  auto vocabulary = std::make_shared<StructuredVocabulary>();
  KIMI_ASSIGN_OR_RETURN(vocabulary->trie_, structured::TokenTrie::Build(tokenizer));
  vocabulary->mask_budget_ = std::make_shared<structured::MaskBudget>(max_cached_mask_bytes);
  // Bounded by its entry count (kMaxSharedEntries) and the vocabulary's budget.
  vocabulary->shared_masks_ =
      std::make_shared<structured::MaskCache>(nullptr, vocabulary->mask_budget_, std::numeric_limits<size_t>::max());
  return std::shared_ptr<const StructuredVocabulary>(std::move(vocabulary));
}

size_t StructuredVocabulary::cached_mask_bytes() const { return mask_budget_->used(); }

size_t StructuredVocabulary::cached_mask_room() const {
  return mask_budget_->limit() - std::min(mask_budget_->used(), mask_budget_->limit());
}

Result<std::shared_ptr<const StructuredOutput>> StructuredOutput::ForJsonSchema(std::string_view schema_json,
                                                                               const StructuredOutputOptions& options) {
  KIMI_RETURN_IF_ERROR(CheckOptions(options));
  KIMI_ASSIGN_OR_RETURN(Json schema, ParseSchema(schema_json, "the JSON schema"));
  GrammarBuilder builder;
  JsonValueRules values(&builder);
  SchemaCompiler compiler(&values, schema, RequestBudget());
  KIMI_ASSIGN_OR_RETURN(int32_t value, compiler.CompileRoot());
  return ForValue(&builder, value, "the JSON schema", options);
}

Status StructuredOutput::CheckSchemaLimits(std::string_view schema_json) {
  KIMI_ASSIGN_OR_RETURN(Json schema, ParseSchema(schema_json, "the JSON schema"));
  return structured::CheckSchemaLimits(schema);
}

Result<std::shared_ptr<const StructuredOutput>> StructuredOutput::ForJsonObject(const StructuredOutputOptions& options) {
  KIMI_RETURN_IF_ERROR(CheckOptions(options));
  GrammarBuilder builder;
  JsonValueRules values(&builder);
  return ForValue(&builder, values.AnyObject(), "a JSON object", options);
}

Result<std::shared_ptr<const StructuredOutput>> StructuredOutput::ForRequiredToolCalls(std::span<const StrictTool> tools, int max_calls,
                                                                                      const StructuredOutputOptions& options) {
  KIMI_RETURN_IF_ERROR(CheckOptions(options));
  if (options.frame != StructuredOutputOptions::Frame::kK3) return Status::InvalidArgument("tool calls need the K3 frame");
  if (tools.empty()) return Status::InvalidArgument("tool_choice required with no tools");
  if (tools.size() > kMaxStrictTools) {
    return Status::InvalidArgument("tool_choice required with " + std::to_string(tools.size()) + " tools; at most " +
                                   std::to_string(kMaxStrictTools) + " are allowed");
  }
  if (max_calls < 1) return Status::InvalidArgument("max_calls must be at least 1");
  KIMI_ASSIGN_OR_RETURN(Markup m, K3Markup(*options.vocabulary->trie()));
  GrammarBuilder builder;
  JsonValueRules values(&builder);
  const structured::CompileBudget budget = RequestBudget();
  std::vector<int32_t> argument_rules;
  for (const StrictTool& tool : tools) {
    const std::string what =
        tool.parameters_path.empty() ? "the parameters of tool \"" + tool.name + "\"" : tool.parameters_path;
    int32_t arguments = -1;
    if (tool.parameters_json.empty()) {
      arguments = values.AnyObject();
    } else {
      KIMI_ASSIGN_OR_RETURN(Json schema, ParseSchema(tool.parameters_json, what));
      SchemaCompiler compiler(&values, schema, budget);
      Result<int32_t> compiled = compiler.CompileRoot();
      if (!compiled.ok()) return compiled.status().WithContext(what);
      arguments = *compiled;
    }
    argument_rules.push_back(arguments);
  }
  const int32_t section = builder.NewRule("k3 tool calls");
  Chain chain = OpenResponse(&builder, section, m, options);
  chain.Special(m.close).Text("response").Special(m.sep).Special(m.open).Text("tools").Special(m.sep);
  const int32_t close_tools = builder.NewState(section);
  int32_t at = chain.at();
  for (int index = 1; index <= max_calls; ++index) {
    const int32_t after = builder.NewState(section);
    for (size_t t = 0; t < tools.size(); ++t) {
      Chain one(&builder, section, at);
      one.Special(m.open)
          .Text("call tool=\"" + EscapeAttribute(tools[t].name) + "\" index=\"" + std::to_string(index) + "\"")
          .Special(m.sep)
          .Special(m.open)
          .Text("json type=\"object\"")
          .Special(m.sep)
          .Call(argument_rules[t])
          .Special(m.close)
          .Text("json")
          .Special(m.sep)
          .Special(m.close)
          .Text("call")
          .Special(m.sep);
      builder.AddEpsilon(one.at(), after);
    }
    builder.AddEpsilon(after, close_tools);
    at = after;
  }
  Chain tail(&builder, section, close_tools);
  tail.Special(m.close).Text("tools").Special(m.sep).Special(m.close).Text("message").Special(m.sep);
  builder.MarkEnd(tail.at());
  return Finish(&builder, section, "the tool calls", options, {m.end_of_msg});
}

std::shared_ptr<TokenConstraint> StructuredOutput::NewConstraint(std::string request_field) const {
  return std::make_shared<GrammarConstraint>(parts_, std::move(request_field));
}

size_t StructuredOutput::grammar_states() const { return parts_->grammar->states.size(); }
size_t StructuredOutput::cached_masks() const { return parts_->cache->size(); }
size_t StructuredOutput::cached_mask_bytes() const { return parts_->cache->bytes(); }

}  // namespace kimi
