// Regular-expression detectors (the medical record number and operator patterns), and the
// table of built-in detectors: see detectors.h.
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

namespace {

// The literal every match of `pattern` starts with: the characters after an optional
// leading \b up to the first one with a meaning in ECMAScript syntax, less a last character
// that a quantifier follows. Shorter than two characters, or any alternation in the
// pattern: "" (no prefilter).
std::string LiteralPrefix(std::string_view pattern) {
  if (pattern.find('|') != std::string_view::npos) return "";
  if (pattern.starts_with("\\b")) pattern.remove_prefix(2);
  std::string literal;
  size_t i = 0;
  auto plain = [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' || c == '_' ||
           c == ':' || c == ' ' || c == '#' || c == '/' || c == '=';
  };
  while (i < pattern.size() && plain(pattern[i])) literal.push_back(pattern[i++]);
  if (i < pattern.size() && !literal.empty() && std::string_view("?*{").find(pattern[i]) != std::string_view::npos) {
    literal.pop_back();  // "ab?c": only "a" is certain
  }
  return literal.size() >= 2 ? literal : std::string();
}

// An upper bound on the automaton a pattern compiles to: an atom is one state, a group the
// sum of its parts, and a quantifier {n,m} repeats its operand max(n, m) times. Counted as the
// pattern is read, without recursion.
size_t AutomatonSizeBound(std::string_view pattern) {
  std::vector<size_t> groups = {0};  // states so far in each open group
  size_t last = 0;                   // states of the last atom (what a quantifier repeats)
  auto add = [&](size_t n) {
    last = n;
    groups.back() = std::min(groups.back() + n, kMaxPatternStates + 1);
  };
  for (size_t i = 0; i < pattern.size(); ++i) {
    const char c = pattern[i];
    if (c == '\\') {
      ++i;
      add(1);
    } else if (c == '[') {
      while (++i < pattern.size() && pattern[i] != ']') {
        if (pattern[i] == '\\') ++i;
      }
      add(1);
    } else if (c == '(') {
      groups.push_back(0);
    } else if (c == ')' && groups.size() > 1) {
      const size_t inner = groups.back() + 1;
      groups.pop_back();
      add(inner);
    } else if (c == '{' && i + 1 < pattern.size() && pattern[i + 1] >= '0' && pattern[i + 1] <= '9') {
      size_t most = 0, value = 0;
      for (++i; i < pattern.size() && pattern[i] != '}'; ++i) {
        if (pattern[i] >= '0' && pattern[i] <= '9') {
          value = std::min<size_t>(value * 10 + size_t(pattern[i] - '0'), kMaxPatternStates + 1);
        } else {
          value = 0;
        }
        most = std::max(most, value);
      }
      const size_t extra = last * (most > 0 ? most - 1 : 0);
      groups.back() = std::min(groups.back() + std::min(extra, kMaxPatternStates + 1), kMaxPatternStates + 1);
    } else {
      add(1);
    }
  }
  size_t total = 0;
  for (size_t g : groups) total = std::min(total + g, kMaxPatternStates + 1);
  return total;
}

}  // namespace

Status CheckRegexNumbers(std::string_view pattern) {
  constexpr size_t kMaxDigits = 9;
  auto digit = [&pattern](size_t i) { return i < pattern.size() && pattern[i] >= '0' && pattern[i] <= '9'; };
  for (size_t i = 0; i < pattern.size(); ++i) {
    const bool backreference = pattern[i] == '\\' && digit(i + 1);
    if (pattern[i] == '\\' && !backreference) {
      ++i;  // an escaped character, "\{" included
      continue;
    }
    if (!backreference && pattern[i] != '{') continue;
    // \N, or {m}, {m,} and {m,n}: each number in turn.
    size_t j = i + 1;
    while (true) {
      const size_t start = j;
      while (digit(j)) ++j;
      if (j - start > kMaxDigits) {
        return Status::InvalidArgument("the number " + std::string(pattern.substr(start, j - start)) +
                                       " (a repetition count or back-reference) has more than 9 digits");
      }
      if (backreference || j >= pattern.size() || pattern[j] != ',') break;
      ++j;
    }
    i = j - 1;
  }
  return Status::OK();
}

Result<std::unique_ptr<PatternDetector>> PatternDetector::Create(std::string category, const std::string& pattern) {
  KIMI_RETURN_IF_ERROR(CheckRegexNumbers(pattern));
  if (pattern.size() > kMaxPatternBytes) {
    return Status::InvalidArgument("the pattern is longer than " + std::to_string(kMaxPatternBytes) + " bytes");
  }
  if (AutomatonSizeBound(pattern) > kMaxPatternStates) {
    return Status::InvalidArgument("the pattern repeats too much: its automaton would exceed " +
                                   std::to_string(kMaxPatternStates) + " states (lower the {n,m} counts)");
  }
  try {
    std::regex regex(pattern, kPatternSyntax);
    return std::unique_ptr<PatternDetector>(
        new PatternDetector(std::move(category), std::move(regex), LiteralPrefix(pattern)));
  } catch (const std::regex_error& e) {
    return Status::InvalidArgument("the pattern does not compile as an ECMAScript regular expression: " +
                                   std::string(e.what()));
  }
}

void PatternDetector::Find(std::string_view text, std::vector<Finding>* out) const {
  if (!literal_prefix_.empty()) {
    std::match_results<std::string_view::const_iterator> match;
    for (size_t pos = text.find(literal_prefix_); pos != std::string_view::npos; pos = text.find(literal_prefix_, pos)) {
      // Anchored at the candidate; the byte before it stays visible so \b is judged right.
      auto flags = std::regex_constants::match_continuous;
      if (pos > 0) flags |= std::regex_constants::match_prev_avail;
      if (std::regex_search(text.begin() + static_cast<std::ptrdiff_t>(pos), text.end(), match, regex_, flags) &&
          match.length(0) > 0) {
        out->push_back({pos, pos + static_cast<size_t>(match.length(0)), category_});
        pos += static_cast<size_t>(match.length(0));
      } else {
        ++pos;
      }
    }
    return;
  }
  using Iterator = std::regex_iterator<std::string_view::const_iterator>;
  for (Iterator it(text.begin(), text.end(), regex_), last; it != last; ++it) {
    const auto& match = *it;
    if (match.length(0) == 0) continue;
    const size_t begin = static_cast<size_t>(match.position(0));
    out->push_back({begin, begin + static_cast<size_t>(match.length(0)), category_});
  }
}

}  // namespace kimi::policy
