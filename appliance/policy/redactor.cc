#include "policy/redactor.h"

#include <algorithm>

#include "kimi/hex.h"
#include "policy/reading_text.h"

namespace kimi::policy {
namespace {

// How many bytes of the keyed hash a token shows: 64 bits keep tokens of distinct values
// apart in any realistic log while keeping the text short.
constexpr size_t kTokenBytes = 8;

// How much of a value an action keeps from the text: a block keeps the request from being
// served, a mask shows only the category, a hash a token that links equal values.
int Protects(Action action) {
  switch (action) {
    case Action::kBlock: return 2;
    case Action::kMask: return 1;
    case Action::kHash: return 0;
  }
  return 1;
}

}  // namespace

std::string CategoryLabel(std::string_view category) {
  std::string label(category);
  std::transform(label.begin(), label.end(), label.begin(),
                 [](char c) { return c >= 'a' && c <= 'z' ? static_cast<char>(c - 'a' + 'A') : c; });
  return label;
}

void RedactionTally::Add(std::string_view category, Action action) {
  for (RedactionDecision& d : decisions_) {
    if (d.category == category) {
      ++d.count;
      return;
    }
  }
  decisions_.push_back({std::string(category), action, 1});
}

std::optional<std::string> RedactionTally::BlockedCategory() const {
  for (const RedactionDecision& d : decisions_) {
    if (d.action == Action::kBlock) return d.category;
  }
  return std::nullopt;
}

Result<std::unique_ptr<Redactor>> Redactor::Create(const RedactionPolicy& policy, const auth::ServerSecret* secret) {
  std::unique_ptr<Redactor> r(new Redactor());
  r->secret_ = secret;
  auto check_secret = [&](Action action, std::string_view category) -> Status {
    if (action == Action::kHash && secret == nullptr) {
      return Status::InvalidArgument("the rule for '" + std::string(category) + "' hashes but no server secret is set");
    }
    return Status::OK();
  };
  // Built-in rules in preference order, so FindAll's tie-break is the table's order.
  for (std::string_view category : BuiltinCategories()) {
    auto rule = std::find_if(policy.rules.begin(), policy.rules.end(),
                             [&](const RedactionRule& x) { return x.category == category; });
    if (rule == policy.rules.end()) continue;
    KIMI_RETURN_IF_ERROR(check_secret(rule->action, category));
    if (category == kMedicalRecord) {
      if (policy.medical_record_pattern.empty()) {
        return Status::InvalidArgument("medical_record is redacted but medical_record_pattern is empty");
      }
      KIMI_ASSIGN_OR_RETURN(auto detector, PatternDetector::Create(std::string(kMedicalRecord), policy.medical_record_pattern));
      r->patterns_.insert(r->patterns_.begin(), PatternRule{std::move(detector), rule->action});
      continue;
    }
    r->builtins_.push_back({category, BuiltinDetectorFor(category), rule->action});
  }
  for (const RedactionRule& rule : policy.rules) {
    if (!IsBuiltinCategory(rule.category)) return Status::InvalidArgument("unknown category '" + rule.category + "'");
  }
  for (const CustomPattern& custom : policy.custom_patterns) {
    KIMI_RETURN_IF_ERROR(check_secret(custom.action, custom.name));
    KIMI_ASSIGN_OR_RETURN(auto detector, PatternDetector::Create(custom.name, custom.pattern));
    r->patterns_.push_back({std::move(detector), custom.action});
  }
  return r;
}

std::vector<Redactor::Span> Redactor::FindSpans(const ReadingText& reading) const {
  const std::string_view text = reading.text();
  std::vector<Finding> all;
  for (const BuiltinRule& rule : builtins_) rule.detector(text, &all);
  for (const PatternRule& rule : patterns_) rule.detector->Find(text, &all);
  // Earliest start, then longest; stable keeps the detectors' preference order on ties.
  std::stable_sort(all.begin(), all.end(), [](const Finding& a, const Finding& b) {
    if (a.begin != b.begin) return a.begin < b.begin;
    return a.end > b.end;
  });
  std::vector<Span> spans;
  for (const Finding& f : all) {
    // Back in the original's bytes, whole characters: patterns match bytes and may stop inside
    // a multi-byte character, which would leave half of it, invalid UTF-8, in the output.
    // The way back keeps the findings' order.
    const auto [begin, end] = reading.OriginalRange(f.begin, f.end);
    if (spans.empty() || begin >= spans.back().end) {
      spans.push_back({begin, end, {f.category}});
      continue;
    }
    Span& span = spans.back();
    span.end = std::max(span.end, end);
    if (std::find(span.categories.begin(), span.categories.end(), f.category) == span.categories.end()) {
      span.categories.push_back(f.category);
    }
  }
  return spans;
}

Action Redactor::ActionOf(std::string_view category) const {
  for (const BuiltinRule& rule : builtins_) {
    if (rule.category == category) return rule.action;
  }
  for (const PatternRule& rule : patterns_) {
    if (rule.detector->category() == category) return rule.action;
  }
  return Action::kMask;
}

std::string Redactor::Replacement(std::string_view category, std::string_view value, Action action) const {
  if (action == Action::kHash) {
    std::string input = "kimi-redaction";
    input.push_back('\0');
    input.append(category);
    input.push_back('\0');
    // Of the value as read, so "4111 1111…" and its full-width form give one token.
    input.append(ReadAsDetectorsDo(value));
    const auth::Digest digest = secret_->KeyedHash(input);
    std::string_view head(reinterpret_cast<const char*>(digest.data()), kTokenBytes);
    return "[HASH:" + CategoryLabel(category) + ":" + HexEncode(head) + "]";
  }
  return "[REDACTED:" + CategoryLabel(category) + "]";
}

std::string Redactor::Redact(std::string_view text, RedactionTally* tally, bool mask_blocked) const {
  if (empty()) return std::string(text);
  std::string out;
  out.reserve(text.size());
  size_t copied = 0;
  for (const Span& span : FindSpans(ReadingText(text))) {
    // The span takes the most protective of its categories' actions (block, then mask, then
    // hash) under the label of the first category that has it.
    std::string_view label = span.categories.front();
    Action action = ActionOf(label);
    for (std::string_view category : span.categories) {
      const Action its = ActionOf(category);
      tally->Add(category, its);
      if (Protects(its) > Protects(action)) {
        action = its;
        label = category;
      }
    }
    if (action == Action::kBlock && !mask_blocked) continue;  // the request is refused; the text is not used
    out.append(text.substr(copied, span.begin - copied));
    out.append(Replacement(label, text.substr(span.begin, span.end - span.begin),
                           action == Action::kBlock ? Action::kMask : action));
    copied = span.end;
  }
  out.append(text.substr(copied));
  return out;
}

}  // namespace kimi::policy
