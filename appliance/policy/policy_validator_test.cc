// The C++ validator against the shipped policies and the invalid documents that
// policies/validate_test.py also runs through python3-jsonschema: the same JSON pointers.
#include "policy/policy_validator.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>

#include "policy/policy.h"

namespace kimi::policy {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

fs::path PoliciesDir() {
  const char* source = std::getenv("KIMI_SOURCE_DIR");
  return fs::path(source ? source : ".") / "policies";
}

json Load(const fs::path& path) {
  std::ifstream in(path);
  return json::parse(in, nullptr, /*allow_exceptions=*/false);
}

std::set<std::string> Paths(const std::vector<PolicyError>& errors) {
  std::set<std::string> out;
  for (const PolicyError& e : errors) out.insert(e.path);
  return out;
}

TEST(PolicyValidatorTest, ShippedPoliciesAreValidAndParse) {
  for (const char* name : {"default.json", "examples/bank.json", "examples/hospital.json"}) {
    const json doc = Load(PoliciesDir() / name);
    ASSERT_FALSE(doc.is_discarded()) << name;
    std::vector<PolicyError> errors = ValidatePolicy(doc);
    for (const PolicyError& e : errors) ADD_FAILURE() << name << " " << FormatPolicyError(e);
    EXPECT_TRUE(ParsePolicy(doc).ok()) << name;
  }
}

TEST(PolicyValidatorTest, InvalidDocumentsFailAtTheSamePathsAsJsonSchema) {
  int cases = 0;
  for (const auto& entry : fs::directory_iterator(PoliciesDir() / "testdata" / "invalid")) {
    const json c = Load(entry.path());
    ASSERT_FALSE(c.is_discarded()) << entry.path();
    std::set<std::string> want;
    for (const auto& p : c["schema_errors"]) want.insert(p.get<std::string>());
    for (const auto& p : c["semantic_errors"]) want.insert(p.get<std::string>());
    const std::vector<PolicyError> errors = ValidatePolicy(c["policy"]);
    EXPECT_EQ(Paths(errors), want) << entry.path();
    EXPECT_FALSE(ParsePolicy(c["policy"]).ok());
    ++cases;
  }
  EXPECT_GE(cases, 5);
}

TEST(PolicyValidatorTest, EveryErrorIsReportedInTheMessage) {
  const json doc = Load(PoliciesDir() / "testdata" / "invalid" / "many_errors.json")["policy"];
  Result<Policy> parsed = ParsePolicy(doc);
  ASSERT_FALSE(parsed.ok());
  for (const char* path : {"/content_logging/retention_days", "/redaction/rules/0/action", "/access/rules/1/subject",
                           "/service_levels/itl_targets/chat", "(document): the property 'name' is required",
                           "(document): the property 'extra' is not allowed"}) {
    EXPECT_NE(parsed.status().message().find(path), std::string::npos) << path << " in " << parsed.status().message();
  }
}

TEST(PolicyValidatorTest, PatternWithACountStdRegexWouldMisreadIsAnError) {
  json doc = Load(PoliciesDir() / "examples" / "bank.json");
  doc["redaction"]["custom_patterns"][0]["pattern"] = "\\bCUST-[0-9]{4294967297}\\b";
  const std::vector<PolicyError> errors = ValidatePolicy(doc);
  EXPECT_EQ(Paths(errors), std::set<std::string>{"/redaction/custom_patterns/0/pattern"});
  EXPECT_FALSE(ParsePolicy(doc).ok());
}

TEST(PolicyValidatorTest, NotAnObject) {
  EXPECT_EQ(ValidatePolicy(json::array()), (std::vector<PolicyError>{{"", "must be an object"}}));
}

TEST(PolicyValidatorTest, IntegralFloatsAreIntegersAsInJsonSchema) {
  json doc = Load(PoliciesDir() / "default.json");
  doc["content_logging"]["retention_days"] = 30.0;
  EXPECT_TRUE(ValidatePolicy(doc).empty());
  doc["content_logging"]["retention_days"] = 30.5;
  EXPECT_EQ(Paths(ValidatePolicy(doc)), std::set<std::string>{"/content_logging/retention_days"});
}

TEST(PolicyTest, Accessors) {
  Result<Policy> p = ParsePolicy(Load(PoliciesDir() / "examples/hospital.json"));
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  EXPECT_TRUE(p->content_logging.store_prompts);
  EXPECT_FALSE(p->content_logging.store_completions);
  EXPECT_EQ(p->content_logging.retention_days, 90);
  ASSERT_NE(p->RuleFor("user", "key_other"), nullptr);
  EXPECT_FALSE(p->RuleFor("user", "key_other")->thinking_max);
  EXPECT_EQ(p->RuleFor("user", "key_0123456789abcdef")->max_output_tokens, 16384);
  EXPECT_EQ(p->RuleFor("auditor", ""), nullptr);
  EXPECT_EQ(p->TtftTargetMs(100), 600);
  EXPECT_EQ(p->TtftTargetMs(4097), 2500);
  EXPECT_EQ(p->TtftTargetMs(131073), std::nullopt);
  EXPECT_EQ(p->WorkloadClass("key_0123456789abcdef", std::nullopt).value(), "agentic");
  // The policy's key class binds: the key cannot claim another class by header.
  EXPECT_EQ(p->WorkloadClass("key_0123456789abcdef", "chat").value(), "agentic");
  EXPECT_EQ(p->WorkloadClass("key_x", "agentic").value(), "agentic");
  EXPECT_EQ(p->WorkloadClass("key_x", std::nullopt).value(), "chat");
  EXPECT_EQ(p->WorkloadClass("", std::nullopt).value(), "chat");
  Result<std::string> unknown = p->WorkloadClass("key_x", "bogus");
  ASSERT_FALSE(unknown.ok());
  EXPECT_EQ(unknown.status().code(), Status::Code::kInvalidArgument);
  EXPECT_NE(unknown.status().message().find("bogus"), std::string::npos);
  EXPECT_EQ(p->ItlTargetMs("agentic"), 120);
  EXPECT_EQ(p->ItlTargetMs("chat"), 60);
  EXPECT_EQ(p->SchedulingPriority("chat"), 0);
  EXPECT_EQ(p->SchedulingPriority("agentic"), 1);
}

}  // namespace
}  // namespace kimi::policy
