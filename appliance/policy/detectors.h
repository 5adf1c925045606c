// Redaction detectors: find sensitive values in UTF-8 text. Built-in detectors are plain
// scanners (no regular expressions) over ASCII structure; any other byte, including every
// byte of a multi-byte character, is a boundary, so values inside Vietnamese or Chinese text
// are found the same way as in English. Values with a check digit (IBAN mod 97, payment card
// Luhn) are only reported when the check holds, and SSNs only outside the ranges never
// issued. Operator patterns and the medical record number are ECMAScript patterns run by a
// matcher that does not backtrack (PatternDetector, pattern_program.h).
//
// One file per family: detect_contact.cc (e-mail, phone), detect_financial.cc (IBAN, card),
// detect_identity.cc (SSN, date of birth), detect_network.cc (IPv4, IPv6),
// detect_pattern.cc (operator patterns).
//
// Thread safety: pure functions; a PatternDetector is immutable after Create() and may be
// used from many threads at once.
#pragma once

#include <cstddef>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "kimi/status.h"
#include "policy/pattern_program.h"

namespace kimi::policy {

// Built-in categories, as written in policy files.
inline constexpr std::string_view kEmail = "email";
inline constexpr std::string_view kPhone = "phone";
inline constexpr std::string_view kIban = "iban";
inline constexpr std::string_view kPaymentCard = "payment_card";
inline constexpr std::string_view kUsSsn = "us_ssn";
inline constexpr std::string_view kDateOfBirth = "date_of_birth";
inline constexpr std::string_view kMedicalRecord = "medical_record";
inline constexpr std::string_view kIpAddress = "ip_address";

// Every built-in category, in the order overlapping findings are preferred.
std::span<const std::string_view> BuiltinCategories();
bool IsBuiltinCategory(std::string_view category);

// A value found at text[begin, end).
struct Finding {
  size_t begin = 0;
  size_t end = 0;
  std::string_view category;  // points at a constant above or a PatternDetector's name
};

// Appends the findings of one built-in family to *out, in text order.
void FindEmails(std::string_view text, std::vector<Finding>* out);
void FindPhones(std::string_view text, std::vector<Finding>* out);
void FindIbans(std::string_view text, std::vector<Finding>* out);
void FindPaymentCards(std::string_view text, std::vector<Finding>* out);
void FindUsSsns(std::string_view text, std::vector<Finding>* out);
void FindDatesOfBirth(std::string_view text, std::vector<Finding>* out);
void FindIpAddresses(std::string_view text, std::vector<Finding>* out);

using BuiltinDetector = void (*)(std::string_view, std::vector<Finding>*);
// The detector of a built-in category other than medical_record (which is a pattern);
// nullptr otherwise.
BuiltinDetector BuiltinDetectorFor(std::string_view category);

// How much work a pattern may do per byte of text (thread steps, pattern_program.h): a
// plain pattern takes a few, one that holds many repetitions open at once more. A text that
// would take more is searched up to where the bound stops it and the rest of it is reported as
// one finding of the pattern's category, so the value is never let through unchecked.
inline constexpr size_t kPatternStepsPerByte = 64;

// Finds the matches of an operator's pattern (ECMAScript syntax over bytes, matched in time
// linear in the text: pattern_program.h); empty matches are skipped.
class PatternDetector {
 public:
  // InvalidArgument when the pattern does not compile (CompilePattern: unsupported syntax, or
  // past kMaxPatternBytes or kMaxPatternStates). The one check of a pattern: the policy
  // validator calls it too.
  static Result<std::unique_ptr<PatternDetector>> Create(std::string category, const std::string& pattern);
  void Find(std::string_view text, std::vector<Finding>* out) const;
  const std::string& category() const { return category_; }

 private:
  PatternDetector(std::string category, PatternProgram program)
      : category_(std::move(category)), program_(std::move(program)) {}
  std::string category_;
  PatternProgram program_;
};

}  // namespace kimi::policy
