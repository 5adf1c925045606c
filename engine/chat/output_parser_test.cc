#include "kimi/output_parser.h"

#include <gtest/gtest.h>

namespace kimi {
namespace {

class EchoParser : public OutputParser {
 public:
  void Feed(const GeneratedToken& token, std::vector<OutputEvent>* events) override {
    events->push_back({OutputEventKind::kAnswer, std::string(token.text), "", -1});
  }
  void Finish(std::vector<OutputEvent>*) override {}
  bool done() const override { return false; }
  size_t warning_count() const override { return 0; }
};

TEST(OutputParserRegistry, CreatesTheK3ParserByName) {
  Result<std::unique_ptr<OutputParser>> parser = OutputParserRegistry::Create("kimi_k3");
  ASSERT_TRUE(parser.ok()) << parser.status().ToString();
  EXPECT_NE(parser->get(), nullptr);
}

TEST(OutputParserRegistry, UnknownNameFailsListingTheKnownOnes) {
  Result<std::unique_ptr<OutputParser>> parser = OutputParserRegistry::Create("kimi_k9");
  ASSERT_FALSE(parser.ok());
  EXPECT_EQ(parser.status().code(), Status::Code::kNotFound);
  EXPECT_NE(parser.status().message().find("kimi_k3"), std::string::npos);
}

TEST(OutputParserRegistry, RegistersNewNamesOnce) {
  auto factory = [](const OutputParserOptions&) { return std::make_unique<EchoParser>(); };
  ASSERT_TRUE(OutputParserRegistry::Register("echo_for_test", factory).ok());
  EXPECT_EQ(OutputParserRegistry::Register("echo_for_test", factory).code(), Status::Code::kAlreadyExists);
  EXPECT_EQ(OutputParserRegistry::Register("kimi_k3", factory).code(), Status::Code::kAlreadyExists);
  EXPECT_EQ(OutputParserRegistry::Register("", factory).code(), Status::Code::kInvalidArgument);
  auto names = OutputParserRegistry::Names();
  EXPECT_NE(std::find(names.begin(), names.end(), "echo_for_test"), names.end());
  auto parser = OutputParserRegistry::Create("echo_for_test");
  ASSERT_TRUE(parser.ok());
  std::vector<OwnedToken> tokens = {{1, "a"}, {2, "b"}};
  EXPECT_EQ(ParseOutput(**parser, AsGeneratedTokens(tokens)).answer, "ab");
}

TEST(FoldEvents, AssemblesChannelsAndCallsByIndex) {
  std::vector<OutputEvent> events = {
      {OutputEventKind::kReasoning, "r1", "", -1},
      {OutputEventKind::kToolCallBegin, "", "f", 0},
      {OutputEventKind::kToolCallArguments, "{\"a\":", "", 0},
      {OutputEventKind::kReasoning, "r2", "", -1},
      {OutputEventKind::kToolCallArguments, "1}", "", 0},
      {OutputEventKind::kToolCallEnd, "", "f", 0},
      {OutputEventKind::kAnswer, "x", "", -1},
  };
  ParsedOutput out = FoldEvents(events);
  EXPECT_EQ(out.reasoning, "r1r2");
  EXPECT_EQ(out.answer, "x");
  ASSERT_EQ(out.tool_calls.size(), 1u);
  EXPECT_EQ(out.tool_calls[0].name, "f");
  EXPECT_EQ(out.tool_calls[0].arguments, "{\"a\":1}");
  EXPECT_TRUE(out.tool_calls[0].finished);
}

TEST(SplitAtSpecialTokens, GivesSpecialsTheirIdsAndCutsText) {
  SpecialTokenIds ids;
  auto tokens = SplitAtSpecialTokens("ab<|open|>cde<|sep|>[EOS]", ids, 2);
  ASSERT_EQ(tokens.size(), 6u);
  EXPECT_EQ(tokens[0].text, "ab");
  EXPECT_EQ(tokens[1].id, ids.open);
  EXPECT_EQ(tokens[2].text, "cd");
  EXPECT_EQ(tokens[3].text, "e");
  EXPECT_EQ(tokens[3].id, -1);
  EXPECT_EQ(tokens[4].id, ids.sep);
  EXPECT_EQ(tokens[5].id, ids.eos);
}

}  // namespace
}  // namespace kimi
