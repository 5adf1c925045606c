// Redactor: applies a policy's redaction rules to text. Built once per policy version
// (its regular expressions compiled once) and shared by every request under that version.
//
// For each text: every enabled detector runs over the text as a reader reads it (ReadingText:
// digits of any script, full-width forms, Unicode spaces and dashes as their ASCII characters,
// zero-width characters as nothing), each finding is taken back to the original's bytes,
// overlapping findings become one span (the earliest start wins, then the longest, then the
// category listed first in BuiltinCategories(), then operator patterns in their order; the
// span takes the most protective action of its findings), and each span is replaced:
//   mask   "[REDACTED:IBAN]"    (the category upper-cased)
//   hash   "[HASH:IBAN:3f0c9a21b4d5e6f7]": the first 8 bytes of BLAKE2b-256 keyed with the
//          server secret over "kimi-redaction\0<category>\0<value as read>", so one value always
//          gives one token on this appliance and the token reveals nothing without the secret
//   block  the text is left as is and the tally records the category; the caller refuses
//          the request (a 400 naming the category, never the value)
// The tally counts findings per category; it never holds a value.
//
// Thread safety: immutable after Create(); Redact() may run on many threads at once.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "auth/server_secret.h"
#include "kimi/status.h"
#include "policy/detectors.h"
#include "policy/policy.h"

namespace kimi::policy {

class ReadingText;

// Accumulates decisions over the several texts of one request.
class RedactionTally {
 public:
  void Add(std::string_view category, Action action);
  const std::vector<RedactionDecision>& decisions() const { return decisions_; }
  // The first category whose action is block, if any was found.
  std::optional<std::string> BlockedCategory() const;

 private:
  std::vector<RedactionDecision> decisions_;  // in order of first finding
};

class Redactor {
 public:
  // `secret` may be null when no rule hashes; it must outlive the Redactor.
  // InvalidArgument when a pattern does not compile, a category is unknown, or a rule hashes
  // without a secret.
  static Result<std::unique_ptr<Redactor>> Create(const RedactionPolicy& policy, const auth::ServerSecret* secret);

  // Redacts `text` and adds its findings to *tally. Values of a block category are left in
  // place (the caller refuses the request) unless mask_blocked is set, as for text that is
  // about to be stored.
  std::string Redact(std::string_view text, RedactionTally* tally, bool mask_blocked = false) const;
  // True when no rule is enabled (Redact() would return the text unchanged).
  bool empty() const { return builtins_.empty() && patterns_.empty(); }

 private:
  struct BuiltinRule {
    std::string_view category;
    BuiltinDetector detector;
    Action action;
  };
  struct PatternRule {
    std::unique_ptr<PatternDetector> detector;
    Action action;
  };
  Redactor() = default;
  // Findings that overlap are redacted as one span, from the first's start to the furthest
  // end, so no part of any of them stays in the text (a card that began inside an SSN kept
  // its last twelve digits when only the SSN was masked).
  struct Span {
    size_t begin = 0;
    size_t end = 0;
    std::vector<std::string_view> categories;  // each once, in finding order
  };
  // The spans of the original text, in order, none overlapping.
  std::vector<Span> FindSpans(const ReadingText& reading) const;
  Action ActionOf(std::string_view category) const;
  std::string Replacement(std::string_view category, std::string_view value, Action action) const;

  std::vector<BuiltinRule> builtins_;
  std::vector<PatternRule> patterns_;  // the medical record number first, then custom ones
  const auth::ServerSecret* secret_ = nullptr;
};

// The mask label of a category: its name upper-cased ("payment_card" -> "PAYMENT_CARD").
std::string CategoryLabel(std::string_view category);

}  // namespace kimi::policy
