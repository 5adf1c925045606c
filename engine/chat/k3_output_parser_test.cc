#include "chat/k3_output_parser.h"

#include <gtest/gtest.h>

#include <random>

#include "chat/chat_test_data.h"
#include "chat/utf8_assembler.h"
#include "kimi/chat_format.h"

namespace kimi::chat {
namespace {

using OJson = nlohmann::ordered_json;

struct ParserRun {
  ParsedOutput parsed;
  std::vector<OutputEvent> events;
  size_t warnings = 0;
  bool done = false;
};

ParserRun Feed(const std::vector<OwnedToken>& tokens, OutputStart start, SpecialTokenIds ids = {}) {
  auto parser = MakeK3OutputParser({ids, start});
  ParserRun run;
  for (const GeneratedToken& token : AsGeneratedTokens(tokens)) parser->Feed(token, &run.events);
  parser->Finish(&run.events);
  run.parsed = FoldEvents(run.events);
  run.warnings = parser->warning_count();
  run.done = parser->done();
  return run;
}

ParserRun FeedText(std::string_view text, OutputStart start = OutputStart::kResponseChannel) {
  return Feed(SplitAtSpecialTokens(text, SpecialTokenIds::K3()), start);
}

bool IsWholeUtf8(const std::string& text) {
  Utf8Assembler a;
  return a.Push(text) == text && !a.has_pending() && a.replacements() == 0;
}

// The tokens of `whole` with the text token that spans byte `cut` of the output split there.
std::vector<OwnedToken> SplitAt(const std::vector<OwnedToken>& whole, size_t cut) {
  std::vector<OwnedToken> out;
  size_t offset = 0;
  for (const OwnedToken& token : whole) {
    const size_t begin = offset;
    offset += token.text.size();
    if (token.id == -1 && cut > begin && cut < offset) {
      out.push_back({-1, token.text.substr(0, cut - begin)});
      out.push_back({-1, token.text.substr(cut - begin)});
    } else {
      out.push_back(token);
    }
  }
  return out;
}

struct Recorded {
  std::string name;
  OJson data;
  std::vector<OwnedToken> tokens;
  OutputStart start;
};

std::vector<Recorded> RecordedOutputs() {
  std::vector<Recorded> all;
  for (const auto& path : testing::TestDataFiles("outputs")) {
    Recorded r;
    r.data = testing::ReadJsonFile(path);
    r.name = r.data["name"].get<std::string>();
    r.tokens = SplitAtSpecialTokens(r.data["output"].get<std::string>(), SpecialTokenIds::K3());
    r.start = r.data["thinking"].get<bool>() ? OutputStart::kThinkChannel : OutputStart::kResponseChannel;
    all.push_back(std::move(r));
  }
  return all;
}

TEST(K3OutputParser, RecordedOutputsParseToTheTurnThatProducedThem) {
  const auto outputs = RecordedOutputs();
  ASSERT_GE(outputs.size(), 8u);
  for (const Recorded& r : outputs) {
    SCOPED_TRACE(r.name);
    ParserRun run = Feed(r.tokens, r.start);
    EXPECT_EQ(run.warnings, 0u);
    EXPECT_TRUE(run.done);
    EXPECT_EQ(run.parsed.reasoning, r.data["reasoning"].get<std::string>());
    EXPECT_EQ(run.parsed.answer, r.data["content"].get<std::string>());
    const OJson& calls = r.data["tool_calls"];
    ASSERT_EQ(run.parsed.tool_calls.size(), calls.size());
    for (size_t i = 0; i < calls.size(); ++i) {
      const ParsedToolCall& call = run.parsed.tool_calls[i];
      EXPECT_EQ(call.name, calls[i]["name"].get<std::string>());
      EXPECT_EQ(call.index, static_cast<int>(i));
      EXPECT_TRUE(call.finished);
      const OJson& expected = calls[i]["arguments"];
      const OJson parsed = OJson::parse(call.arguments);  // throws (fails the test) when not JSON
      EXPECT_EQ(parsed, expected.is_string() ? OJson::parse(expected.get<std::string>()) : expected)
          << call.arguments;
    }
  }
}

TEST(K3OutputParser, StreamingEqualsWholeParseAtEverySplitPoint) {
  for (const Recorded& r : RecordedOutputs()) {
    SCOPED_TRACE(r.name);
    const ParserRun whole = Feed(r.tokens, r.start);
    const size_t size = r.data["output"].get<std::string>().size();
    for (size_t cut = 1; cut < size; ++cut) {
      ParserRun split = Feed(SplitAt(r.tokens, cut), r.start);
      ASSERT_EQ(split.parsed, whole.parsed) << "cut at byte " << cut;
      ASSERT_EQ(split.warnings, whole.warnings);
    }
  }
}

TEST(K3OutputParser, StreamingEqualsWholeParseForEveryPairOfCuts) {
  for (const Recorded& r : RecordedOutputs()) {
    if (r.name != "call_with_quoted_name" && r.name != "unicode_everywhere") continue;
    SCOPED_TRACE(r.name);
    const ParserRun whole = Feed(r.tokens, r.start);
    const size_t size = r.data["output"].get<std::string>().size();
    for (size_t a = 1; a < size; ++a) {
      const auto once = SplitAt(r.tokens, a);
      for (size_t b = a + 1; b < size; ++b) {
        ASSERT_EQ(Feed(SplitAt(once, b), r.start).parsed, whole.parsed) << "cuts at " << a << ", " << b;
      }
    }
  }
}

TEST(K3OutputParser, ByteAtATimeNeverSplitsACharacter) {
  for (const Recorded& r : RecordedOutputs()) {
    SCOPED_TRACE(r.name);
    const ParserRun whole = Feed(r.tokens, r.start);
    for (size_t piece : {1, 2, 3, 5}) {
      ParserRun small = Feed(SplitAtSpecialTokens(r.data["output"].get<std::string>(), SpecialTokenIds::K3(), piece), r.start);
      EXPECT_EQ(small.parsed, whole.parsed) << piece << "-byte pieces";
      for (const OutputEvent& event : small.events) EXPECT_TRUE(IsWholeUtf8(event.text)) << event.text;
    }
  }
}

TEST(K3OutputParser, HoldsASplitCharacterBackUntilItsLastByte) {
  auto parser = MakeK3OutputParser({SpecialTokenIds::K3(), OutputStart::kResponseChannel});
  std::vector<OutputEvent> events;
  parser->Feed({-1, "\xE6"}, &events);
  parser->Feed({-1, "\x9D"}, &events);
  EXPECT_TRUE(events.empty());
  parser->Feed({-1, "\xB1!"}, &events);
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0].text, "東!");
  EXPECT_EQ(events[0].kind, OutputEventKind::kAnswer);
}

TEST(K3OutputParser, ACharacterCutOffByATagBecomesAReplacement) {
  ParserRun run = FeedText("ok\xE6\x9D<|close|>response<|sep|>");
  EXPECT_EQ(run.parsed.answer, "ok\xEF\xBF\xBD");
  EXPECT_EQ(run.warnings, 1u);
}

TEST(K3OutputParser, EventsInOrderForACall) {
  ParserRun run = FeedText(
      "<|close|>response<|sep|><|open|>tools<|sep|><|open|>call tool=\"f\" index=\"1\"<|sep|>"
      "<|open|>argument key=\"q\" type=\"string\"<|sep|>a\"b<|close|>argument<|sep|>"
      "<|open|>argument key=\"n\" type=\"number\"<|sep|>7<|close|>argument<|sep|><|close|>call<|sep|>"
      "<|close|>tools<|sep|><|close|>message<|sep|><|end_of_msg|>");
  std::vector<OutputEvent> expected = {
      {OutputEventKind::kToolCallBegin, "", "f", 0},
      {OutputEventKind::kToolCallArguments, "{\"q\":\"", "", 0},
      {OutputEventKind::kToolCallArguments, "a\\\"b", "", 0},
      {OutputEventKind::kToolCallArguments, "\"", "", 0},
      {OutputEventKind::kToolCallArguments, ",\"n\":", "", 0},
      {OutputEventKind::kToolCallArguments, "7", "", 0},
      {OutputEventKind::kToolCallArguments, "}", "", 0},
      {OutputEventKind::kToolCallEnd, "", "f", 0},
  };
  EXPECT_EQ(run.events, expected);
  EXPECT_EQ(run.warnings, 0u);
  EXPECT_TRUE(run.done);
}

TEST(K3OutputParser, CallWithoutArgumentsGetsAnEmptyObject) {
  ParserRun run = FeedText("<|close|>response<|sep|><|open|>tools<|sep|><|open|>call tool=\"now\" index=\"1\"<|sep|>"
                     "<|close|>call<|sep|><|close|>tools<|sep|>");
  ASSERT_EQ(run.parsed.tool_calls.size(), 1u);
  EXPECT_EQ(run.parsed.tool_calls[0].arguments, "{}");
}

TEST(K3OutputParser, UnclosedThinkIsClosedByTheResponse) {
  ParserRun run = FeedText("plan<|open|>response<|sep|>answer<|close|>response<|sep|>", OutputStart::kThinkChannel);
  EXPECT_EQ(run.parsed.reasoning, "plan");
  EXPECT_EQ(run.parsed.answer, "answer");
  EXPECT_EQ(run.warnings, 1u);
}

TEST(K3OutputParser, UnknownTagsAndStraySepsAreDropped) {
  ParserRun run = FeedText("a<|open|>foo x=\"1\"<|sep|>b<|close|>foo<|sep|>c<|sep|>d");
  EXPECT_EQ(run.parsed.answer, "abcd");
  EXPECT_EQ(run.warnings, 3u);
}

TEST(K3OutputParser, MisplacedStructureNeverReachesTheAnswerAsText) {
  // A stray separator inside reasoning, a mismatched close in the answer, a second response
  // opening inside the answer, a separator between tool calls, a json block after arguments.
  ParserRun run = FeedText(
      "r1<|sep|>r2<|close|>think<|sep|><|open|>response<|sep|>a1<|close|>tools<|sep|>a2<|open|>response<|sep|>a3"
      "<|close|>response<|sep|><|open|>tools<|sep|><|open|>call tool=\"f\" index=\"1\"<|sep|>"
      "<|open|>argument key=\"k\" type=\"number\"<|sep|>1<|close|>argument<|sep|>"
      "<|open|>json type=\"object\"<|sep|><|close|>json<|sep|><|close|>call<|sep|><|sep|><|close|>tools<|sep|>"
      "<|close|>message<|sep|><|end_of_msg|>",
      OutputStart::kThinkChannel);
  EXPECT_EQ(run.parsed.reasoning, "r1r2");
  EXPECT_EQ(run.parsed.answer, "a1a2a3");
  ASSERT_EQ(run.parsed.tool_calls.size(), 1u);
  EXPECT_EQ(run.parsed.tool_calls[0].arguments, "{\"k\":1}");
  EXPECT_EQ(run.warnings, 6u);  // the json open and close are dropped one by one
  EXPECT_TRUE(run.done);
  for (const OutputEvent& event : run.events) {
    for (std::string_view marker : {"<|open|>", "<|close|>", "<|sep|>", "<|end_of_msg|>"}) {
      EXPECT_EQ(event.text.find(marker), std::string::npos) << event.text;
    }
  }
}

TEST(K3OutputParser, CallWithoutANameIsDropped) {
  const std::string calls =
      "<|open|>call index=\"1\"<|sep|><|open|>argument key=\"k\" type=\"string\"<|sep|>v<|close|>argument<|sep|>"
      "<|close|>call<|sep|>";
  ParserRun run = FeedText("hi<|close|>response<|sep|><|open|>tools<|sep|>" + calls + "<|close|>tools<|sep|>");
  EXPECT_TRUE(run.parsed.tool_calls.empty());
  EXPECT_EQ(run.parsed.answer, "hiv");  // the tags are dropped; "v" is text between calls
  EXPECT_GE(run.warnings, 1u);
}

TEST(K3OutputParser, OutputEndingInsideACallClosesItsArguments) {
  ParserRun cut = FeedText("<|close|>response<|sep|><|open|>tools<|sep|><|open|>call tool=\"f\" index=\"1\"<|sep|>"
                     "<|open|>argument key=\"k\" type=\"string\"<|sep|>par");
  ASSERT_EQ(cut.parsed.tool_calls.size(), 1u);
  EXPECT_EQ(cut.parsed.tool_calls[0].arguments, "{\"k\":\"par\"}");
  EXPECT_EQ(cut.warnings, 1u);
  ParserRun eos = FeedText("<|close|>response<|sep|><|open|>tools<|sep|><|open|>call tool=\"f\" index=\"1\"<|sep|>"
                     "<|open|>argument key=\"k\" type=\"number\"<|sep|>4[EOS]");
  EXPECT_EQ(eos.parsed.tool_calls[0].arguments, "{\"k\":4}");
  EXPECT_TRUE(eos.done);
}

TEST(K3OutputParser, NonJsonArgumentValueIsKeptAsAString) {
  ParserRun run = FeedText("<|close|>response<|sep|><|open|>tools<|sep|><|open|>call tool=\"f\" index=\"1\"<|sep|>"
                     "<|open|>argument key=\"k\" type=\"number\"<|sep|>about 4<|close|>argument<|sep|><|close|>call<|sep|>");
  EXPECT_EQ(run.parsed.tool_calls[0].arguments, "{\"k\":\"about 4\"}");
  EXPECT_EQ(run.warnings, 1u);
}

TEST(K3OutputParser, SpecialTextInAnOrdinaryTokenIsText) {
  ParserRun run = Feed({{-1, "see <|close|>response<|sep|> here"}}, OutputStart::kResponseChannel);
  EXPECT_EQ(run.parsed.answer, "see <|close|>response<|sep|> here");
  EXPECT_EQ(run.warnings, 0u);
}

TEST(K3OutputParser, AnOpenWithoutSepDoesNotSwallowTheStream) {
  // Built with append: GCC 12 warns falsely (-Wrestrict) on chains of string operator+.
  std::string output = "r<|open|>";
  output.append(1500, 'x').append("東京<|close|>think<|sep|><|open|>response<|sep|>a");
  const std::string answer = "a";
  std::string reasoning = "r";
  reasoning.append(1500, 'x').append("東京");
  const ParserRun whole = FeedText(output, OutputStart::kThinkChannel);
  EXPECT_EQ(whole.parsed.answer, answer);
  EXPECT_EQ(whole.parsed.reasoning, reasoning);
  for (size_t piece : {1, 3, 7}) {
    ParserRun split = Feed(SplitAtSpecialTokens(output, SpecialTokenIds::K3(), piece), OutputStart::kThinkChannel);
    EXPECT_EQ(split.parsed, whole.parsed) << piece;
  }
  // The header bytes stay text even when the 1024-byte limit falls inside a character.
  std::string cjk = "<|open|>";
  cjk.append(1023, 'y').append("東<|sep|>");
  EXPECT_EQ(FeedText(cjk).parsed.answer, std::string(1023, 'y') + "東");
}

TEST(K3OutputParser, TextAfterTheEndIsIgnored) {
  ParserRun run = FeedText("a<|close|>response<|sep|><|close|>message<|sep|><|end_of_msg|>junk");
  EXPECT_EQ(run.parsed.answer, "a");
  EXPECT_TRUE(run.done);
  EXPECT_EQ(run.warnings, 1u);
}

TEST(K3OutputParser, StartsBeforeTheMessageHeader) {
  ParserRun run = FeedText("<|open|>message role=\"assistant\"<|sep|><|open|>think<|sep|>r<|close|>think<|sep|>"
                     "<|open|>response<|sep|>a<|close|>response<|sep|>",
                     OutputStart::kBeforeMessage);
  EXPECT_EQ(run.parsed.reasoning, "r");
  EXPECT_EQ(run.parsed.answer, "a");
  EXPECT_EQ(run.warnings, 0u);
}

TEST(K3OutputParser, UsesTheSpecialIdsItIsGiven) {
  SpecialTokenIds demo{/*eos=*/2, /*end_of_message=*/3, /*open=*/4, /*close=*/5, /*sep=*/6};
  std::vector<OwnedToken> tokens = {{100, "r"}, {5, ""}, {101, "think"}, {6, ""}, {4, ""}, {102, "response"},
                                    {6, ""},    {103, "a"}, {163588, "<|close|>"}, {2, ""}};
  ParserRun run = Feed(tokens, OutputStart::kThinkChannel, demo);
  EXPECT_EQ(run.parsed.reasoning, "r");
  EXPECT_EQ(run.parsed.answer, "a<|close|>");  // 163588 is ordinary text in this vocabulary
  EXPECT_TRUE(run.done);
}

TEST(K3OutputParser, PromptStubMatchesTheParserStart) {
  // The stub ends the prompt, so the first generated token is inside that channel.
  EXPECT_EQ(ChatFormat::GenerationStub(true), "<|open|>think<|sep|>");
  ChatRequest request;
  EXPECT_EQ(ChatFormat::OutputStartFor(request), OutputStart::kThinkChannel);
  request.thinking = false;
  EXPECT_EQ(ChatFormat::OutputStartFor(request), OutputStart::kResponseChannel);
  request.add_generation_prompt = false;
  EXPECT_EQ(ChatFormat::OutputStartFor(request), OutputStart::kBeforeMessage);
  ParserRun run = FeedText("r<|close|>think<|sep|><|open|>response<|sep|>a", OutputStart::kThinkChannel);
  EXPECT_EQ(run.parsed.reasoning, "r");
  EXPECT_EQ(run.parsed.answer, "a");
}

// Random token soup: the parser must not crash, and every event carries whole characters.
TEST(K3OutputParser, SurvivesRandomTokenSequences) {
  const SpecialTokenIds ids = SpecialTokenIds::K3();
  const std::vector<OwnedToken> alphabet = {
      {ids.open, ""}, {ids.close, ""}, {ids.sep, ""}, {ids.end_of_message, ""}, {ids.eos, ""},
      {-1, "think"}, {-1, "response"}, {-1, "tools"}, {-1, "call tool=\"f\" index=\"1\""}, {-1, "call"},
      {-1, "argument key=\"k\" type=\"string\""}, {-1, "argument key=\"n\" type=\"number\""},
      {-1, "json type=\"object\""}, {-1, "message"}, {-1, " "}, {-1, "x"}, {-1, "{\"a\":1}"}, {-1, "12"},
      {-1, "\xE6"}, {-1, "\x9D\xB1"}, {-1, "\xFF"}, {-1, "\""}, {-1, "&quot;"}};
  std::mt19937 rng(1234);
  for (int round = 0; round < 3000; ++round) {
    std::vector<OwnedToken> tokens;
    const size_t length = rng() % 40;
    for (size_t i = 0; i < length; ++i) tokens.push_back(alphabet[rng() % alphabet.size()]);
    for (OutputStart start : {OutputStart::kThinkChannel, OutputStart::kResponseChannel, OutputStart::kBeforeMessage}) {
      ParserRun run = Feed(tokens, start);
      for (const OutputEvent& event : run.events) ASSERT_TRUE(IsWholeUtf8(event.text));
      for (const ParsedToolCall& call : run.parsed.tool_calls) {
        ASSERT_TRUE(call.finished);
        if (call.arguments.starts_with("{\"")) {
          // Argument blocks always assemble into valid JSON.
          EXPECT_FALSE(nlohmann::json::parse(call.arguments, nullptr, false).is_discarded()) << call.arguments;
        }
      }
    }
  }
}

}  // namespace
}  // namespace kimi::chat
