// The logprobs JSON forms: what the encoders write reads back to the same tokens (the upstream
// path depends on it), partial UTF-8 tokens keep their exact bytes, infinities become finite,
// and malformed upstream input is refused with a reason.
#include "kimi/logprobs_json.h"

#include <cmath>
#include <limits>

#include <gtest/gtest.h>

namespace kimi::chat {
namespace {

std::vector<TokenLogprobs> Sample() {
  return {TokenLogprobs{"Xin", -0.25f, {TokenAlternative{"Xin", -0.25f}, TokenAlternative{"Hi", -1.75f}}},
          TokenLogprobs{"\xe1\xba", -0.5f, {TokenAlternative{"\xe1\xba", -0.5f}, TokenAlternative{" ", -3.0f}}},
          TokenLogprobs{"\xa1o", -1.0f, {TokenAlternative{"\xa1o", -1.0f}, TokenAlternative{"!", -2.5f}}}};
}

void ExpectSame(const std::vector<TokenLogprobs>& got, const std::vector<TokenLogprobs>& want) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i) {
    EXPECT_EQ(got[i].bytes, want[i].bytes) << i;
    EXPECT_FLOAT_EQ(got[i].logprob, want[i].logprob) << i;
    ASSERT_EQ(got[i].top.size(), want[i].top.size()) << i;
    for (size_t j = 0; j < got[i].top.size(); ++j) {
      EXPECT_EQ(got[i].top[j].bytes, want[i].top[j].bytes) << i << "/" << j;
      EXPECT_FLOAT_EQ(got[i].top[j].logprob, want[i].top[j].logprob) << i << "/" << j;
    }
  }
}

TEST(LogprobsJson, ChatContentReadsBackExactly) {
  const nlohmann::ordered_json written = ChatLogprobsContent(Sample());
  EXPECT_EQ(written[0]["token"], "Xin");
  EXPECT_EQ(written[1]["token"], "bytes:\\xe1\\xba");
  EXPECT_EQ(written[1]["bytes"], nlohmann::ordered_json::array({0xe1, 0xba}));
  auto read = ParseChatLogprobsContent(nlohmann::json::parse(written.dump()));
  ASSERT_TRUE(read.ok()) << read.status().ToString();
  ExpectSame(*read, Sample());
}

TEST(LogprobsJson, CompletionObjectReadsBackExactly) {
  const nlohmann::ordered_json written = CompletionLogprobs(Sample(), 10);
  EXPECT_EQ(written["text_offset"], nlohmann::ordered_json::array({10, 13, 15}));
  EXPECT_EQ(written["tokens"][2], "bytes:\\xa1\\x6f");
  auto read = ParseCompletionLogprobs(nlohmann::json::parse(written.dump()));
  ASSERT_TRUE(read.ok()) << read.status().ToString();
  ExpectSame(*read, Sample());
}

TEST(LogprobsJson, ImpossibleTokensAreWrittenFinite) {
  const float minus_infinity = -std::numeric_limits<float>::infinity();
  const auto written = ChatLogprobsContent({TokenLogprobs{"a", -0.1f, {TokenAlternative{"b", minus_infinity}}}});
  EXPECT_TRUE(std::isfinite(written[0]["top_logprobs"][0]["logprob"].get<double>()));
  EXPECT_LT(written[0]["top_logprobs"][0]["logprob"].get<double>(), -1000.0);
}

TEST(LogprobsJson, MalformedUpstreamLogprobsAreRefused) {
  for (const char* bad : {R"({"token":"a"})", R"([{"token":"a"}])", R"([{"logprob":-1}])",
                          R"([{"token":"a","logprob":-1,"bytes":[300]}])",
                          R"([{"token":"a","logprob":-1,"top_logprobs":{}}])"}) {
    EXPECT_FALSE(ParseChatLogprobsContent(nlohmann::json::parse(bad)).ok()) << bad;
  }
  EXPECT_TRUE(ParseChatLogprobsContent(nullptr).ok());
  EXPECT_FALSE(ParseCompletionLogprobs(nlohmann::json::parse(R"({"tokens":["a"],"token_logprobs":[]})")).ok());
  auto plain = ParseChatLogprobsContent(nlohmann::json::parse(R"([{"token":"bytes:zz","logprob":-1}])"));
  ASSERT_TRUE(plain.ok());
  EXPECT_EQ((*plain)[0].bytes, "bytes:zz") << "a name that only looks like escapes stays text";
}

}  // namespace
}  // namespace kimi::chat
