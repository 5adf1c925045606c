// Regular-expression detectors (the medical record number and operator patterns), and the
// table of built-in detectors: see detectors.h.
#include <algorithm>

#include "policy/detectors.h"

namespace kimi::policy {
namespace {

constexpr std::string_view kCategories[] = {kPaymentCard, kIban,      kUsSsn,  kEmail,
                                            kIpAddress,   kDateOfBirth, kPhone, kMedicalRecord};

struct Builtin {
  std::string_view category;
  BuiltinDetector detector;
};
constexpr Builtin kBuiltins[] = {
    {kEmail, &FindEmails},    {kPhone, &FindPhones},           {kIban, &FindIbans},
    {kPaymentCard, &FindPaymentCards}, {kUsSsn, &FindUsSsns}, {kDateOfBirth, &FindDatesOfBirth},
    {kIpAddress, &FindIpAddresses},
};

}  // namespace

std::span<const std::string_view> BuiltinCategories() { return kCategories; }

bool IsBuiltinCategory(std::string_view category) {
  return std::find(std::begin(kCategories), std::end(kCategories), category) != std::end(kCategories);
}

BuiltinDetector BuiltinDetectorFor(std::string_view category) {
  for (const Builtin& b : kBuiltins) {
    if (b.category == category) return b.detector;
  }
  return nullptr;
}

Result<std::unique_ptr<PatternDetector>> PatternDetector::Create(std::string category, const std::string& pattern) {
  try {
    std::regex regex(pattern, std::regex::ECMAScript | std::regex::optimize);
    return std::unique_ptr<PatternDetector>(new PatternDetector(std::move(category), std::move(regex)));
  } catch (const std::regex_error& e) {
    return Status::InvalidArgument("the pattern does not compile as an ECMAScript regular expression: " +
                                   std::string(e.what()));
  }
}

void PatternDetector::Find(std::string_view text, std::vector<Finding>* out) const {
  using Iterator = std::regex_iterator<std::string_view::const_iterator>;
  for (Iterator it(text.begin(), text.end(), regex_), last; it != last; ++it) {
    const auto& match = *it;
    if (match.length(0) == 0) continue;
    const size_t begin = static_cast<size_t>(match.position(0));
    out->push_back({begin, begin + static_cast<size_t>(match.length(0)), category_});
  }
}

}  // namespace kimi::policy
