#include "kimi/chat_format.h"

#include <gtest/gtest.h>

#include "chat/chat_test_data.h"

namespace kimi {
namespace {

using Json = nlohmann::ordered_json;
using chat::testing::ReadJsonFile;
using chat::testing::TestDataFiles;

class GoldenTest : public ::testing::TestWithParam<std::filesystem::path> {};

TEST_P(GoldenTest, RendersLikeTheReferenceTemplate) {
  const Json golden = ReadJsonFile(GetParam());
  Result<RenderedPrompt> prompt = ChatFormat::Render(golden["request"]);
  if (golden.contains("expected")) {
    ASSERT_TRUE(prompt.ok()) << prompt.status().ToString();
    EXPECT_EQ(prompt->text, golden["expected"].get<std::string>());
  } else {
    ASSERT_FALSE(prompt.ok()) << "the template raised: " << golden["error"].get<std::string>();
    EXPECT_EQ(prompt.status().code(), Status::Code::kInvalidArgument);
    EXPECT_NE(prompt.status().message().find(golden["error_field"].get<std::string>()), std::string::npos)
        << prompt.status().message();
  }
}

std::string CaseName(const ::testing::TestParamInfo<std::filesystem::path>& info) {
  std::string name = info.param.stem().string();
  for (char& c : name) {
    if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
  }
  return name;
}

INSTANTIATE_TEST_SUITE_P(Golden, GoldenTest, ::testing::ValuesIn(TestDataFiles("golden")), CaseName);

TEST(GoldenData, CoversAtLeastFortyConversations) {
  size_t rendered = 0;
  for (const auto& path : TestDataFiles("golden")) rendered += ReadJsonFile(path).contains("expected") ? 1 : 0;
  EXPECT_GE(rendered, 40u);
}

// OpenAI's developer role is its newer models' system role: every golden conversation renders
// the same with each system message sent as a developer message (names, content parts and
// dynamic tool declarations included).
TEST(ChatFormat, DeveloperMessagesRenderAsSystemMessages) {
  size_t with_system = 0;
  for (const auto& path : TestDataFiles("golden")) {
    const Json golden = ReadJsonFile(path);
    if (!golden.contains("expected")) continue;
    Json request = golden["request"];
    bool changed = false;
    for (Json& message : request["messages"]) {
      if (message.is_object() && message.value("role", "") == "system") {
        message["role"] = "developer";
        changed = true;
      }
    }
    if (!changed) continue;
    ++with_system;
    Result<RenderedPrompt> prompt = ChatFormat::Render(request);
    ASSERT_TRUE(prompt.ok()) << path << ": " << prompt.status().ToString();
    EXPECT_EQ(prompt->text, golden["expected"].get<std::string>()) << path;
  }
  EXPECT_GE(with_system, 5u);

  const Json body = {{"messages", {{{"role", "developer"}, {"content", "You are a support bot."}},
                                   {{"role", "user"}, {"content", "hi"}}}},
                     {"thinking", false}};
  Result<RenderedPrompt> prompt = ChatFormat::Render(body);
  ASSERT_TRUE(prompt.ok()) << prompt.status().ToString();
  EXPECT_EQ(prompt->text,
            "<|open|>message role=\"system\"<|sep|>You are a support bot.<|close|>message<|sep|><|end_of_msg|>"
            "<|open|>message role=\"user\"<|sep|>hi<|close|>message<|sep|><|end_of_msg|>"
            "<|open|>message role=\"assistant\"<|sep|><|open|>response<|sep|>");
}

const char* kVerifierQuestion = "请用 JSON 格式回答：北京是中国的首都吗？答案需要包含键 capital。";

TEST(ChatFormat, VerifierPromptEndsWithTheResponseStub) {
  Json body = {{"messages", {{{"role", "user"}, {"content", kVerifierQuestion}}}}, {"thinking", {{"type", "disabled"}}}};
  Result<RenderedPrompt> prompt = ChatFormat::Render(body);
  ASSERT_TRUE(prompt.ok()) << prompt.status().ToString();
  EXPECT_EQ(ChatFormat::GenerationStub(false), "<|open|>response<|sep|>");
  EXPECT_EQ(prompt->generation_stub_size, ChatFormat::GenerationStub(false).size());
  EXPECT_EQ(prompt->text_without_stub(),
            std::string("<|open|>message role=\"user\"<|sep|>") + kVerifierQuestion +
                "<|close|>message<|sep|><|end_of_msg|><|open|>message role=\"assistant\"<|sep|>");
}

TEST(ChatFormat, ThinkingStubAndNoStubWithoutGenerationPrompt) {
  Json body = {{"messages", {{{"role", "user"}, {"content", "hi"}}}}};
  Result<RenderedPrompt> prompt = ChatFormat::Render(body);
  ASSERT_TRUE(prompt.ok());
  EXPECT_TRUE(prompt->text.ends_with("<|open|>message role=\"assistant\"<|sep|><|open|>think<|sep|>"));
  EXPECT_EQ(prompt->generation_stub_size, std::string_view("<|open|>think<|sep|>").size());

  body["add_generation_prompt"] = false;
  prompt = ChatFormat::Render(body);
  ASSERT_TRUE(prompt.ok());
  EXPECT_EQ(prompt->generation_stub_size, 0u);
  EXPECT_EQ(prompt->text_without_stub(), prompt->text);
}

TEST(ChatFormat, ArgumentMappingKeepsItsKeyOrder) {
  Result<ChatRequest> request = ParseChatRequest(std::string_view(R"({"messages": [
      {"role": "assistant", "tool_calls": [{"id": "a", "function": {"name": "f", "arguments": {"z": 1, "a": 2}}}]}],
      "thinking": false, "add_generation_prompt": false})"));
  ASSERT_TRUE(request.ok()) << request.status().ToString();
  Result<RenderedPrompt> prompt = ChatFormat::Render(*request);
  ASSERT_TRUE(prompt.ok());
  EXPECT_LT(prompt->text.find("key=\"z\""), prompt->text.find("key=\"a\""));
}

// OpenAI clients send arguments as JSON text; Kimi's tokenizer parses such text before the
// template runs, so the history renders exactly as if the client had sent the object.
TEST(ChatFormat, ArgumentJsonTextRendersAsItsObject) {
  auto render = [](const Json& arguments) {
    Json body = {{"messages", {{{"role", "assistant"},
                                {"tool_calls", {{{"id", "a"}, {"function", {{"name", "f"}, {"arguments", arguments}}}}}}}}},
                 {"thinking", false}, {"add_generation_prompt", false}};
    Result<RenderedPrompt> prompt = ChatFormat::Render(body);
    EXPECT_TRUE(prompt.ok()) << prompt.status().ToString();
    return prompt.ok() ? prompt->text : std::string();
  };
  const std::string from_object = render(Json::parse(R"({"city": "北京", "days": 2.0, "tags": ["a", null]})"));
  EXPECT_EQ(render(R"( {"city": "北京", "days": 2.0, "tags": ["a", null]} )"), from_object);
  EXPECT_NE(from_object.find("<|open|>argument key=\"city\" type=\"string\"<|sep|>北京<|close|>argument<|sep|>"
                             "<|open|>argument key=\"days\" type=\"number\"<|sep|>2.0<|close|>argument<|sep|>"
                             "<|open|>argument key=\"tags\" type=\"array\"<|sep|>[\"a\", null]<|close|>argument<|sep|>"),
            std::string::npos)
      << from_object;
  // Text that is not JSON is kept verbatim in a json block; blank text writes nothing.
  EXPECT_NE(render("{city: 北京").find("<|open|>json type=\"object\"<|sep|>{city: 北京<|close|>json<|sep|>"),
            std::string::npos);
  EXPECT_EQ(render(" \n"), render(Json(nullptr)));
}

TEST(ChatFormat, ArgumentJsonTextMustHoldAnObject) {
  for (const char* text : {"[1, 2]", "\"x\"", "5", "null"}) {
    Json body = {{"messages", {{{"role", "assistant"},
                                {"tool_calls", {{{"id", "a"}, {"function", {{"name", "f"}, {"arguments", text}}}}}}}}}};
    Result<RenderedPrompt> prompt = ChatFormat::Render(body);
    ASSERT_FALSE(prompt.ok()) << text;
    EXPECT_NE(prompt.status().message().find("messages[0].tool_calls[0].function.arguments"), std::string::npos)
        << prompt.status().message();
  }
  std::string deep;
  for (int i = 0; i < 300; ++i) deep += "{\"a\":";
  deep += "1" + std::string(300, '}');
  Json body = {{"messages", {{{"role", "assistant"},
                              {"tool_calls", {{{"id", "a"}, {"function", {{"name", "f"}, {"arguments", deep}}}}}}}}}};
  Result<RenderedPrompt> prompt = ChatFormat::Render(body);
  ASSERT_FALSE(prompt.ok());
  EXPECT_NE(prompt.status().message().find("nested deeper"), std::string::npos) << prompt.status().message();
}

TEST(ParseChatRequest, ReadsEveryThinkingSource) {
  auto parse = [](const char* text) { return ParseChatRequest(std::string_view(text)); };
  EXPECT_FALSE(parse(R"({"messages": [], "thinking": {"type": "disabled"}})")->thinking);
  EXPECT_TRUE(parse(R"({"messages": [], "thinking": {"type": "enabled"}})")->thinking);
  EXPECT_FALSE(parse(R"({"messages": [], "thinking": true, "chat_template_kwargs": {"thinking": false}})")->thinking);
  EXPECT_EQ(parse(R"({"messages": [], "reasoning_effort": "low"})")->thinking_effort, "low");
  EXPECT_EQ(parse(R"({"messages": [], "reasoning_effort": "low", "thinking_effort": "high"})")->thinking_effort, "high");
  EXPECT_TRUE(parse(R"({"messages": [], "thinking_effort": null})")->thinking_effort.is_null());
  EXPECT_FALSE(parse(R"({"messages": [], "preserve_thinking": false})")->preserve_thinking);
  EXPECT_EQ(parse(R"({"messages": []})")->thinking_effort, "max");
}

TEST(ParseChatRequest, RejectsWrongTypesNamingTheField) {
  struct Case {
    const char* body;
    const char* field;
  } cases[] = {
      {R"([])", "request body"},
      {R"({"messages": {}})", "messages"},
      {R"({})", "messages"},
      {R"({"messages": [], "thinking": "yes"})", "thinking"},
      {R"({"messages": [], "thinking": {"type": "auto"}})", "thinking"},
      {R"({"messages": [], "add_generation_prompt": 1})", "add_generation_prompt"},
      {R"({"messages": [], "chat_template_kwargs": []})", "chat_template_kwargs"},
      {R"({"messages": [], "chat_template_kwargs": {"preserve_thinking": "no"}})", "chat_template_kwargs.preserve_thinking"},
      {R"({"messages": [)", "not valid JSON"},
  };
  for (const Case& c : cases) {
    Result<ChatRequest> request = ParseChatRequest(std::string_view(c.body));
    ASSERT_FALSE(request.ok()) << c.body;
    EXPECT_EQ(request.status().code(), Status::Code::kInvalidArgument);
    EXPECT_NE(request.status().message().find(c.field), std::string::npos) << request.status().message();
  }
}

TEST(ChatFormat, StricterThanTheTemplateOnNonsenseContent) {
  Json body = {{"messages", {{{"role", "user"}, {"content", 5}}}}};
  Result<RenderedPrompt> prompt = ChatFormat::Render(body);
  ASSERT_FALSE(prompt.ok());
  EXPECT_NE(prompt.status().message().find("messages[0]"), std::string::npos);
  body = {{"messages", {{{"role", "assistant"}, {"tool_calls", "f"}}}}};
  prompt = ChatFormat::Render(body);
  ASSERT_FALSE(prompt.ok());
  EXPECT_NE(prompt.status().message().find("messages[0].tool_calls"), std::string::npos);
}

TEST(ChatFormat, ThinkingEffortErrorNamesTheValue) {
  Json body = {{"messages", Json::array()}, {"thinking_effort", "ultra"}};
  Result<RenderedPrompt> prompt = ChatFormat::Render(body);
  ASSERT_FALSE(prompt.ok());
  EXPECT_NE(prompt.status().message().find("thinking_effort: unsupported value ultra"), std::string::npos);
  body["thinking_effort"] = 3;
  EXPECT_FALSE(ChatFormat::Render(body).ok());
}

TEST(ChatFormat, RefusesPathologicallyDeepJson) {
  Json deep = Json::array();
  for (int i = 0; i < 5000; ++i) deep = Json::array({std::move(deep)});
  Json body = {{"messages", {{{"role", "user"}, {"content", "x"}}}}};
  body["tools"] = std::move(deep);
  Result<RenderedPrompt> prompt = ChatFormat::Render(body);
  ASSERT_FALSE(prompt.ok());
  EXPECT_NE(prompt.status().message().find("tools: nested deeper"), std::string::npos);
  Json shallow = Json::array();
  for (int i = 0; i < 150; ++i) shallow = Json::array({std::move(shallow)});
  body["tools"] = shallow;
  EXPECT_TRUE(ChatFormat::Render(body).ok());
  // From text, the depth is checked before anything parses it.
  std::string text = R"({"messages": [], "response_format": )" + std::string(200000, '[') + std::string(200000, ']') + "}";
  Result<ChatRequest> request = ParseChatRequest(std::string_view(text));
  ASSERT_FALSE(request.ok());
  EXPECT_EQ(request.status().message(), "request body: JSON nests deeper than 256 levels");
}

}  // namespace
}  // namespace kimi
