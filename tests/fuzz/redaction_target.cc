// A text as the redactor reads it (policy/reading_text.h) and redacts it under the shipped
// default policy with every category on (mask, hash and block), as a prompt and as content to
// store. The way back to the original must keep order and stay inside the text, and redacted
// valid UTF-8 must stay valid UTF-8 whatever the findings cut.
#include <cstdint>
#include <string>
#include <string_view>

#include "auth/server_secret.h"
#include "fuzz_support.h"
#include "fuzz_targets.h"
#include "kimi/tokenizer_utf8.h"
#include "policy/detectors.h"
#include "policy/reading_text.h"
#include "policy/redactor.h"

namespace kimi::fuzz {
namespace {

const policy::Redactor& EveryCategory() {
  static const auth::ServerSecret secret = auth::ServerSecret::FromBytes({7});
  static const std::unique_ptr<policy::Redactor> redactor = [] {
    policy::RedactionPolicy rules;
    const policy::Action actions[] = {policy::Action::kMask, policy::Action::kHash, policy::Action::kBlock};
    size_t i = 0;
    for (std::string_view category : policy::BuiltinCategories()) {
      rules.rules.push_back({std::string(category), actions[i++ % 3]});
    }
    rules.medical_record_pattern = R"(\bMRN-[0-9]{7}\b)";
    rules.custom_patterns.push_back({"ref", "ID .{4}", policy::Action::kMask});
    Result<std::unique_ptr<policy::Redactor>> made = policy::Redactor::Create(rules, &secret);
    if (!made.ok()) SetupFailed("the redaction rules: " + made.status().ToString());
    return std::move(made).value();
  }();
  return *redactor;
}

}  // namespace

bool FuzzRedactionOnce(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  const policy::ReadingText reading(text);
  const size_t read = reading.text().size();
  size_t previous = 0;
  for (size_t at = 0; at <= read; at += 1 + read / 64) {
    const auto [first, last] = reading.OriginalRange(at, std::min(read, at + 3));
    if (first < previous || first > last || last > text.size()) __builtin_trap();
    previous = first;
  }
  if (reading.OriginalRange(read, read).first != text.size()) __builtin_trap();  // the end maps to the end
  policy::RedactionTally tally;
  const std::string prompt = EveryCategory().Redact(text, &tally);
  const std::string stored = EveryCategory().Redact(text, &tally, /*mask_blocked=*/true);
  if (text::ValidateUtf8(text).ok() && (!text::ValidateUtf8(prompt).ok() || !text::ValidateUtf8(stored).ok())) {
    __builtin_trap();
  }
  return !tally.decisions().empty();
}

}  // namespace kimi::fuzz
