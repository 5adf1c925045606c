// Validation of a policy document against policies/schema.json, written out in C++ for
// exactly the constraints that schema states, plus the checks a JSON Schema cannot state
// (marked "beyond the schema" below). Every error is reported, each with the JSON pointer
// (RFC 6901) of the value at fault, following JSON Schema's convention for where an error
// sits: a missing or unknown property is an error of the object that should (not) hold it.
// policies/validate_test.py runs Debian's python3-jsonschema over the same documents
// (policies/testdata/) so the two validators are kept in agreement.
//
// Beyond the schema: a category or custom pattern name used twice, a custom pattern named
// like a built-in category, a pattern (custom or medical_record_pattern) that does not compile
// (PatternDetector::Create: syntax outside the supported ECMAScript subset, or past its
// bounds), a medical_record rule without medical_record_pattern, two
// access rules for one subject, time-to-first-token tiers not strictly ascending.
//
// Thread safety: pure functions.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace kimi::policy {

struct PolicyError {
  std::string path;     // JSON pointer; "" is the document itself
  std::string message;  // for people
  bool operator==(const PolicyError&) const = default;
};

// Every error of `document`; empty when it is a valid policy.
std::vector<PolicyError> ValidatePolicy(const nlohmann::json& document);

// "<path>: <message>" with "(document)" for the empty path.
std::string FormatPolicyError(const PolicyError& error);

}  // namespace kimi::policy
