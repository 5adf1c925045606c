// Redaction detectors: find sensitive values in UTF-8 text. Built-in detectors are plain
// scanners (no regular expressions) over ASCII structure; any other byte, including every
// byte of a multi-byte character, is a boundary, so values inside Vietnamese or Chinese text
// are found the same way as in English. Values with a check digit (IBAN mod 97, payment card
// Luhn) are only reported when the check holds, and SSNs only outside the ranges never
// issued. Operator patterns and the medical record number use std::regex with ECMAScript
// syntax (PatternDetector).
//
// One file per family: detect_contact.cc (e-mail, phone), detect_financial.cc (IBAN, card),
// detect_identity.cc (SSN, date of birth), detect_network.cc (IPv4, IPv6),
// detect_pattern.cc (regex).
//
// Thread safety: pure functions; a PatternDetector is immutable after Create() and may be
// used from many threads at once.
#pragma once

#include <cstddef>
#include <memory>
#include <regex>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "kimi/status.h"

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

// The bounds of an operator's pattern: its length, and the automaton its quantifiers expand to.
inline constexpr size_t kMaxPatternBytes = 256;
inline constexpr size_t kMaxPatternStates = 2000;
// How patterns compile. Under libstdc++ the polynomial (breadth-first) executor: the default
// one backtracks, which is exponential on patterns like (a|aa)*b, and recurses once per
// repetition, so a long prompt matching [a-z]+ overflowed the stack. Backreferences, which
// need backtracking, are refused.
#ifdef __GLIBCXX__
inline constexpr auto kPatternSyntax = std::regex::ECMAScript | std::regex::optimize | std::regex_constants::__polynomial;
#else
inline constexpr auto kPatternSyntax = std::regex::ECMAScript | std::regex::optimize;
#endif

// OK when every repetition count ({m}, {m,n}) and back-reference (\N) of `pattern` has at most
// 9 digits. std::regex reads them into a long without checking for overflow, so that
// "a{18446744073709551617}" compiles as "a{1}" (and the overflow is undefined behaviour);
// InvalidArgument naming the number otherwise.
Status CheckRegexNumbers(std::string_view pattern);

// Finds the matches of an ECMAScript regular expression; empty matches are skipped.
// std::regex is slow when it searches every position of a long text, so a pattern that
// starts (after an optional \b) with a literal of two or more characters is only tried where
// that literal occurs (string_view::find), anchored there; others search the whole text.
class PatternDetector {
 public:
  // InvalidArgument when the pattern does not compile (with kPatternSyntax), passes the bounds
  // above, or holds a number CheckRegexNumbers() refuses. The one check of a pattern: the
  // policy validator calls it too.
  static Result<std::unique_ptr<PatternDetector>> Create(std::string category, const std::string& pattern);
  void Find(std::string_view text, std::vector<Finding>* out) const;
  const std::string& category() const { return category_; }

 private:
  PatternDetector(std::string category, std::regex regex, std::string literal_prefix)
      : category_(std::move(category)), regex_(std::move(regex)), literal_prefix_(std::move(literal_prefix)) {}
  std::string category_;
  std::regex regex_;
  std::string literal_prefix_;  // every match starts with it; empty: unknown
};

}  // namespace kimi::policy
