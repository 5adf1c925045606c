// ChatService on a k3-nano model synthesised into a temp dir, with the demo tokenizer
// trained on the repository's text (as `kimi-engine synth` does): a chat request streams
// parser events and ends with usage that counts the rendered prompt; the same seed gives the
// same events; /v1/completions gives answer text only; bad bodies fail in Start() before
// anything is submitted; Cancel() ends the stream without a finish event and the runtime
// counts the cancellation.
#include "kimi/chat_service.h"

#include <gtest/gtest.h>


#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <thread>

#include "io/k3_presets.h"
#include "io/test_util.h"
#include "kimi/chat_format.h"
#include "kimi/prompt_encoding.h"
#include "kimi/prompt_work.h"
#include "kimi/serving_request.h"
#include "text/bpe_trainer.h"

namespace kimi {
namespace {

namespace fs = std::filesystem;
using Json = nlohmann::ordered_json;

// A body read as the worker protocol reads it, then started.
Result<std::unique_ptr<ChatStream>> StartBody(ChatService& service, const Json& body, ServingEndpoint endpoint) {
  KIMI_ASSIGN_OR_RETURN(ServingRequest request, ReadServingRequest(body, endpoint));
  return service.Start(request);
}

// The prompt of a body, rendered.
Result<EncodedRequestPrompt> Rendered(const Json& body, ServingEndpoint endpoint) {
  KIMI_ASSIGN_OR_RETURN(ServingRequest request, ReadServingRequest(body, endpoint));
  return RenderRequestPrompt(request);
}

struct Collected {
  std::vector<ChatEvent> events;
  ParsedOutput output;
  bool finished = false;
  std::string finish_reason;
  ChatUsage usage;
  Status error;
};

Collected Drain(ChatStream& stream) {
  Collected c;
  ChatEvent e;
  while (stream.Next(&e)) {
    c.events.push_back(e);
    if (e.kind == ChatEvent::Kind::kOutput) FoldEvent(e.output, &c.output);
    if (e.kind == ChatEvent::Kind::kFinish) {
      c.finished = true;
      c.finish_reason = e.finish_reason;
      c.usage = e.usage;
    }
    if (e.kind == ChatEvent::Kind::kError) c.error = e.error;
  }
  return c;
}

Json ChatBody(int max_tokens) {
  return Json{{"messages", Json::array({Json{{"role", "user"}, {"content", "Name three rivers."}}})},
              {"max_tokens", max_tokens},
              {"temperature", 0}};
}

class ChatServiceTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    const char* source = std::getenv("KIMI_SOURCE_DIR");
    ASSERT_NE(source, nullptr) << "KIMI_SOURCE_DIR is set by kimi_add_test";
    auto dir = testing_util::WriteTestModel("chat_service_test", "k3-nano", /*seed=*/3);
    ASSERT_TRUE(dir.ok()) << dir.status().ToString();
    dir_ = new std::string(std::move(dir).value());
    auto config = K3Preset("k3-nano");
    ASSERT_TRUE(config.ok());
    Status trained = TrainDemoTokenizer(DemoCorpusFiles(source), int(config->vocab_size - Tokenizer::kNumSpecialTokens), *dir_);
    ASSERT_TRUE(trained.ok()) << trained.ToString();
    ChatServiceOptions options;
    options.model.threads = 2;
    options.default_max_tokens = 16;
    auto service = ChatService::Open(*dir_, options);
    ASSERT_TRUE(service.ok()) << service.status().ToString();
    service_ = std::move(service).value().release();
  }
  static void TearDownTestSuite() {
    delete service_;
    fs::remove_all(*dir_);
    delete dir_;
  }

  static std::string* dir_;
  static ChatService* service_;
};
std::string* ChatServiceTest::dir_ = nullptr;
ChatService* ChatServiceTest::service_ = nullptr;

TEST_F(ChatServiceTest, ChatRequestStreamsEventsAndCountsTheRenderedPrompt) {
  const Json body = ChatBody(12);
  auto stream = StartBody(*service_, body, ServingEndpoint::kChatCompletions);
  ASSERT_TRUE(stream.ok()) << stream.status().ToString();
  Collected c = Drain(**stream);
  ASSERT_TRUE(c.error.ok()) << c.error.ToString();
  ASSERT_TRUE(c.finished);
  EXPECT_EQ(c.events.back().kind, ChatEvent::Kind::kFinish);

  auto rendered = ChatFormat::Render(body);
  ASSERT_TRUE(rendered.ok());
  auto ids = EncodePrompt(service_->tokenizer(), *rendered);
  ASSERT_TRUE(ids.ok());
  EXPECT_EQ(c.usage.prompt_tokens, int64_t(ids->prompt_tokens));
  EXPECT_EQ((*stream)->prompt_tokens(), int64_t(ids->prompt_tokens));
  EXPECT_GE(c.usage.completion_tokens, 1);
  EXPECT_LE(c.usage.completion_tokens, 12);
  EXPECT_LE(c.usage.reasoning_tokens, c.usage.completion_tokens);
  if (c.usage.completion_tokens < 12) {
    EXPECT_NE(c.finish_reason, "length");
  } else {
    EXPECT_TRUE(c.finish_reason == "length" || c.finish_reason == "stop" || c.finish_reason == "tool_calls");
  }
  if (c.finish_reason == "tool_calls") {
    EXPECT_FALSE(c.output.tool_calls.empty());
  }
  // Thinking is on by default: generation starts in the thinking channel.
  for (const ChatEvent& e : c.events) {
    if (e.kind != ChatEvent::Kind::kOutput) continue;
    EXPECT_EQ(e.output.kind, OutputEventKind::kReasoning) << "the first output event is reasoning";
    break;
  }
  const std::string all = c.output.reasoning + c.output.answer;
  EXPECT_EQ(all.find("\xEF\xBF\xBD"), std::string::npos) << "no replacement characters";
}

// The count the policy step checks before submission is the one the stream reports.
TEST_F(ChatServiceTest, CountPromptTokensIsWhatTheRequestReports) {
  Json chat = ChatBody(4);
  chat["messages"].push_back(Json{{"role", "assistant"}, {"content", "Mekong, Yangtze, Danube."}});
  chat["messages"].push_back(Json{{"role", "user"}, {"content", "Và ba con sông nữa? 再说三条。"}});
  const Json completion{{"prompt", "Once upon a time"}, {"max_tokens", 4}};
  for (const auto& [body, endpoint] : {std::pair{chat, ServingEndpoint::kChatCompletions},
                                       std::pair{completion, ServingEndpoint::kCompletions}}) {
    auto stream = StartBody(*service_, body, endpoint);
    ASSERT_TRUE(stream.ok()) << stream.status().ToString();
    const int64_t reported = (*stream)->prompt_tokens();
    (*stream)->Cancel();
    auto prompt = Rendered(body, endpoint);
    ASSERT_TRUE(prompt.ok()) << prompt.status().ToString();
    // A generous bound skips tokenising and answers an upper bound; a tight one counts.
    EncodedRequestPrompt bounded_prompt = *prompt;
    auto bounded = CountPromptTokens(service_->tokenizer(), endpoint, &bounded_prompt, 1 << 20);
    ASSERT_TRUE(bounded.ok());
    EXPECT_FALSE(bounded->exact);
    EXPECT_GE(bounded->tokens, reported);
    EXPECT_FALSE(bounded_prompt.tokenised);
    for (int64_t bound : {int64_t{-1}, int64_t{1}}) {
      EncodedRequestPrompt counted_prompt = *prompt;
      auto exact = CountPromptTokens(service_->tokenizer(), endpoint, &counted_prompt, bound);
      ASSERT_TRUE(exact.ok()) << exact.status().ToString();
      EXPECT_TRUE(exact->exact);
      EXPECT_EQ(exact->tokens, reported);
      EXPECT_TRUE(counted_prompt.tokenised) << "an exact count keeps its ids";
    }
  }
}

// A prompt made before submission is rendered and tokenised once: Start runs what it was
// handed (ids of its own tokenizer), and the request reports what one not handed a prompt
// reports. Ids another tokenizer made are encoded again.
TEST_F(ChatServiceTest, HandedPromptIsRunWithoutRenderingOrTokenisingAgain) {
  const Tokenizer& tokenizer = service_->tokenizer();
  const Json chat = ChatBody(3);
  const Json completion{{"prompt", "Once upon a time"}, {"max_tokens", 3}, {"temperature", 0}};
  for (const auto& [body, endpoint] : {std::pair{chat, ServingEndpoint::kChatCompletions},
                                       std::pair{completion, ServingEndpoint::kCompletions}}) {
    auto request = ReadServingRequest(body, endpoint);
    ASSERT_TRUE(request.ok()) << request.status().ToString();
    auto prompt = RenderRequestPrompt(*request);
    ASSERT_TRUE(prompt.ok()) << prompt.status().ToString();
    ASSERT_TRUE(CountPromptTokens(tokenizer, endpoint, &*prompt).ok());

    const PromptWorkCounts before = PromptWork();
    auto plain = service_->Start(*request);
    const PromptWorkCounts after_plain = PromptWork();
    auto handed = service_->Start(*request, {.prepared = &*prompt});
    const PromptWorkCounts after_handed = PromptWork();
    ASSERT_TRUE(plain.ok() && handed.ok());
    EXPECT_EQ(after_plain.tokenizations - before.tokenizations, 1u);
    EXPECT_EQ(after_handed.tokenizations, after_plain.tokenizations) << "the handed ids are run";
    EXPECT_EQ(after_handed.renders, after_plain.renders) << "the handed rendering is used";
    EXPECT_EQ((*handed)->prompt_tokens(), (*plain)->prompt_tokens());
    const Collected a = Drain(**plain);
    const Collected b = Drain(**handed);
    ASSERT_TRUE(a.finished && b.finished);
    EXPECT_EQ(b.usage.prompt_tokens, a.usage.prompt_tokens);

    // Ids planted under this tokenizer come back as planted; another tokenizer's are replaced.
    EncodedRequestPrompt planted = *prompt;
    planted.ids = {5, 6, 7};
    ASSERT_TRUE(TokeniseRequestPrompt(tokenizer, endpoint, &planted).ok());
    EXPECT_EQ(planted.ids, (std::vector<int32_t>{5, 6, 7}));
    planted.tokenizer_id = tokenizer.id() + 1;
    ASSERT_TRUE(TokeniseRequestPrompt(tokenizer, endpoint, &planted).ok());
    EXPECT_EQ(planted.ids, prompt->ids);
  }
}

TEST_F(ChatServiceTest, SameSeedGivesTheSameEvents) {
  Json body = ChatBody(10);
  body["temperature"] = 1.0;
  body["seed"] = 1234;
  auto a = StartBody(*service_, body, ServingEndpoint::kChatCompletions);
  ASSERT_TRUE(a.ok());
  Collected first = Drain(**a);
  auto b = StartBody(*service_, body, ServingEndpoint::kChatCompletions);
  ASSERT_TRUE(b.ok());
  Collected second = Drain(**b);
  EXPECT_EQ(first.output, second.output);
  EXPECT_EQ(first.usage.completion_tokens, second.usage.completion_tokens);
}

TEST_F(ChatServiceTest, ThinkingOffStartsInTheAnswer) {
  Json body = ChatBody(8);
  body["thinking"] = Json{{"type", "disabled"}};
  auto stream = StartBody(*service_, body, ServingEndpoint::kChatCompletions);
  ASSERT_TRUE(stream.ok()) << stream.status().ToString();
  Collected c = Drain(**stream);
  ASSERT_TRUE(c.finished);
  for (const ChatEvent& e : c.events) {
    if (e.kind != ChatEvent::Kind::kOutput) continue;
    EXPECT_NE(e.output.kind, OutputEventKind::kReasoning);
    break;
  }
}

TEST_F(ChatServiceTest, CompletionsGiveAnswerTextOnly) {
  const Json body{{"prompt", "The river flows"}, {"max_tokens", 8}, {"temperature", 0}};
  auto stream = StartBody(*service_, body, ServingEndpoint::kCompletions);
  ASSERT_TRUE(stream.ok()) << stream.status().ToString();
  Collected c = Drain(**stream);
  ASSERT_TRUE(c.finished);
  for (const ChatEvent& e : c.events) {
    if (e.kind == ChatEvent::Kind::kOutput) {
      EXPECT_EQ(e.output.kind, OutputEventKind::kAnswer);
    }
  }
  auto ids = service_->tokenizer().Encode("The river flows", false);
  ASSERT_TRUE(ids.ok());
  EXPECT_EQ(c.usage.prompt_tokens, int64_t(ids->size()));
  EXPECT_EQ(c.usage.reasoning_tokens, 0);
  EXPECT_TRUE(c.output.reasoning.empty());
}

TEST_F(ChatServiceTest, BadBodiesFailBeforeSubmission) {
  const int64_t before = service_->Counters().requests_refused + service_->Counters().requests_finished;
  EXPECT_EQ(StartBody(*service_, Json{{"max_tokens", 4}}, ServingEndpoint::kChatCompletions).status().code(),
            Status::Code::kInvalidArgument);
  Json hot = ChatBody(4);
  hot["temperature"] = "hot";
  auto s = StartBody(*service_, hot, ServingEndpoint::kChatCompletions);
  EXPECT_EQ(s.status().code(), Status::Code::kInvalidArgument);
  EXPECT_NE(s.status().message().find("temperature"), std::string::npos) << s.status().message();
  Json zero = ChatBody(4);
  zero["max_tokens"] = 0;
  EXPECT_EQ(StartBody(*service_, zero, ServingEndpoint::kChatCompletions).status().code(), Status::Code::kInvalidArgument);
  EXPECT_EQ(StartBody(*service_, Json{{"prompt", 7}}, ServingEndpoint::kCompletions).status().code(),
            Status::Code::kInvalidArgument);
  EXPECT_EQ(service_->Counters().requests_refused + service_->Counters().requests_finished, before);
}

TEST_F(ChatServiceTest, CancelEndsTheStreamWithoutAFinishAndIsCounted) {
  const int64_t cancelled_before = service_->Counters().requests_cancelled;
  auto stream = StartBody(*service_, ChatBody(4000), ServingEndpoint::kChatCompletions);
  ASSERT_TRUE(stream.ok());
  ChatEvent e;
  (*stream)->Cancel();
  bool finished = false;
  while ((*stream)->Next(&e)) finished = finished || e.kind == ChatEvent::Kind::kFinish;
  EXPECT_FALSE(finished);
  // The counters are a snapshot taken by the scheduler thread after each step.
  for (int i = 0; i < 200 && service_->Counters().requests_cancelled == cancelled_before; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  EXPECT_EQ(service_->Counters().requests_cancelled, cancelled_before + 1);
  EXPECT_EQ(service_->Counters().running, 0);
}

// Random weights never close a JSON value or a tool call by chance: only the constraint
// built from response_format / tool_choice makes these finish as asked.
TEST_F(ChatServiceTest, JsonSchemaAnswerIsCompactAndValidUnderRandomWeights) {
  const Json schema = Json::parse(R"({"type":"object","properties":{"capital":{"type":"string",
      "enum":["Beijing","Shanghai"]}},"required":["capital"],"additionalProperties":false})");
  for (bool thinking : {false, true}) {
    Json body = ChatBody(256);
    body["temperature"] = 1.0;
    body["seed"] = 11;
    body["thinking"] = Json{{"type", thinking ? "enabled" : "disabled"}};
    body["response_format"] = Json{{"type", "json_schema"}, {"json_schema", {{"name", "capital_answer"}, {"schema", schema}}}};
    auto stream = StartBody(*service_, body, ServingEndpoint::kChatCompletions);
    ASSERT_TRUE(stream.ok()) << stream.status().ToString();
    Collected c = Drain(**stream);
    ASSERT_TRUE(c.finished) << c.error.ToString();
    EXPECT_EQ(c.finish_reason, "stop") << "thinking " << thinking;
    EXPECT_EQ(c.output.answer.find_first_of("\n\t"), std::string::npos) << c.output.answer;
    Json answer = Json::parse(c.output.answer, nullptr, /*allow_exceptions=*/false);
    ASSERT_TRUE(answer.is_object()) << c.output.answer;
    EXPECT_TRUE(answer["capital"] == "Beijing" || answer["capital"] == "Shanghai") << c.output.answer;
  }
}

// However long the random model would reason or write inside a string, the constraint closes
// the call before max_tokens (the shortest whole turn here is about 140 tokens with thinking).
TEST_F(ChatServiceTest, RequiredToolChoiceEndsInAValidCall) {
  for (bool thinking : {false, true}) {
    Json body = ChatBody(200);
    body["temperature"] = 1.0;
    body["seed"] = 5;
    body["thinking"] = Json{{"type", thinking ? "enabled" : "disabled"}};
    body["tools"] = Json::parse(R"([{"type":"function","function":{"name":"get_weather","parameters":{"type":"object",
        "properties":{"city":{"type":"string","enum":["Beijing","Paris"]},"note":{"type":"string"}},
        "required":["city","note"],"additionalProperties":false}}}])");
    body["tool_choice"] = "required";
    auto stream = StartBody(*service_, body, ServingEndpoint::kChatCompletions);
    ASSERT_TRUE(stream.ok()) << stream.status().ToString();
    Collected c = Drain(**stream);
    ASSERT_TRUE(c.finished) << c.error.ToString();
    EXPECT_EQ(c.finish_reason, "tool_calls") << "thinking " << thinking;
    ASSERT_FALSE(c.output.tool_calls.empty());
    EXPECT_EQ(c.output.tool_calls[0].name, "get_weather");
    Json arguments = Json::parse(c.output.tool_calls[0].arguments, nullptr, /*allow_exceptions=*/false);
    ASSERT_TRUE(arguments.is_object()) << c.output.tool_calls[0].arguments;
    EXPECT_TRUE(arguments["city"] == "Beijing" || arguments["city"] == "Paris");
  }
}

TEST_F(ChatServiceTest, UnsupportedSchemaKeywordIsRefusedByName) {
  Json body = ChatBody(8);
  body["response_format"] = Json::parse(
      R"({"type":"json_schema","json_schema":{"name":"x","schema":{"type":"string","contentEncoding":"base64"}}})");
  auto stream = StartBody(*service_, body, ServingEndpoint::kChatCompletions);
  ASSERT_FALSE(stream.ok());
  EXPECT_EQ(stream.status().code(), Status::Code::kInvalidArgument);
  EXPECT_NE(stream.status().message().find("contentEncoding"), std::string::npos) << stream.status().ToString();
  EXPECT_EQ(stream.status().message().rfind("response_format.json_schema.schema ", 0), 0u) << stream.status().ToString();
}

TEST(GenerationParamsTest, ReadsTheSamplingFields) {
  const Json body{{"temperature", 0.6}, {"top_p", 0.95}, {"top_k", 20}, {"seed", 7},
                  {"stop", Json::array({"END", "###"})}, {"max_completion_tokens", 30}, {"max_tokens", 99},
                  {"logprobs", true}, {"top_logprobs", 3}};
  auto p = ReadGenerationParams(body);
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  EXPECT_FLOAT_EQ(p->sampling.temperature, 0.6f);
  EXPECT_FLOAT_EQ(p->sampling.top_p, 0.95f);
  EXPECT_EQ(p->sampling.top_k, 20);
  EXPECT_EQ(p->sampling.seed, 7u);
  EXPECT_EQ(p->sampling.top_logprobs, 3);
  EXPECT_EQ(p->stop, (std::vector<std::string>{"END", "###"}));
  EXPECT_EQ(p->max_tokens, 30) << "max_completion_tokens wins over max_tokens";
  auto biased = ReadGenerationParams(Json::parse(R"({"logit_bias":{"5":-100,"12":2.5}})"));
  ASSERT_TRUE(biased.ok()) << biased.status().ToString();
  EXPECT_EQ(biased->sampling.logit_bias, (std::vector<std::pair<int32_t, float>>{{5, -100.0f}, {12, 2.5f}}));
  for (const char* refused : {R"({"logit_bias":{"05":1}})", R"({"logit_bias":{"-1":1}})", R"({"logit_bias":{"x":1}})",
                              R"({"logit_bias":{"5":"1"}})", R"({"logit_bias":[1]})"}) {
    EXPECT_EQ(ReadGenerationParams(Json::parse(refused)).status().code(), Status::Code::kInvalidArgument) << refused;
  }
}

TEST(GenerationParamsTest, RefusesWrongTypesNamingTheField) {
  for (const auto& [key, value] : std::vector<std::pair<std::string, Json>>{
           {"stop", Json::array({1})}, {"stop", ""}, {"top_k", 1.5}, {"top_logprobs", 3}, {"seed", "x"},
           {"max_tokens", -2}, {"max_tokens", 2.5}}) {
    auto p = ReadGenerationParams(Json{{key, value}});
    EXPECT_EQ(p.status().code(), Status::Code::kInvalidArgument) << key << "=" << value.dump();
  }
  // An integral number written as a float is that integer, as the appliance's rules read it.
  EXPECT_EQ(ReadGenerationParams(Json{{"max_tokens", 5.0}})->max_tokens, 5);
  // 2^63 was read as -2^63 and refused as "at least 1 (got -9223372036854775808)".
  const auto huge = ReadGenerationParams(Json::parse(R"({"max_tokens":9223372036854775808})"));
  EXPECT_EQ(huge.status().message(), "max_tokens must be an integer within 64 bits");
  // The engine's own ranges are the engine's, checked where it runs a request.
  auto zero_top_p = ReadGenerationParams(Json{{"top_p", 0.0}});
  ASSERT_TRUE(zero_top_p.ok());
  EXPECT_EQ(CheckEngineLimits(*zero_top_p).code(), Status::Code::kInvalidArgument);
}

// The scheduler thread matches every stop string after every token: the engine bounds the
// list itself (kimi-engine serve has no request rules in front of it).
TEST(GenerationParamsTest, StopStringsAreBoundedInCountAndLength) {
  Json sixteen = Json::array(), seventeen = Json::array();
  for (size_t i = 0; i < kMaxStopStrings; ++i) sixteen.push_back("s" + std::to_string(i));
  seventeen = sixteen;
  seventeen.push_back("one more");
  auto limits = [](const Json& stop) {
    Result<GenerationParams> read = ReadGenerationParams(Json{{"stop", stop}});
    return read.ok() ? CheckEngineLimits(*read) : read.status();
  };
  EXPECT_TRUE(limits(sixteen).ok());
  Status many = limits(seventeen);
  ASSERT_FALSE(many.ok());
  EXPECT_NE(many.message().find("at most 16"), std::string::npos) << many.ToString();
  EXPECT_TRUE(limits(std::string(kMaxStopStringBytes, 'x')).ok());
  EXPECT_EQ(limits(std::string(kMaxStopStringBytes + 1, 'x')).code(), Status::Code::kInvalidArgument);
}

}  // namespace
}  // namespace kimi
