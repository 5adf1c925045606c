#include "structured/matcher.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "kimi/output_parser.h"
#include "kimi/structured_output.h"
#include "structured/structured_test_util.h"
#include "text/tokenizer_test_util.h"

namespace kimi::structured {
namespace {

using testing::CompileSchema;

// JSON text with no whitespace outside strings.
bool Compact(const std::string& text) {
  bool in_string = false, escaped = false;
  for (char c : text) {
    if (in_string) {
      if (escaped) {
        escaped = false;
      } else if (c == '\\') {
        escaped = true;
      } else if (c == '"') {
        in_string = false;
      }
    } else if (c == '"') {
      in_string = true;
    } else if (c == ' ' || c == '\n' || c == '\t' || c == '\r') {
      return false;
    }
  }
  return true;
}

// The mask the trie walk computes equals, token by token, what feeding each token's bytes
// to the matcher says.
// Structured output in the K3 frame over the demo tokenizer's vocabulary.
StructuredOutputOptions K3DemoOptions() {
  StructuredOutputOptions options;
  auto vocabulary = StructuredVocabulary::Build(text::testing::DemoTokenizer());
  EXPECT_TRUE(vocabulary.ok()) << vocabulary.status().ToString();
  if (vocabulary.ok()) options.vocabulary = *vocabulary;
  options.frame = StructuredOutputOptions::Frame::kK3;
  return options;
}

void ExpectMaskMatchesBruteForce(GrammarMatcher& matcher, const TokenTrie& trie, int32_t end_token, const std::string& where) {
  std::vector<uint64_t> words;
  matcher.AllowedTokens(&words);
  int mismatches = 0;
  for (int32_t id = 0; id < trie.num_base_tokens() && mismatches < 5; ++id) {
    const bool allowed = (words[size_t(id) >> 6] >> (id & 63)) & 1;
    const bool expected = !trie.TokenBytes(id).empty() && matcher.AcceptsBytes(trie.TokenBytes(id));
    if (allowed != expected) {
      ++mismatches;
      ADD_FAILURE() << where << ": token " << id << " '" << trie.TokenBytes(id) << "' mask says " << allowed;
    }
  }
  const bool end_allowed = (words[size_t(end_token) >> 6] >> (end_token & 63)) & 1;
  EXPECT_EQ(end_allowed, matcher.complete()) << where;
}

TEST(GrammarMatcher, MaskEqualsBruteForceAlongWalksOnTheDemoVocabulary) {
  auto cases = testing::VerifierSchemaCases();
  ASSERT_TRUE(cases.ok()) << cases.status().ToString();
  auto trie = testing::DemoTrie();
  const int32_t end_token = *trie->end_of_msg;
  std::mt19937_64 rng(7);
  // One vocabulary-wide cache across all the schemas: shared pieces must mask the same everywhere.
  auto vocabulary_wide = std::make_shared<MaskCache>();
  for (size_t i = 0; i < cases->size(); i += 3) {  // a third of the cases, every step checked
    const auto& c = (*cases)[i];
    auto g = CompileSchema(c.schema);
    ASSERT_TRUE(g.ok()) << g.status().ToString();
    GrammarMatcher matcher(*g, trie, std::make_shared<MaskCache>(vocabulary_wide), {end_token});
    testing::Walk walk = testing::RandomWalk(*g, trie, end_token, rng, 20, 300);
    const std::string where = c.suite + ":" + std::to_string(c.line);
    ExpectMaskMatchesBruteForce(matcher, *trie, end_token, where + " step 0");
    for (size_t t = 0; t < walk.tokens.size(); ++t) {
      ASSERT_TRUE(matcher.Advance(walk.tokens[t]).ok()) << where;
      ExpectMaskMatchesBruteForce(matcher, *trie, end_token, where + " step " + std::to_string(t + 1));
    }
  }
}

TEST(GrammarMatcher, MaskEqualsBruteForceOnTheRealVocabulary) {
  auto real = testing::RealTrie();
  const int32_t end_token = *real->end_of_msg;
  auto vocabulary_wide = std::make_shared<MaskCache>();
  std::mt19937_64 rng(9);
  // A class of scattered CJK characters takes more states than is copied onto each edge: its
  // edges call one rule that spells it (counted by maxLength around the calls).
  std::string scattered = testing::JsonEscapedClass(300, 0x4E00, 67);
  scattered.insert(scattered.size() - 1, "a-c");
  const std::string shared_class = R"({"type":"string","pattern":"^)" + scattered + R"(+$","maxLength":6})";
  for (const std::string& schema : {std::string(R"({"type":"object","properties":{"name":{"type":"string","maxLength":12},"tags":{"type":"array","items":{"enum":["a","b"]},"minItems":1},"n":{"type":"number","minimum":-2.5,"maximum":99}},"required":["name","n"],"additionalProperties":false})"),
                                    std::string(R"({"$defs":{"node":{"type":"object","properties":{"next":{"anyOf":[{"type":"null"},{"$ref":"#/$defs/node"}]},"v":{"type":"string","pattern":"^[a-f0-9]{2,6}$"}},"required":["v"]}},"$ref":"#/$defs/node"})"),
                                    std::string(R"({})"), shared_class}) {
    auto g = CompileSchema(schema);
    ASSERT_TRUE(g.ok()) << g.status().ToString();
    testing::Walk walk = testing::RandomWalk(*g, real, end_token, rng, 10, 40);
    GrammarMatcher matcher(*g, real, std::make_shared<MaskCache>(vocabulary_wide), {end_token});
    ExpectMaskMatchesBruteForce(matcher, *real, end_token, schema + " step 0");
    for (size_t t = 0; t < walk.tokens.size(); ++t) {
      ASSERT_TRUE(matcher.Advance(walk.tokens[t]).ok());
      ExpectMaskMatchesBruteForce(matcher, *real, end_token, schema + " step " + std::to_string(t + 1));
    }
  }
}

TEST(GrammarMatcher, WalksEndWithCompactValidJsonOnTheDemoVocabulary) {
  auto cases = testing::VerifierSchemaCases();
  ASSERT_TRUE(cases.ok()) << cases.status().ToString();
  auto trie = testing::DemoTrie();
  const int32_t end_token = *trie->end_of_msg;
  std::mt19937_64 rng(11);
  int walks = 0;
  for (const auto& c : *cases) {
    auto g = CompileSchema(c.schema);
    ASSERT_TRUE(g.ok()) << g.status().ToString();
    // A value of minLength 999999999999 has no end within any budget.
    const bool endless = c.schema.find("999999999999") != std::string::npos;
    for (int k = 0; k < 3; ++k) {
      testing::Walk walk = testing::RandomWalk(*g, trie, end_token, rng, 30, 4000);
      const std::string where = c.suite + ":" + std::to_string(c.line) + " " + c.schema;
      EXPECT_FALSE(walk.stuck) << where << " after " << walk.text;  // never a dead end
      if (endless) continue;
      ++walks;
      ASSERT_TRUE(walk.ended) << where << " did not end: " << walk.text.substr(0, 300);
      EXPECT_TRUE(nlohmann::json::accept(walk.text)) << where << ": " << walk.text;
      EXPECT_TRUE(Compact(walk.text)) << where << ": " << walk.text;
    }
  }
  std::printf("%d walks ended with valid compact JSON\n", walks);
}

// Levels of anyOf whose two branches both accept "[x]": after k brackets 2^k parses are open.
std::string OverlappingAlternatives(int levels) {
  nlohmann::json defs;
  for (int i = 0; i < levels; ++i) {
    const nlohmann::json next = i + 1 < levels ? nlohmann::json{{"$ref", "#/$defs/l" + std::to_string(i + 1)}}
                                               : nlohmann::json{{"type", "integer"}, {"minimum", 0}, {"maximum", 0}};
    defs["l" + std::to_string(i)] = {{"anyOf",
                                      {{{"type", "array"}, {"minItems", 1}, {"maxItems", 1}, {"items", next}},
                                       {{"type", "array"}, {"minItems", 1}, {"maxItems", 2}, {"items", next}}}}};
  }
  return nlohmann::json{{"$defs", defs}, {"$ref", "#/$defs/l0"}}.dump();
}

int32_t SingleByteToken(const TokenTrie& trie, char byte) {
  for (int32_t id = 0; id < trie.num_base_tokens(); ++id) {
    if (trie.TokenBytes(id) == std::string(1, byte)) return id;
  }
  return -1;
}

bool NoneAllowed(const std::vector<uint64_t>& words) {
  return std::all_of(words.begin(), words.end(), [](uint64_t w) { return w == 0; });
}

TEST(GrammarMatcher, AlternativesThatAcceptTheSameTextAreRefusedPastTheBound) {
  auto real = testing::RealTrie();
  const int32_t open = SingleByteToken(*real, '['), close = SingleByteToken(*real, ']'), zero = SingleByteToken(*real, '0');
  ASSERT_TRUE(open >= 0 && close >= 0 && zero >= 0);
  std::vector<uint64_t> words;
  // 8 levels (256 parses at the deepest) are followed to the end.
  auto small = CompileSchema(OverlappingAlternatives(8));
  ASSERT_TRUE(small.ok()) << small.status().ToString();
  GrammarMatcher followed(*small, real, std::make_shared<MaskCache>(), {*real->end_of_msg});
  std::vector<int32_t> tokens(8, open);
  tokens.push_back(zero);
  tokens.insert(tokens.end(), 8, close);
  for (int32_t token : tokens) {
    followed.AllowedTokens(&words);
    ASSERT_FALSE(NoneAllowed(words));
    ASSERT_TRUE(followed.Advance(token).ok()) << followed.status().ToString();
  }
  EXPECT_TRUE(followed.complete());
  // 40 levels would open 2^40: refused at the bound, with nothing allowed after.
  auto large = CompileSchema(OverlappingAlternatives(40));
  ASSERT_TRUE(large.ok()) << large.status().ToString();
  GrammarMatcher refused(*large, real, std::make_shared<MaskCache>(), {*real->end_of_msg});
  Status last;
  for (int i = 0; i < 40 && last.ok(); ++i) {
    refused.AllowedTokens(&words);
    last = refused.Advance(open);
  }
  ASSERT_FALSE(last.ok());
  EXPECT_EQ(last.code(), Status::Code::kInvalidArgument);
  EXPECT_NE(last.message().find("too ambiguous"), std::string::npos) << last.message();
  EXPECT_EQ(refused.status().message(), last.message());
  refused.AllowedTokens(&words);
  EXPECT_TRUE(NoneAllowed(words));
}

TEST(GrammarMatcher, AStepThatVisitsTooMuchIsRefusedAndItsMasksAreNotShared) {
  auto trie = testing::DemoTrie();
  auto g = CompileSchema(OverlappingAlternatives(6));
  ASSERT_TRUE(g.ok()) << g.status().ToString();
  const int32_t open = SingleByteToken(*trie, '['), close = SingleByteToken(*trie, ']'), zero = SingleByteToken(*trie, '0');
  ASSERT_TRUE(open >= 0 && close >= 0 && zero >= 0);
  std::vector<int32_t> tokens(6, open);
  tokens.push_back(zero);
  tokens.insert(tokens.end(), 6, close);
  auto shared = std::make_shared<MaskCache>();
  std::vector<uint64_t> words, expected;
  // Cut at different points: some in the middle of a mask's walk.
  for (size_t visits = 2; visits <= 64; visits += 2) {
    MatcherBounds tight;
    tight.visits_per_call = visits;
    GrammarMatcher refused(*g, trie, shared, {*trie->end_of_msg}, tight);
    for (size_t t = 0; t < tokens.size() && refused.status().ok(); ++t) {
      refused.AllowedTokens(&words);
      (void)refused.Advance(tokens[t]);
    }
    EXPECT_NE(refused.status().message().find("parse steps"), std::string::npos) << visits << ": " << refused.status().ToString();
  }
  // A request after it on the same cache gets the masks a cache of its own gives.
  GrammarMatcher after(*g, trie, shared, {*trie->end_of_msg});
  GrammarMatcher alone(*g, trie, std::make_shared<MaskCache>(), {*trie->end_of_msg});
  for (size_t t = 0; t < tokens.size(); ++t) {
    after.AllowedTokens(&words);
    alone.AllowedTokens(&expected);
    ASSERT_EQ(words, expected) << "step " << t;
    ASSERT_TRUE(after.Advance(tokens[t]).ok());
    ASSERT_TRUE(alone.Advance(tokens[t]).ok());
  }
  EXPECT_TRUE(after.complete());
}

// A long output rebuilds the matcher's tables from its current set; the masks stay the same.
TEST(GrammarMatcher, KeepingOnlyTheCurrentSetChangesNoMask) {
  auto trie = testing::DemoTrie();
  const int32_t end_token = *trie->end_of_msg;
  const std::string schema = R"({"$defs":{"node":{"type":"object","properties":{"kids":{"type":"array","items":{"$ref":"#/$defs/node"}},"v":{"anyOf":[{"type":"string","maxLength":5},{"type":"integer"}]}},"required":["v"]}},"$ref":"#/$defs/node"})";
  auto g = CompileSchema(schema);
  ASSERT_TRUE(g.ok()) << g.status().ToString();
  std::mt19937_64 rng(5);
  MatcherBounds small;
  small.held = 64;
  for (int k = 0; k < 4; ++k) {
    testing::Walk walk = testing::RandomWalk(*g, trie, end_token, rng, 60, 400);
    ASSERT_TRUE(walk.ended);
    GrammarMatcher plain(*g, trie, std::make_shared<MaskCache>(), {end_token});
    GrammarMatcher rebuilt(*g, trie, std::make_shared<MaskCache>(), {end_token}, small);
    std::vector<uint64_t> a, b;
    for (size_t t = 0; t < walk.tokens.size(); ++t) {
      plain.AllowedTokens(&a);
      rebuilt.AllowedTokens(&b);
      ASSERT_EQ(a, b) << "step " << t << " of " << walk.text;
      ASSERT_EQ(plain.RemainingBytesEstimate(), rebuilt.RemainingBytesEstimate()) << "step " << t;
      ASSERT_TRUE(plain.Advance(walk.tokens[t]).ok());
      ASSERT_TRUE(rebuilt.Advance(walk.tokens[t]).ok()) << rebuilt.status().ToString();
    }
    EXPECT_TRUE(rebuilt.complete());
  }
}

TEST(MaskCache, KeepsMasksWithinItsBoundAndTheBudgetAndGivesThemBack) {
  auto mask = std::make_shared<LocalMask>();
  mask->words.assign(64, 0);
  auto budget = std::make_shared<MaskBudget>(8192);
  auto first = std::make_unique<MaskCache>(nullptr, budget, 2048);
  for (int32_t state = 0; state < 8; ++state) first->Insert({state, {0, 0}}, mask);
  const size_t one = first->bytes() / first->size();
  EXPECT_GT(one, 512u);
  EXPECT_LE(first->bytes(), 2048u);
  EXPECT_EQ(budget->used(), first->bytes());
  EXPECT_NE(first->Find({0, {0, 0}}), nullptr);
  EXPECT_EQ(first->Find({7, {0, 0}}), nullptr);  // past the cache's own bound: not kept

  // Another cache over the same budget takes what is left of it, then nothing.
  auto second = std::make_unique<MaskCache>(nullptr, budget);
  for (int32_t state = 0; state < 64; ++state) second->Insert({state, {0, 0}}, mask);
  EXPECT_LE(budget->used(), 8192u);
  EXPECT_GT(budget->used() + one, 8192u);
  EXPECT_EQ(budget->used(), first->bytes() + second->bytes());
  second->InsertShared("string", mask);
  EXPECT_EQ(second->FindShared("string"), nullptr);

  // Their bytes return when a cache goes; the room is there for others again.
  const size_t kept_by_first = first->bytes();
  second.reset();
  EXPECT_EQ(budget->used(), kept_by_first);
  auto third = std::make_unique<MaskCache>(nullptr, budget);
  third->Insert({0, {0, 0}}, mask);
  EXPECT_EQ(third->size(), 1u);
  first.reset();
  third.reset();
  EXPECT_EQ(budget->used(), 0u);
}

// A cache that keeps nothing more gives the masks a cache without bounds gives.
TEST(GrammarMatcher, MasksAreTheSameWhenTheCacheIsFull) {
  auto trie = testing::DemoTrie();
  const int32_t end_token = *trie->end_of_msg;
  auto g = CompileSchema(testing::ManyLongPropertyNames(6));
  ASSERT_TRUE(g.ok()) << g.status().ToString();
  std::mt19937_64 rng(11);
  testing::Walk walk = testing::RandomWalk(*g, trie, end_token, rng, 200, 2000);
  ASSERT_TRUE(walk.ended);
  auto full = std::make_shared<MaskCache>(nullptr, nullptr, 3000);  // a mask or two at most
  GrammarMatcher bounded(*g, trie, full, {end_token});
  GrammarMatcher plain(*g, trie, std::make_shared<MaskCache>(), {end_token});
  std::vector<uint64_t> a, b;
  for (size_t t = 0; t < walk.tokens.size(); ++t) {
    plain.AllowedTokens(&a);
    bounded.AllowedTokens(&b);
    ASSERT_EQ(a, b) << "step " << t << " of " << walk.text;
    ASSERT_TRUE(plain.Advance(walk.tokens[t]).ok());
    ASSERT_TRUE(bounded.Advance(walk.tokens[t]).ok());
  }
  EXPECT_TRUE(bounded.complete());
  EXPECT_LE(full->bytes(), 3000u);
  EXPECT_GT(full->size(), 0u);
}

// Requests walking a schema of many long property names on K3's vocabulary cached a mask of
// 20 KB nearly every token, 400 MB in one request of a few thousand tokens, kept as long as the
// schema was: the masks of every schema over a vocabulary now stay within its budget, each
// schema's within its own bound.
TEST(StructuredOutput, CachedMasksStayWithinTheVocabularysBudget) {
  constexpr size_t kBudget = size_t(48) << 20;
  auto vocabulary = StructuredVocabulary::Build(text::testing::RealTokenizer(), kBudget);
  ASSERT_TRUE(vocabulary.ok()) << vocabulary.status().ToString();
  StructuredOutputOptions options;
  options.vocabulary = *vocabulary;
  options.end_token_ids = {*(*vocabulary)->trie()->end_of_msg};
  std::mt19937_64 rng(3);
  std::vector<std::shared_ptr<const StructuredOutput>> kept;
  for (int schema = 0; schema < 2; ++schema) {
    auto output = StructuredOutput::ForJsonSchema(testing::ManyLongPropertyNames(120 + schema), options);
    ASSERT_TRUE(output.ok()) << output.status().ToString();
    kept.push_back(*output);
    const Status walked = testing::WalkConstraint(*(*output)->NewConstraint(), (*vocabulary)->trie()->vocab_size(),
                                                  options.end_token_ids[0], rng, 2500);
    ASSERT_TRUE(walked.ok()) << walked.ToString();
    EXPECT_LE((*output)->cached_mask_bytes(), StructuredVocabulary::kMaxCachedMaskBytesPerSchema);
    EXPECT_LE((*vocabulary)->cached_mask_bytes(), kBudget);
  }
  // The first schema filled its own bound, the second what the budget had left.
  EXPECT_GT((*vocabulary)->cached_mask_bytes() + 64 * 1024, kBudget);
  kept.clear();
  EXPECT_EQ((*vocabulary)->cached_mask_bytes(), (*vocabulary)->shared_masks()->bytes());  // the shared masks alone
}

TEST(GrammarMatcher, RefusesTokensOutsideTheGrammarAndEndsOnlyWhenComplete) {
  auto g = CompileSchema(R"({"type":"object","properties":{"a":{"type":"integer"}},"required":["a"],"additionalProperties":false})");
  ASSERT_TRUE(g.ok());
  auto trie = testing::DemoTrie();
  const int32_t end_token = *trie->end_of_msg;
  GrammarMatcher m(*g, trie, std::make_shared<MaskCache>(), {end_token});
  EXPECT_TRUE(m.AcceptsBytes(R"({"a":12})", true));
  EXPECT_FALSE(m.AcceptsBytes(R"({"b":12})"));
  EXPECT_FALSE(m.Advance(end_token).ok());
  EXPECT_GT(m.RemainingBytesEstimate(), 6);
}

// A tool whose schema cannot compile is named by where the request holds it, so that the API's
// error names it as `param` ("the parameters of tool" left `param` null).
TEST(StructuredOutput, AToolThatCannotCompileIsNamedByItsRequestPath) {
  const StructuredOutputOptions options = K3DemoOptions();
  const std::string too_many_states = R"({"const":")" + std::string(300000, 'x') + R"("})";
  std::vector<StrictTool> tools = {{"ok", R"({"type":"object"})", "tools[0].function.parameters"},
                                   {"big", too_many_states, "messages[2].tools[1].function.parameters"}};
  auto output = StructuredOutput::ForRequiredToolCalls(tools, 1, options);
  ASSERT_FALSE(output.ok());
  EXPECT_EQ(output.status().code(), Status::Code::kInvalidArgument);
  EXPECT_EQ(output.status().message().rfind("messages[2].tools[1].function.parameters: ", 0), 0u)
      << output.status().message();
}

// The public API: a strict tool call through TokenConstraint::FillMask, parsed back by the K3
// output parser.
TEST(StructuredOutput, RequiredToolCallParsesBackAsItsArguments) {
  const Tokenizer& tokenizer = text::testing::DemoTokenizer();
  const StructuredOutputOptions options = K3DemoOptions();
  std::vector<StrictTool> tools = {
      {"get_weather", R"({"type":"object","properties":{"city":{"enum":["Paris","Hanoi"]},"days":{"type":"integer","minimum":1,"maximum":7}},"required":["city","days"],"additionalProperties":false})"},
      {"now", R"({"type":"object","properties":{"tz":{"type":"string","maxLength":3}},"additionalProperties":false})"}};
  auto output = StructuredOutput::ForRequiredToolCalls(tools, 2, options);
  ASSERT_TRUE(output.ok()) << output.status().ToString();
  SpecialTokenIds ids{*tokenizer.SpecialTokenId(k3::kEos), *tokenizer.SpecialTokenId(k3::kEndOfMessage),
                      *tokenizer.SpecialTokenId(k3::kOpen), *tokenizer.SpecialTokenId(k3::kClose), *tokenizer.SpecialTokenId(k3::kSep)};
  std::mt19937_64 rng(3);
  for (int run = 0; run < 20; ++run) {
    auto constraint = (*output)->NewConstraint();
    std::vector<int32_t> generated;
    for (int step = 0; step < 3000; ++step) {
      TokenMask mask(tokenizer.vocab_size(), true);
      ASSERT_TRUE(constraint->FillMask(generated, 3000 - step, &mask).ok());
      std::vector<int32_t> allowed;
      for (int32_t id = 0; id < tokenizer.vocab_size(); ++id) {
        if (mask.allowed(id)) allowed.push_back(id);
      }
      ASSERT_FALSE(allowed.empty());
      // Prefer short tokens so that free strings close in reasonable time.
      int32_t choice = allowed[std::uniform_int_distribution<size_t>(0, allowed.size() - 1)(rng)];
      if (mask.allowed(ids.end_of_message)) choice = ids.end_of_message;
      generated.push_back(choice);
      if (choice == ids.end_of_message) break;
    }
    ASSERT_EQ(generated.back(), ids.end_of_message);
    std::vector<std::string> texts;
    for (int32_t id : generated) texts.emplace_back(*tokenizer.TokenBytes(id));
    std::vector<GeneratedToken> tokens;
    for (size_t i = 0; i < generated.size(); ++i) tokens.push_back({generated[i], texts[i]});
    auto parser = OutputParserRegistry::Create("kimi_k3", {ids, OutputStart::kResponseChannel});
    ASSERT_TRUE(parser.ok());
    ParsedOutput parsed = ParseOutput(**parser, tokens);
    ASSERT_GE(parsed.tool_calls.size(), 1u);
    ASSERT_LE(parsed.tool_calls.size(), 2u);
    EXPECT_EQ(parsed.answer, "");
    for (const ParsedToolCall& call : parsed.tool_calls) {
      auto args = nlohmann::json::parse(call.arguments, nullptr, false);
      ASSERT_TRUE(args.is_object()) << call.arguments;
      if (call.name == "get_weather") {
        EXPECT_TRUE(args["city"] == "Paris" || args["city"] == "Hanoi") << call.arguments;
        EXPECT_TRUE(args["days"].is_number_integer() && args["days"] >= 1 && args["days"] <= 7) << call.arguments;
      } else {
        EXPECT_EQ(call.name, "now");
      }
    }
  }
}

// Uniform choices among the allowed tokens, as the runtime would call the constraint under
// max_tokens: free text (reasoning, strings) then never ends by chance, as with random weights.
std::string SampleUnderBudget(TokenConstraint& constraint, const Tokenizer& tokenizer, int64_t max_tokens, uint64_t seed) {
  const int32_t end = *tokenizer.SpecialTokenId(k3::kEndOfMessage);
  std::mt19937_64 rng(seed);
  std::vector<int32_t> generated;
  std::string text;
  while (int64_t(generated.size()) < max_tokens && (generated.empty() || generated.back() != end)) {
    TokenMask mask(tokenizer.vocab_size(), true);
    const Status filled = constraint.FillMask(generated, max_tokens - int64_t(generated.size()), &mask);
    EXPECT_TRUE(filled.ok()) << filled.ToString();
    std::vector<int32_t> allowed;
    for (int32_t id = 0; id < tokenizer.vocab_size(); ++id) {
      if (mask.allowed(id)) allowed.push_back(id);
    }
    if (allowed.empty()) {
      ADD_FAILURE() << "no token allowed after " << text;
      break;
    }
    generated.push_back(allowed[std::uniform_int_distribution<size_t>(0, allowed.size() - 1)(rng)]);
    text += *tokenizer.TokenBytes(generated.back());
  }
  return text;
}

TEST(StructuredOutput, FreeReasoningAndStringsCloseBeforeMaxTokens) {
  const Tokenizer& tokenizer = text::testing::DemoTokenizer();
  StructuredOutputOptions options = K3DemoOptions();
  options.thinking = true;
  auto output = StructuredOutput::ForJsonSchema(
      R"({"type":"object","properties":{"note":{"type":"string"},"ok":{"type":"boolean"}},"required":["note","ok"],"additionalProperties":false})",
      options);
  ASSERT_TRUE(output.ok()) << output.status().ToString();
  const std::string close_think = "<|close|>think<|sep|><|open|>response<|sep|>";
  const std::string tail = "<|close|>response<|sep|><|close|>message<|sep|><|end_of_msg|>";
  // The shortest output is 58 tokens: 37 of markup (special tokens and their words, one byte a
  // token), {"note":"","ok":true} and the end token.
  for (int64_t max_tokens : {58, 59, 90, 300}) {
    for (uint64_t seed = 1; seed <= 3; ++seed) {
      const std::string text = SampleUnderBudget(*(*output)->NewConstraint(), tokenizer, max_tokens, seed);
      const size_t open = text.find(close_think);
      ASSERT_NE(open, std::string::npos) << max_tokens << ": " << text;
      ASSERT_TRUE(text.ends_with(tail)) << max_tokens << ": " << text;
      const std::string answer = text.substr(open + close_think.size(), text.size() - open - close_think.size() - tail.size());
      const auto value = nlohmann::json::parse(answer, nullptr, false);
      ASSERT_TRUE(value.is_object()) << answer;
      EXPECT_TRUE(value["note"].is_string() && value["ok"].is_boolean()) << answer;
    }
  }
}

TEST(StructuredOutput, RequiredToolCallEndsWithinMaxTokens) {
  const Tokenizer& tokenizer = text::testing::DemoTokenizer();
  const StructuredOutputOptions options = K3DemoOptions();
  std::vector<StrictTool> tools = {
      {"search", R"({"type":"object","properties":{"query":{"type":"string"},"tags":{"type":"array","items":{"type":"string"},"minItems":2}},"required":["query","tags"],"additionalProperties":false})"}};
  auto output = StructuredOutput::ForRequiredToolCalls(tools, 4, options);
  ASSERT_TRUE(output.ok()) << output.status().ToString();
  for (int64_t max_tokens : {120, 200}) {
    for (uint64_t seed = 1; seed <= 3; ++seed) {
      const std::string text = SampleUnderBudget(*(*output)->NewConstraint(), tokenizer, max_tokens, seed);
      ASSERT_TRUE(text.ends_with("<|close|>tools<|sep|><|close|>message<|sep|><|end_of_msg|>")) << max_tokens << ": " << text;
      const std::string open_args = "<|open|>json type=\"object\"<|sep|>";
      const size_t args = text.find(open_args);
      ASSERT_NE(args, std::string::npos) << text;
      const size_t args_end = text.find("<|close|>json", args);
      const auto value = nlohmann::json::parse(text.substr(args + open_args.size(), args_end - args - open_args.size()), nullptr, false);
      ASSERT_TRUE(value.is_object()) << text;
      EXPECT_TRUE(value["query"].is_string() && value["tags"].is_array() && value["tags"].size() >= 2) << text;
    }
  }
}

TEST(StructuredOutput, UnsupportedKeywordIsAnInvalidArgument) {
  StructuredOutputOptions options;
  options.vocabulary = *StructuredVocabulary::Build(text::testing::DemoTokenizer());
  auto output = StructuredOutput::ForJsonSchema(R"({"type":"object","properties":{"x":{"type":"string","not":{"const":"a"}}}})", options);
  ASSERT_FALSE(output.ok());
  EXPECT_EQ(output.status().code(), Status::Code::kInvalidArgument);
  EXPECT_NE(output.status().message().find("/properties/x/not"), std::string::npos) << output.status().message();
  std::vector<StrictTool> tools = {{"f", R"({"type":"object","dependentRequired":{}})"}};
  options.frame = StructuredOutputOptions::Frame::kK3;
  auto tool = StructuredOutput::ForRequiredToolCalls(tools, 1, options);
  ASSERT_FALSE(tool.ok());
  EXPECT_NE(tool.status().message().find("tool \"f\""), std::string::npos) << tool.status().message();
}

// The request paths the penetration test used, through the public API (kimi-engine serve has
// no request rules in front of it): refused, naming the tool, never a crash or a hang.
TEST(StructuredOutput, SelfReferencingSchemasAndTooManyToolsAreRefused) {
  const StructuredOutputOptions options = K3DemoOptions();
  const std::string self = R"({"$defs":{"a":{"$ref":"#/$defs/a"}},"allOf":[{"$ref":"#/$defs/a"}]})";
  EXPECT_FALSE(StructuredOutput::ForJsonSchema(self, options).ok());
  EXPECT_FALSE(StructuredOutput::CheckSchemaLimits(self).ok());
  std::vector<StrictTool> tools = {{"g", R"({"type":"object"})"}, {"f", self}};
  auto tool = StructuredOutput::ForRequiredToolCalls(tools, 1, options);
  ASSERT_FALSE(tool.ok());
  EXPECT_NE(tool.status().message().find("tool \"f\""), std::string::npos) << tool.status().message();
  std::vector<StrictTool> many(kMaxStrictTools + 1, StrictTool{"t", ""});
  auto crowded = StructuredOutput::ForRequiredToolCalls(many, 1, options);
  ASSERT_FALSE(crowded.ok());
  EXPECT_NE(crowded.status().message().find("at most"), std::string::npos) << crowded.status().message();
  many.resize(kMaxStrictTools);
  EXPECT_TRUE(StructuredOutput::ForRequiredToolCalls(many, 1, options).ok());
}

// A penetration test's pattern: a class of 600 CJK characters (every other code point from
// U+4E00) repeated {1000}{19}, 1,812 bytes within every bound on the document, compiled to
// 22.8 million grammar states (each character range made new states on each of 19,000
// edges) in 52 s and 5.6 GB, and was kept. Its 50-character sibling made 1.9 million. Each
// such pattern is now refused by name, or compiles within the 200,000-state budget, whether
// it is the schema, a property of it or a tool's parameter.
void ExpectRefusedByNameOrWithinTheBudget(const Result<std::shared_ptr<const StructuredOutput>>& output, const std::string& what) {
  if (output.ok()) {
    EXPECT_LE((*output)->grammar_states(), CompileBudget().max_states) << what;
    return;
  }
  EXPECT_EQ(output.status().code(), Status::Code::kInvalidArgument) << what << ": " << output.status().ToString();
  const std::string& why = output.status().message();
  EXPECT_TRUE(why.find("grammar states") != std::string::npos || why.find("character ranges") != std::string::npos)
      << what << ": " << why;
}

TEST(StructuredOutput, ARepeatedCharacterClassIsRefusedOrCompilesWithinTheStateBudget) {
  StructuredOutputOptions options;
  auto vocabulary = StructuredVocabulary::Build(text::testing::RealTokenizer());
  ASSERT_TRUE(vocabulary.ok()) << vocabulary.status().ToString();
  options.vocabulary = *vocabulary;
  const std::string fifty = testing::JsonEscapedClass(50, 0x4E00, 2);
  for (const std::string& schema : {
           R"({"type":"string","pattern":")" + fifty + R"({1000}{19}"})",
           R"({"type":"object","properties":{"a":{"type":"string","pattern":")" + fifty + R"({1000}{19}"}}})",
           // Within the bound on the pattern's automaton, past the grammar's: `.` copied onto
           // 19,000 edges.
           std::string(R"({"type":"string","pattern":".{1000}{19}"})"),
           // Unrolled by maxLength: 1,000 layers of the class.
           R"({"type":"string","pattern":"^)" + fifty + R"(+$","maxLength":1000})",
       }) {
    ExpectRefusedByNameOrWithinTheBudget(StructuredOutput::ForJsonSchema(schema, options), schema.substr(0, 80));
  }
  options.frame = StructuredOutputOptions::Frame::kK3;
  std::vector<StrictTool> tools = {{"f", R"({"type":"object","properties":{"a":{"type":"string","pattern":")" + fifty +
                                             R"({1000}{19}"}},"required":["a"]})"}};
  ExpectRefusedByNameOrWithinTheBudget(StructuredOutput::ForRequiredToolCalls(tools, 4, options), "the tool");
}

}  // namespace
}  // namespace kimi::structured
