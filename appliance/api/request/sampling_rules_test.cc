// Sampling bounds and scalar fields, with the vendor verifier's exact values (tests/params).
#include "api/request/sampling_rules.h"

#include <gtest/gtest.h>

#include "api/request/request_test_util.h"

namespace kimi::api::request {
namespace {

using testing::Accepted;
using testing::Chat;
using testing::ChatBody;
using testing::ChatWith;
using testing::Rejected;

TEST(SamplingRulesTest, TemperatureInZeroToOneIsAccepted) {
  for (double t : {0.0, 0.6, 1.0}) {
    auto r = Chat(ChatBody({{"temperature", t}}));
    ASSERT_TRUE(Accepted(r)) << t;
    EXPECT_EQ(r->temperature, t);
  }
  EXPECT_TRUE(Accepted(ChatWith(R"({"temperature": 0})")));
  EXPECT_TRUE(Accepted(ChatWith(R"({"temperature": 1})")));
}

TEST(SamplingRulesTest, TemperatureOutsideZeroToOneIsRejected) {
  EXPECT_TRUE(Rejected(ChatWith(R"({"temperature": 1.1})"), "temperature", "temperature must be in [0, 1] (got 1.1)"));
  EXPECT_TRUE(Rejected(ChatWith(R"({"temperature": 2.0})"), "temperature", "(got 2)"));
  EXPECT_TRUE(Rejected(ChatWith(R"({"temperature": -0.1})"), "temperature", "(got -0.1)"));
  EXPECT_TRUE(Rejected(ChatWith(R"({"temperature": 2})"), "temperature"));
  EXPECT_TRUE(Rejected(ChatWith(R"({"temperature": 1.0000001})"), "temperature"));
}

TEST(SamplingRulesTest, TemperatureMustBeANumber) {
  EXPECT_TRUE(Rejected(ChatWith(R"({"temperature": "0.5"})"), "temperature", "must be a number"));
  EXPECT_TRUE(Rejected(ChatWith(R"({"temperature": true})"), "temperature", "must be a number"));
  EXPECT_TRUE(Accepted(ChatWith(R"({"temperature": null})")));
}

TEST(SamplingRulesTest, TopPMustBePointNineFive) {
  EXPECT_TRUE(Accepted(ChatWith(R"({"top_p": 0.95})")));
  EXPECT_TRUE(Rejected(ChatWith(R"({"top_p": 0.8})"), "top_p", "top_p must be 0.95 for this model (got 0.8)"));
  EXPECT_TRUE(Rejected(ChatWith(R"({"top_p": 1.0})"), "top_p"));
  EXPECT_TRUE(Rejected(ChatWith(R"({"top_p": "0.95"})"), "top_p", "must be a number"));
}

TEST(SamplingRulesTest, PenaltiesMustBeZero) {
  for (const char* field : {"presence_penalty", "frequency_penalty"}) {
    EXPECT_TRUE(Accepted(Chat(ChatBody({{field, 0}})))) << field;
    EXPECT_TRUE(Accepted(Chat(ChatBody({{field, 0.0}})))) << field;
    EXPECT_TRUE(Rejected(Chat(ChatBody({{field, 0.5}})), field, "must be 0 for this model (got 0.5)"));
    EXPECT_TRUE(Rejected(Chat(ChatBody({{field, -1}})), field));
  }
}

TEST(SamplingRulesTest, NMustBeOne) {
  EXPECT_TRUE(Accepted(ChatWith(R"({"n": 1})")));
  EXPECT_TRUE(Rejected(ChatWith(R"({"n": 2})"), "n", "n must be 1 for this model (got 2)"));
  EXPECT_TRUE(Rejected(ChatWith(R"({"n": 0})"), "n"));
  EXPECT_TRUE(Rejected(ChatWith(R"({"n": 1.5})"), "n", "must be an integer"));
}

TEST(SamplingRulesTest, BoundsFollowTheModelsRules) {
  ModelRequestRules open;
  open.temperature_max = 2.0;
  open.top_p.reset();
  open.presence_penalty.reset();
  open.n.reset();
  EXPECT_TRUE(Accepted(Chat(ChatBody({{"temperature", 1.5}, {"top_p", 0.8}, {"presence_penalty", 0.5}, {"n", 2}}), open)));
  EXPECT_TRUE(Rejected(Chat(ChatBody({{"top_p", 1.5}}), open), "top_p", "must be in [0, 1]"));
  EXPECT_TRUE(Rejected(Chat(ChatBody({{"presence_penalty", 2.5}}), open), "presence_penalty", "must be in [-2, 2]"));
  EXPECT_TRUE(Rejected(Chat(ChatBody({{"n", 0}}), open), "n", "must be in [1, 128]"));
  // Without a pin n is still bounded: each choice is a generation of its own.
  EXPECT_TRUE(Accepted(Chat(ChatBody({{"n", 128}}), open)));
  EXPECT_TRUE(Rejected(Chat(ChatBody({{"n", 1000000}}), open), "n", "must be in [1, 128] (got 1000000)"));
  EXPECT_TRUE(Rejected(Chat(ChatBody({{"temperature", 2.1}}), open), "temperature", "[0, 2]"));
  // Pins that stay: frequency_penalty still 0.
  EXPECT_TRUE(Rejected(Chat(ChatBody({{"frequency_penalty", 0.5}}), open), "frequency_penalty"));
}

TEST(SamplingRulesTest, ModelIsARequiredNonEmptyString) {
  auto body = ChatBody();
  body.erase("model");
  EXPECT_TRUE(Rejected(Chat(body), "model", "is required"));
  EXPECT_TRUE(Rejected(ChatWith(R"({"model": ""})"), "model", "must not be empty"));
  EXPECT_TRUE(Rejected(ChatWith(R"({"model": 3})"), "model", "must be a string"));
  EXPECT_EQ(ChatWith(R"({"model": "kimi-k3"})")->model, "kimi-k3");
}

TEST(SamplingRulesTest, MaxTokensIsAPositiveInteger) {
  EXPECT_EQ(ChatWith(R"({"max_tokens": 16})")->generation.max_tokens, 16);
  EXPECT_EQ(ChatWith(R"({"max_tokens": 16.0})")->generation.max_tokens, 16);
  EXPECT_EQ(ChatWith("{}")->generation.max_tokens, std::nullopt);
  EXPECT_TRUE(Rejected(ChatWith(R"({"max_tokens": 0})"), "max_tokens", "at least 1"));
  EXPECT_TRUE(Rejected(ChatWith(R"({"max_tokens": "16"})"), "max_tokens", "must be an integer"));
  EXPECT_TRUE(Rejected(ChatWith(R"({"max_completion_tokens": -3})"), "max_completion_tokens"));
  EXPECT_EQ(ChatWith(R"({"max_tokens": 16, "max_completion_tokens": 8})")->generation.max_tokens, 8);
}

TEST(SamplingRulesTest, StopIsAStringOrAListOfStrings) {
  EXPECT_EQ(ChatWith(R"({"stop": "END"})")->generation.stop, std::vector<std::string>{"END"});
  EXPECT_EQ(ChatWith(R"({"stop": ["a", "b"]})")->generation.stop, (std::vector<std::string>{"a", "b"}));
  EXPECT_TRUE(Rejected(ChatWith(R"({"stop": 3})"), "stop", "string or an array"));
  EXPECT_TRUE(Rejected(ChatWith(R"({"stop": ["a", 3]})"), "stop[1]", "must be a string"));
  EXPECT_TRUE(Rejected(ChatWith(R"({"stop": ""})"), "stop", "must not be empty"));
  EXPECT_TRUE(Rejected(ChatWith(R"({"stop": ["a", ""]})"), "stop[1]"));
}

// The stop list is checked after every token on the scheduler thread: 100,000 strings slowed
// every other stream. OpenAI's bound (4) by default, per model in the rules.
TEST(SamplingRulesTest, StopIsBoundedInCountAndLength) {
  EXPECT_TRUE(Accepted(ChatWith(R"({"stop": ["a", "b", "c", "d"]})")));
  EXPECT_TRUE(Rejected(ChatWith(R"({"stop": ["a", "b", "c", "d", "e"]})"), "stop", "at most 4 strings for this model (got 5)"));
  Json hundred = Json::array();
  for (int i = 0; i < 100; ++i) hundred.push_back("s" + std::to_string(i));
  EXPECT_TRUE(Rejected(Chat(ChatBody({{"stop", hundred}})), "stop", "(got 100)"));
  const std::string long_stop(257, 'x');
  EXPECT_TRUE(Rejected(Chat(ChatBody({{"stop", long_stop}})), "stop", "at most 256 bytes"));
  EXPECT_TRUE(Rejected(Chat(ChatBody({{"stop", Json::array({"a", long_stop})}})), "stop[1]", "at most 256 bytes"));
  EXPECT_TRUE(Accepted(Chat(ChatBody({{"stop", std::string(256, 'x')}}))));
  ModelRequestRules wider;
  wider.max_stop = 16;
  wider.max_stop_bytes = 1024;
  const Json sixteen(hundred.begin(), hundred.begin() + 16);
  EXPECT_TRUE(Accepted(Chat(ChatBody({{"stop", sixteen}}), wider)));
  EXPECT_TRUE(Accepted(Chat(ChatBody({{"stop", long_stop}}), wider)));
  // The text completion endpoint shares the rule.
  EXPECT_TRUE(Rejected(ValidateCompletion(Json{{"model", "kimi-k3"}, {"prompt", "x"}, {"stop", Json::array({"a", "b", "c", "d", "e"})}},
                                          ModelRequestRules::K3()),
                       "stop"));
}

TEST(SamplingRulesTest, SeedIsAnInteger) {
  EXPECT_EQ(ChatWith(R"({"seed": 42})")->seed, 42);
  EXPECT_EQ(ChatWith(R"({"seed": -7})")->seed, -7);
  EXPECT_TRUE(Rejected(ChatWith(R"({"seed": "42"})"), "seed", "must be an integer"));
  EXPECT_TRUE(Rejected(ChatWith(R"({"seed": 4.2})"), "seed"));
}

TEST(SamplingRulesTest, StreamAndStreamOptions) {
  auto r = ChatWith(R"({"stream": true, "stream_options": {"include_usage": true}})");
  ASSERT_TRUE(Accepted(r));
  EXPECT_TRUE(r->stream);
  EXPECT_TRUE(r->include_usage);
  EXPECT_FALSE(ChatWith(R"({"stream": true})")->include_usage);
  EXPECT_FALSE(ChatWith("{}")->stream);
  EXPECT_TRUE(Rejected(ChatWith(R"({"stream": "yes"})"), "stream", "true or false"));
  EXPECT_TRUE(Rejected(ChatWith(R"({"stream_options": {"include_usage": true}})"), "stream_options",
                       "only when stream is true"));
  EXPECT_TRUE(Rejected(ChatWith(R"({"stream": true, "stream_options": []})"), "stream_options", "must be an object"));
  EXPECT_TRUE(Rejected(ChatWith(R"({"stream": true, "stream_options": {"include_usage": 1}})"),
                       "stream_options.include_usage"));
}

}  // namespace
}  // namespace kimi::api::request
