// Helpers shared by the request-rule tests: build a chat body around a few fields, run the
// validator, and assert on the 400 it gives.
#pragma once

#include <string>
#include <string_view>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "api/request/field_error.h"
#include "api/request/request_validator.h"

namespace kimi::api::request::testing {

using Json = nlohmann::ordered_json;

// {"model": "kimi-k3", "messages": [{"role": "user", "content": "Say OK"}]} with `fields`
// merged over it (a field set to null in `fields` is kept as null).
inline Json ChatBody(const Json& fields = Json::object()) {
  Json body = {{"model", "kimi-k3"}, {"messages", Json::array({{{"role", "user"}, {"content", "Say OK"}}})}};
  for (const auto& [key, value] : fields.items()) body[key] = value;
  return body;
}

inline Result<ValidatedRequest> Chat(const Json& body, const ModelRequestRules& rules = ModelRequestRules::K3()) {
  return ValidateChatCompletion(body, rules);
}

inline Result<ValidatedRequest> ChatWith(std::string_view fields_json) {
  return Chat(ChatBody(Json::parse(fields_json)));
}

// The request was refused as a 400 naming `param`, with `fragment` in its message.
inline ::testing::AssertionResult Rejected(const Result<ValidatedRequest>& result, std::string_view param,
                                           std::string_view fragment = "") {
  if (result.ok()) return ::testing::AssertionFailure() << "accepted; expected a 400 naming " << param;
  const Status& s = result.status();
  if (s.code() != Status::Code::kInvalidArgument) return ::testing::AssertionFailure() << "not InvalidArgument: " << s.ToString();
  const auto named = FieldOfRuleError(s);
  if (!named || *named != param) {
    return ::testing::AssertionFailure() << "names " << named.value_or("<nothing>") << ", expected " << param << ": "
                                         << s.message();
  }
  if (s.message().find(fragment) == std::string::npos) {
    return ::testing::AssertionFailure() << "message lacks \"" << fragment << "\": " << s.message();
  }
  return ::testing::AssertionSuccess();
}

inline ::testing::AssertionResult Accepted(const Result<ValidatedRequest>& result) {
  if (result.ok()) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << result.status().ToString();
}

}  // namespace kimi::api::request::testing
