// The header of a K3 tag: the text between <|open|> and <|sep|>, e.g.
//   call tool="get_weather" index="1"
// A name, then ` key="value"` attributes whose values escape & as &amp; and " as &quot;
// (the reverse of the template's escape_attr).
//
// Owns nothing. Thread safety: pure functions.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace kimi::chat {

struct K3TagHeader {
  std::string name;
  std::vector<std::pair<std::string, std::string>> attributes;  // in the order written

  // The value of an attribute, or nullptr.
  const std::string* Find(std::string_view key) const;
};

// Parses a header; nullopt when it does not follow the grammar above.
std::optional<K3TagHeader> ParseK3TagHeader(std::string_view header);

}  // namespace kimi::chat
