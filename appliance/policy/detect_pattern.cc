// Pattern detectors (the medical record number and operator patterns), and the table of
// built-in detectors: see detectors.h.
#include <algorithm>
#include <vector>

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
  KIMI_ASSIGN_OR_RETURN(PatternProgram program, CompilePattern(pattern));
  return std::unique_ptr<PatternDetector>(new PatternDetector(std::move(category), std::move(program)));
}

void PatternDetector::Find(std::string_view text, std::vector<Finding>* out) const {
  std::vector<PatternMatch> matches;
  const std::optional<size_t> unsearched = FindPatternMatches(program_, text, kPatternStepsPerByte, &matches);
  for (const PatternMatch& m : matches) out->push_back({m.begin, m.end, category_});
  if (unsearched && *unsearched < text.size()) out->push_back({*unsearched, text.size(), category_});
}

}  // namespace kimi::policy
