// A policy document as PUT /admin/v1/policy receives it (policy_service.cc Submit): every
// validation error, the parsed policy, its redaction rules compiled (custom patterns are
// regular expressions from the document), then one redaction of a text that holds a value of
// every built-in category, as a prompt and as content to store.
#include <string>

#include <nlohmann/json.hpp>

#include "auth/server_secret.h"
#include "fuzz_targets.h"
#include "policy/policy.h"
#include "policy/policy_validator.h"
#include "policy/redactor.h"

namespace kimi::fuzz {
namespace {

constexpr const char* kSample =
    "Card 4111 1111 1111 1111, IBAN GB82 WEST 1234 5698 7654 32, SSN 078-05-1120, mail a.b@example.com, "
    "call +44 20 7946 0958, born 1980-02-29, from 192.0.2.1 and 2001:db8::1, MRN-00123456, CUST-12345678.";

}  // namespace

bool FuzzPolicyOnce(const uint8_t* data, size_t size) {
  static const auth::ServerSecret secret = auth::ServerSecret::FromBytes({9});
  const nlohmann::json document = nlohmann::json::parse(data, data + size, nullptr, /*allow_exceptions=*/false);
  if (document.is_discarded()) return false;
  for (const policy::PolicyError& error : policy::ValidatePolicy(document)) (void)policy::FormatPolicyError(error);
  Result<policy::Policy> parsed = policy::ParsePolicy(document);
  if (!parsed.ok()) return false;
  Result<std::unique_ptr<policy::Redactor>> redactor = policy::Redactor::Create(parsed->redaction, &secret);
  if (!redactor.ok()) return false;
  policy::RedactionTally tally;
  (void)(*redactor)->Redact(kSample, &tally);
  (void)(*redactor)->Redact(kSample, &tally, /*mask_blocked=*/true);
  (void)tally.BlockedCategory();
  return true;
}

}  // namespace kimi::fuzz
