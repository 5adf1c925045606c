#include "audit/canonical_json.h"

#include <cassert>

#include "kimi/tokenizer_utf8.h"

namespace kimi::audit {
namespace {

// Length of the well-formed UTF-8 sequence at in[i], or 0 when it is ill-formed.
size_t WellFormedLength(std::string_view in, size_t i) {
  const kimi::text::Utf8Step step = kimi::text::DecodeUtf8At(in, i);
  return step.kind == kimi::text::Utf8Kind::kComplete ? static_cast<size_t>(step.length) : 0;
}

}  // namespace

bool IsValidUtf8(std::string_view in) {
  for (size_t i = 0; i < in.size();) {
    const size_t n = WellFormedLength(in, i);
    if (n == 0) return false;
    i += n;
  }
  return true;
}

std::string SanitizeUtf8(std::string_view in) {
  if (IsValidUtf8(in)) return std::string(in);
  std::string out;
  out.reserve(in.size() + 8);
  for (size_t i = 0; i < in.size();) {
    const size_t n = WellFormedLength(in, i);
    if (n > 0) {
      out.append(in.substr(i, n));
      i += n;
      continue;
    }
    out.append("\xEF\xBF\xBD");
    // Skip the lead byte and any continuation bytes that cannot start a sequence.
    ++i;
    while (i < in.size() && kimi::text::IsUtf8Continuation(in[i])) ++i;
  }
  return out;
}

void AppendJsonString(std::string_view s, std::string* out) {
  static constexpr char kDigits[] = "0123456789abcdef";
  out->push_back('"');
  for (char ch : s) {
    const auto c = static_cast<uint8_t>(ch);
    switch (c) {
      case '"': out->append("\\\""); break;
      case '\\': out->append("\\\\"); break;
      case '\b': out->append("\\b"); break;
      case '\f': out->append("\\f"); break;
      case '\n': out->append("\\n"); break;
      case '\r': out->append("\\r"); break;
      case '\t': out->append("\\t"); break;
      default:
        if (c < 0x20) {
          out->append("\\u00");
          out->push_back(kDigits[c >> 4]);
          out->push_back(kDigits[c & 0xf]);
        } else {
          out->push_back(ch);
        }
    }
  }
  out->push_back('"');
}

void CanonicalObject::Key(std::string_view key) {
  assert((first_ || key > last_key_) && "canonical object keys must be added in sorted order");
  if (!first_) out_.push_back(',');
  first_ = false;
  last_key_.assign(key);
  AppendJsonString(key, &out_);
  out_.push_back(':');
}

CanonicalObject& CanonicalObject::Add(std::string_view key, std::string_view value) {
  Key(key);
  AppendJsonString(value, &out_);
  return *this;
}

CanonicalObject& CanonicalObject::Add(std::string_view key, int64_t value) {
  Key(key);
  out_.append(std::to_string(value));
  return *this;
}

CanonicalObject& CanonicalObject::AddStringArray(std::string_view key, std::span<const std::string> values) {
  Key(key);
  out_.append(CanonicalStringArray(values));
  return *this;
}

CanonicalObject& CanonicalObject::AddRaw(std::string_view key, std::string_view canonical_json) {
  Key(key);
  out_.append(canonical_json);
  return *this;
}

std::string CanonicalObject::Finish() {
  out_.push_back('}');
  return std::move(out_);
}

std::string CanonicalStringArray(std::span<const std::string> values) {
  std::string out = "[";
  for (size_t i = 0; i < values.size(); ++i) {
    if (i > 0) out.push_back(',');
    AppendJsonString(values[i], &out);
  }
  out.push_back(']');
  return out;
}

}  // namespace kimi::audit
