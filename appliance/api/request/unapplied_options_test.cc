#include "api/request/unapplied_options.h"

#include <gtest/gtest.h>

#include "api/request/request_test_util.h"

namespace kimi::api::request {
namespace {

using testing::Accepted;
using testing::ChatWith;
using testing::Rejected;

Result<ValidatedRequest> Completion(const char* fields) {
  Json body = {{"model", "kimi-k3"}, {"prompt", "Once"}};
  const Json extra = Json::parse(fields);
  for (const auto& [key, value] : extra.items()) body[key] = value;
  return ValidateCompletion(body, ModelRequestRules::K3());
}

// An option that would constrain or change the answer: a 200 that ignored it would be an
// answer the client did not ask for (its JSON not following the schema it sent, its answer
// shorter than min_tokens).
TEST(UnappliedOptionsTest, AnOptionThatWouldChangeTheAnswerIsRefusedNamingIt) {
  EXPECT_TRUE(Rejected(ChatWith(R"({"guided_json": {"type": "object"}})"), "guided_json", "use response_format"));
  EXPECT_TRUE(Rejected(ChatWith(R"({"guided_choice": ["yes", "no"]})"), "guided_choice", "does not apply"));
  EXPECT_TRUE(Rejected(ChatWith(R"({"structured_outputs": {"regex": "[0-9]+"}})"), "structured_outputs"));
  EXPECT_TRUE(Rejected(ChatWith(R"({"min_tokens": 50})"), "min_tokens"));
  EXPECT_TRUE(Rejected(ChatWith(R"({"repetition_penalty": 1.2})"), "repetition_penalty"));
  EXPECT_TRUE(Rejected(ChatWith(R"({"stop_token_ids": [2]})"), "stop_token_ids", "use stop"));
  EXPECT_TRUE(Rejected(ChatWith(R"({"skip_special_tokens": false})"), "skip_special_tokens"));
  EXPECT_TRUE(Rejected(ChatWith(R"({"chat_template": "{{ messages }}"})"), "chat_template"));
  EXPECT_TRUE(Rejected(ChatWith(R"({"echo": true})"), "echo"));
  EXPECT_TRUE(Rejected(Completion(R"({"guided_regex": "a+"})"), "guided_regex"));
  EXPECT_TRUE(Rejected(Completion(R"({"ignore_eos": true})"), "ignore_eos"));
}

// Clients that always send vLLM's defaults keep working: a neutral value changes nothing.
TEST(UnappliedOptionsTest, TheNeutralValueOfEachIsAccepted) {
  EXPECT_TRUE(Accepted(ChatWith(R"({"guided_json": null, "min_p": 0, "repetition_penalty": 1.0, "length_penalty": 1,
      "use_beam_search": false, "min_tokens": 0, "ignore_eos": false, "stop_token_ids": [], "bad_words": [],
      "include_stop_str_in_output": false, "skip_special_tokens": true, "spaces_between_special_tokens": true,
      "echo": false, "continue_final_message": false, "chat_template": null})")));
  EXPECT_TRUE(Accepted(Completion(R"({"echo": true, "min_p": 0.0, "prompt_logprobs": null})")));
}

// A neutral value is only the default itself: not a string that spells it, nor a near value.
TEST(UnappliedOptionsTest, AValueThatOnlyLooksNeutralIsRefused) {
  EXPECT_TRUE(Rejected(ChatWith(R"({"ignore_eos": "false"})"), "ignore_eos"));
  EXPECT_TRUE(Rejected(ChatWith(R"({"min_p": 1e-9})"), "min_p"));
  EXPECT_TRUE(Rejected(ChatWith(R"({"stop_token_ids": [[]]})"), "stop_token_ids"));
  EXPECT_TRUE(Rejected(ChatWith(R"({"repetition_penalty": true})"), "repetition_penalty"));
}

}  // namespace
}  // namespace kimi::api::request
