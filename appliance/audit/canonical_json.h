// The small canonical JSON writer that the audit log's hashed bytes are made with.
//
// Output is RFC 8785 (JCS) for the value types the audit log uses: strings are valid UTF-8
// written raw except `"` `\` and U+0000..U+001F, which are escaped (\b \f \n \r \t, others
// \u00xx lowercase); integers are plain decimal; no whitespace anywhere. Object members are
// written in the order the caller gives, and callers give them sorted by key.
//
// Thread safety: CanonicalWriter is a value; functions are pure.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>

namespace kimi::audit {

// Replaces every ill-formed UTF-8 sequence (overlong forms, surrogates, code points above
// U+10FFFF, truncated sequences) with U+FFFD, one per maximal ill-formed subpart.
std::string SanitizeUtf8(std::string_view in);
bool IsValidUtf8(std::string_view in);

// Appends s as a JSON string. Precondition: s is valid UTF-8.
void AppendJsonString(std::string_view s, std::string* out);

// Builds one JSON object, member by member. Precondition: keys come in strictly increasing
// byte order (checked with assert) and are plain ASCII.
class CanonicalObject {
 public:
  CanonicalObject() { out_.push_back('{'); }
  CanonicalObject& Add(std::string_view key, std::string_view value);
  CanonicalObject& Add(std::string_view key, int64_t value);
  CanonicalObject& AddStringArray(std::string_view key, std::span<const std::string> values);
  // Appends pre-encoded canonical JSON as the value.
  CanonicalObject& AddRaw(std::string_view key, std::string_view canonical_json);
  std::string Finish();  // call once, last

 private:
  void Key(std::string_view key);
  std::string out_;
  std::string last_key_;
  bool first_ = true;
};

// Canonical encoding of an array of strings: ["a","b"].
std::string CanonicalStringArray(std::span<const std::string> values);

}  // namespace kimi::audit
