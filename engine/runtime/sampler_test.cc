// Sampler tests: greedy is argmax, draws follow the expected distribution (fixed seed, many
// draws, generous tolerance), top-k/top-p truncate, the mask is respected, penalties apply to
// chosen tokens, the same seed repeats, logprobs are log_softmax.
#include "kimi/sampler.h"

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

namespace kimi {
namespace {

std::vector<double> Frequencies(Sampler& sampler, const std::vector<float>& logits, int draws,
                                const TokenMask* mask = nullptr) {
  std::vector<double> freq(logits.size(), 0.0);
  for (int i = 0; i < draws; ++i) {
    auto t = sampler.Sample(logits, mask);
    EXPECT_TRUE(t.ok());
    freq[t->id] += 1.0 / draws;
  }
  return freq;
}

std::vector<double> Softmax(const std::vector<float>& logits, double temperature) {
  std::vector<double> p(logits.size());
  double sum = 0;
  for (size_t i = 0; i < logits.size(); ++i) sum += p[i] = std::exp(logits[i] / temperature);
  for (double& x : p) x /= sum;
  return p;
}

TEST(SamplerTest, GreedyIsArgmaxAndLowerIndexWinsTies) {
  SamplingParams params;
  params.temperature = 0;
  Sampler sampler(params, 5, 1);
  EXPECT_EQ(sampler.Sample(std::vector<float>{0.1f, 3.0f, -1.0f, 3.0f, 2.9f})->id, 1);
  EXPECT_EQ(sampler.Sample(std::vector<float>{-5.0f, -4.0f, -3.0f, -2.0f, -2.5f})->id, 3);
}

TEST(SamplerTest, DrawsFollowTheSoftmaxAtTheTemperature) {
  const std::vector<float> logits = {1.0f, 2.0f, 0.0f, 1.5f};
  for (float temperature : {1.0f, 0.5f}) {
    SamplingParams params;
    params.temperature = temperature;
    Sampler sampler(params, 4, 42);
    const auto freq = Frequencies(sampler, logits, 20000);
    const auto expected = Softmax(logits, temperature);
    for (size_t i = 0; i < logits.size(); ++i) EXPECT_NEAR(freq[i], expected[i], 0.02) << "token " << i;
  }
}

TEST(SamplerTest, TopKKeepsTheKBest) {
  const std::vector<float> logits = {1.0f, 2.0f, 0.0f, 1.5f};
  SamplingParams params;
  params.top_k = 2;
  Sampler sampler(params, 4, 3);
  const auto freq = Frequencies(sampler, logits, 20000);
  const double z = std::exp(2.0) + std::exp(1.5);
  EXPECT_NEAR(freq[1], std::exp(2.0) / z, 0.02);
  EXPECT_NEAR(freq[3], std::exp(1.5) / z, 0.02);
  EXPECT_EQ(freq[0], 0.0);
  EXPECT_EQ(freq[2], 0.0);
}

TEST(SamplerTest, TopPKeepsTheSmallestPrefixReachingTheMass) {
  // Probabilities 0.5, 0.3, 0.15, 0.05: top_p 0.7 keeps the first two.
  const std::vector<float> logits = {std::log(0.5f), std::log(0.3f), std::log(0.15f), std::log(0.05f)};
  SamplingParams params;
  params.top_p = 0.7f;
  Sampler sampler(params, 4, 5);
  const auto freq = Frequencies(sampler, logits, 20000);
  EXPECT_NEAR(freq[0], 0.5 / 0.8, 0.02);
  EXPECT_NEAR(freq[1], 0.3 / 0.8, 0.02);
  EXPECT_EQ(freq[2] + freq[3], 0.0);
}

TEST(SamplerTest, MaskedTokensAreNeverChosen) {
  const std::vector<float> logits = {5.0f, 1.0f, 4.0f, 1.0f, 0.0f};
  TokenMask mask(5, /*allow_all=*/true);
  mask.Disallow(0);
  mask.Disallow(2);
  EXPECT_EQ(mask.CountAllowed(), 3);
  SamplingParams params;
  Sampler sampler(params, 5, 9);
  const auto freq = Frequencies(sampler, logits, 5000, &mask);
  EXPECT_EQ(freq[0] + freq[2], 0.0);
  params.temperature = 0;
  Sampler greedy(params, 5, 9);
  EXPECT_EQ(greedy.Sample(logits, &mask)->id, 1);

  TokenMask none(5, /*allow_all=*/false);
  auto t = greedy.Sample(logits, &none);
  ASSERT_FALSE(t.ok());
  EXPECT_EQ(t.status().code(), Status::Code::kFailedPrecondition);
  TokenMask wrong(7, true);
  EXPECT_EQ(greedy.Sample(logits, &wrong).status().code(), Status::Code::kInvalidArgument);
}

TEST(SamplerTest, SameSeedSameTokensAndDifferentSeedDiffers) {
  std::vector<float> logits(50);
  for (size_t i = 0; i < logits.size(); ++i) logits[i] = float(std::sin(double(i)));
  auto run = [&](uint64_t seed) {
    SamplingParams params;
    params.seed = seed;
    params.top_p = 0.9f;
    Sampler sampler(params, 50, /*fallback seed, unused*/ 777);
    std::vector<int32_t> ids;
    for (int i = 0; i < 64; ++i) ids.push_back(sampler.Sample(logits)->id);
    return ids;
  };
  EXPECT_EQ(run(11), run(11));
  EXPECT_NE(run(11), run(12));
}

TEST(SamplerTest, PenaltiesLowerTokensAlreadyChosen) {
  SamplingParams params;
  params.temperature = 0;
  params.frequency_penalty = 0.6f;
  Sampler sampler(params, 3, 1);
  const std::vector<float> logits = {1.0f, 0.0f, -3.0f};
  // Token 0 loses 0.6 per use: chosen at 1.0, 0.4; then 1 (0.0) beats -0.2.
  EXPECT_EQ(sampler.Sample(logits)->id, 0);
  EXPECT_EQ(sampler.Sample(logits)->id, 0);
  EXPECT_EQ(sampler.Sample(logits)->id, 1);

  params.frequency_penalty = 0;
  params.presence_penalty = 1.5f;
  Sampler presence(params, 3, 1);
  EXPECT_EQ(presence.Sample(logits)->id, 0);
  EXPECT_EQ(presence.Sample(logits)->id, 1);   // 0 now at -0.5
  EXPECT_EQ(presence.Sample(logits)->id, 0);   // 1 at -1.5, 0 still at -0.5 (presence is flat)
}

// logit_bias was accepted by the API and ignored by the engine: a banned token still came out.
TEST(SamplerTest, LogitBiasIsAddedToTheNamedTokens) {
  SamplingParams params;
  params.temperature = 0;
  const std::vector<float> logits = {1.0f, 3.0f, 2.0f, 0.0f};
  params.logit_bias = {{1, -100.0f}};
  EXPECT_EQ(Sampler(params, 4, 1).Sample(logits)->id, 2);
  params.logit_bias = {{3, 100.0f}};
  EXPECT_EQ(Sampler(params, 4, 1).Sample(logits)->id, 3);
  params.logit_bias = {{0, 1.5f}, {1, -0.75f}};  // 2.5 against 2.25 and 2
  EXPECT_EQ(Sampler(params, 4, 1).Sample(logits)->id, 0);
  params.logit_bias = {{4, 1.0f}};
  EXPECT_EQ(Sampler(params, 4, 1).Sample(logits).status().code(), Status::Code::kInvalidArgument);
  params.logit_bias = {{0, 101.0f}};
  EXPECT_NE(params.Validate().message().find("logit_bias.0"), std::string::npos) << params.Validate().ToString();
}

TEST(SamplerTest, LogitBiasKeysAreTokenIdsAsWritten) {
  EXPECT_EQ(LogitBiasTokenId("0"), 0);
  EXPECT_EQ(LogitBiasTokenId("163839"), 163839);
  EXPECT_EQ(LogitBiasTokenId("999999999"), 999999999);
  for (const char* refused : {"", "05", "00", "-1", "+1", " 1", "1 ", "1e3", "0x10", "1000000000"}) {
    EXPECT_EQ(LogitBiasTokenId(refused), std::nullopt) << '"' << refused << '"';
  }
}

TEST(SamplerTest, LogprobsAreLogSoftmaxOfTheAllowedRow) {
  SamplingParams params;
  params.temperature = 0;
  params.top_logprobs = 2;
  Sampler sampler(params, 4, 1);
  const std::vector<float> logits = {1.0f, 3.0f, 2.0f, 0.0f};
  auto t = sampler.Sample(logits);
  ASSERT_TRUE(t.ok());
  const auto p = Softmax(logits, 1.0);
  EXPECT_EQ(t->id, 1);
  EXPECT_NEAR(t->logprob, std::log(p[1]), 1e-5);
  ASSERT_EQ(t->top.size(), 2u);
  EXPECT_EQ(t->top[0].id, 1);
  EXPECT_EQ(t->top[1].id, 2);
  EXPECT_NEAR(t->top[1].logprob, std::log(p[2]), 1e-5);
}

TEST(SamplerTest, ValidateNamesTheField) {
  SamplingParams params;
  params.temperature = 1.5f;
  EXPECT_NE(params.Validate().message().find("temperature"), std::string::npos);
  params = {};
  params.top_p = 0;
  EXPECT_NE(params.Validate().message().find("top_p"), std::string::npos);
  params = {};
  EXPECT_TRUE(params.Validate().ok());
}

}  // namespace
}  // namespace kimi
