#include "kimi/python_text.h"

#include <unicode/uchar.h>
#include <unicode/ustring.h>
#include <unicode/utf8.h>

#include <algorithm>
#include <charconv>
#include <cstdio>
#include <utility>
#include <vector>

namespace kimi::chat {
namespace {

void AppendHexEscape(const char* prefix, int width, uint32_t value, std::string* out) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "%s%0*x", prefix, width, static_cast<unsigned>(value));
  out->append(buf);
}

// Python's str.isspace() set (Unicode White_Space plus the ASCII separators 0x1c-0x1f).
bool IsPythonSpace(UChar32 c) {
  if (c == ' ' || (c >= 0x09 && c <= 0x0d) || (c >= 0x1c && c <= 0x1f)) return true;
  if (c < 0x80) return false;
  return c == 0x85 || c == 0xa0 || c == 0x1680 || (c >= 0x2000 && c <= 0x200a) || c == 0x2028 ||
         c == 0x2029 || c == 0x202f || c == 0x205f || c == 0x3000;
}

// str.isprintable(): everything but categories Cc, Cf, Cs, Co, Cn, Zl, Zp and Zs (space aside).
bool IsPythonPrintable(UChar32 c) {
  if (c == ' ') return true;
  switch (u_charType(c)) {
    case U_CONTROL_CHAR: case U_FORMAT_CHAR: case U_SURROGATE: case U_PRIVATE_USE_CHAR:
    case U_UNASSIGNED: case U_LINE_SEPARATOR: case U_PARAGRAPH_SEPARATOR: case U_SPACE_SEPARATOR:
      return false;
    default:
      return true;
  }
}

// repr(str): single quotes unless the text has ' and no ", Python's escapes for the rest.
void AppendPythonRepr(std::string_view s, std::string* out) {
  const bool has_single = s.find('\'') != std::string_view::npos;
  const bool has_double = s.find('"') != std::string_view::npos;
  const char quote = (has_single && !has_double) ? '"' : '\'';
  out->push_back(quote);
  int32_t i = 0;
  const int32_t n = static_cast<int32_t>(s.size());
  while (i < n) {
    const int32_t start = i;
    UChar32 c;
    U8_NEXT(s.data(), i, n, c);
    if (c < 0) {  // not reachable from parsed JSON; keep the bytes
      out->append(s.substr(start, i - start));
      continue;
    }
    if (c == quote || c == '\\') {
      out->push_back('\\');
      out->push_back(static_cast<char>(c));
    } else if (c == '\t') {
      out->append("\\t");
    } else if (c == '\n') {
      out->append("\\n");
    } else if (c == '\r') {
      out->append("\\r");
    } else if (c < 0x20 || c == 0x7f) {
      AppendHexEscape("\\x", 2, c, out);
    } else if (c < 0x7f || IsPythonPrintable(c)) {
      out->append(s.substr(start, i - start));
    } else if (c <= 0xff) {
      AppendHexEscape("\\x", 2, c, out);
    } else if (c <= 0xffff) {
      AppendHexEscape("\\u", 4, c, out);
    } else {
      AppendHexEscape("\\U", 8, c, out);
    }
  }
  out->push_back(quote);
}

void AppendPythonScalar(const Json& v, std::string* out) {
  switch (v.type()) {
    case Json::value_t::null: out->append("None"); break;
    case Json::value_t::boolean: out->append(v.get<bool>() ? "True" : "False"); break;
    case Json::value_t::number_integer: out->append(std::to_string(v.get<int64_t>())); break;
    case Json::value_t::number_unsigned: out->append(std::to_string(v.get<uint64_t>())); break;
    case Json::value_t::number_float: out->append(PythonFloatRepr(v.get<double>())); break;
    default: break;
  }
}

// Python's str() of a list or dict and json.dumps() of one differ only in how keys and leaves
// are written; the brackets and ", " / ": " separators are the same, so one walker serves both.
template <typename WriteKey, typename WriteLeaf>
void AppendNested(const Json& v, std::string* out, const WriteKey& write_key, const WriteLeaf& write_leaf) {
  if (v.is_array()) {
    out->push_back('[');
    bool first = true;
    for (const Json& item : v) {
      if (!first) out->append(", ");
      first = false;
      AppendNested(item, out, write_key, write_leaf);
    }
    out->push_back(']');
  } else if (v.is_object()) {
    out->push_back('{');
    bool first = true;
    for (const auto& [key, item] : v.items()) {
      if (!first) out->append(", ");
      first = false;
      write_key(key, out);
      out->append(": ");
      AppendNested(item, out, write_key, write_leaf);
    }
    out->push_back('}');
  } else {
    write_leaf(v, out);
  }
}

void AppendPythonReprValue(const Json& v, std::string* out) {
  AppendNested(
      v, out, [](const std::string& key, std::string* o) { AppendPythonRepr(key, o); },
      [](const Json& leaf, std::string* o) {
        if (leaf.is_string()) AppendPythonRepr(leaf.get_ref<const std::string&>(), o);
        else AppendPythonScalar(leaf, o);
      });
}

void AppendJsonScalar(const Json& v, std::string* out) {
  switch (v.type()) {
    case Json::value_t::null: out->append("null"); break;
    case Json::value_t::boolean: out->append(v.get<bool>() ? "true" : "false"); break;
    case Json::value_t::string: AppendPythonJsonString(v.get_ref<const std::string&>(), out); break;
    default: AppendPythonScalar(v, out); break;
  }
}

void AppendDumps(const Json& v, std::string* out) {
  AppendNested(
      v, out, [](const std::string& key, std::string* o) { AppendPythonJsonString(key, o); },
      [](const Json& leaf, std::string* o) { AppendJsonScalar(leaf, o); });
}

void AppendSorted(const Json& v, std::string* out) {
  if (v.is_object()) {
    std::vector<std::pair<std::string, const Json*>> items;
    items.reserve(v.size());
    for (const auto& [key, item] : v.items()) items.emplace_back(key, &item);
    std::vector<std::string> lowered;
    lowered.reserve(items.size());
    for (const auto& item : items) lowered.push_back(PythonLower(item.first));
    std::vector<size_t> order(items.size());
    for (size_t i = 0; i < order.size(); ++i) order[i] = i;
    // UTF-8 byte order is code point order, which is how Python compares strings.
    std::stable_sort(order.begin(), order.end(),
                     [&](size_t a, size_t b) { return lowered[a] < lowered[b]; });
    out->push_back('{');
    bool first = true;
    for (size_t i : order) {
      if (!first) out->push_back(',');
      first = false;
      AppendPythonJsonString(items[i].first, out);
      out->push_back(':');
      AppendSorted(*items[i].second, out);
    }
    out->push_back('}');
  } else if (v.is_array()) {
    out->push_back('[');
    bool first = true;
    for (const Json& item : v) {
      if (!first) out->push_back(',');
      first = false;
      AppendSorted(item, out);
    }
    out->push_back(']');
  } else {
    AppendJsonScalar(v, out);
  }
}

}  // namespace

bool NestingWithin(const Json& root, size_t limit) {
  std::vector<std::pair<const Json*, size_t>> stack = {{&root, 1}};
  while (!stack.empty()) {
    auto [value, depth] = stack.back();
    stack.pop_back();
    if (depth > limit) return false;
    if (value->is_structured()) {
      for (const Json& child : *value) stack.emplace_back(&child, depth + 1);
    }
  }
  return true;
}

void AppendPythonJsonString(std::string_view s, std::string* out) {
  out->push_back('"');
  AppendJsonEscaped(s, out);
  out->push_back('"');
}

void AppendJsonEscaped(std::string_view s, std::string* out) {
  for (char ch : s) {
    const auto c = static_cast<unsigned char>(ch);
    switch (c) {
      case '"': out->append("\\\""); break;
      case '\\': out->append("\\\\"); break;
      case '\n': out->append("\\n"); break;
      case '\r': out->append("\\r"); break;
      case '\t': out->append("\\t"); break;
      case '\b': out->append("\\b"); break;
      case '\f': out->append("\\f"); break;
      default:
        if (c < 0x20) {
          AppendHexEscape("\\u", 4, c, out);
        } else {
          out->push_back(ch);
        }
    }
  }
}

std::string PythonFloatRepr(double value) {
  char buf[64];
  auto [end, ec] = std::to_chars(buf, buf + sizeof buf, value, std::chars_format::scientific);
  if (ec != std::errc()) return "nan";
  std::string_view sci(buf, static_cast<size_t>(end - buf));  // e.g. "-1.2345e+17", "5e-324"
  std::string out;
  if (sci.front() == '-') {
    out.push_back('-');
    sci.remove_prefix(1);
  }
  if (sci == "inf") return out + "Infinity";
  if (sci == "nan") return "NaN";
  const size_t e_pos = sci.find('e');
  std::string digits;
  for (char c : sci.substr(0, e_pos)) {
    if (c != '.') digits.push_back(c);
  }
  int exponent = 0;
  std::from_chars(sci.data() + e_pos + (sci[e_pos + 1] == '+' ? 2 : 1), sci.data() + sci.size(), exponent);
  if (exponent < -4 || exponent >= 16) {
    out.push_back(digits[0]);
    if (digits.size() > 1) {
      out.push_back('.');
      out.append(digits, 1);
    }
    char exp_buf[16];
    std::snprintf(exp_buf, sizeof exp_buf, "e%c%02d", exponent < 0 ? '-' : '+', std::abs(exponent));
    out.append(exp_buf);
  } else if (exponent < 0) {
    out.append("0.");
    out.append(static_cast<size_t>(-exponent - 1), '0');
    out.append(digits);
  } else {
    const size_t int_digits = static_cast<size_t>(exponent) + 1;
    if (digits.size() <= int_digits) {
      out.append(digits);
      out.append(int_digits - digits.size(), '0');
      out.append(".0");
    } else {
      out.append(digits, 0, int_digits);
      out.push_back('.');
      out.append(digits, int_digits);
    }
  }
  return out;
}

std::string PythonJsonDumps(const Json& value) {
  std::string out;
  AppendDumps(value, &out);
  return out;
}

std::string SortedCompactJson(const Json& value) {
  std::string out;
  AppendSorted(value, &out);
  return out;
}

std::string PythonStr(const Json& value) {
  if (value.is_string()) return value.get<std::string>();
  std::string out;
  AppendPythonReprValue(value, &out);
  return out;
}

bool PythonTruthy(const Json& value) {
  switch (value.type()) {
    case Json::value_t::null: return false;
    case Json::value_t::boolean: return value.get<bool>();
    case Json::value_t::number_integer: return value.get<int64_t>() != 0;
    case Json::value_t::number_unsigned: return value.get<uint64_t>() != 0;
    case Json::value_t::number_float: return value.get<double>() != 0.0;
    case Json::value_t::string: return !value.get_ref<const std::string&>().empty();
    case Json::value_t::array:
    case Json::value_t::object: return !value.empty();
    default: return true;
  }
}

std::string_view PythonStrip(std::string_view s) {
  const int32_t n = static_cast<int32_t>(s.size());
  int32_t begin = 0;
  while (begin < n) {
    int32_t next = begin;
    UChar32 c;
    U8_NEXT(s.data(), next, n, c);
    if (c < 0 || !IsPythonSpace(c)) break;
    begin = next;
  }
  int32_t end = n;
  while (end > begin) {
    int32_t prev = end;
    UChar32 c;
    U8_PREV(s.data(), begin, prev, c);
    if (c < 0 || !IsPythonSpace(c)) break;
    end = prev;
  }
  return s.substr(static_cast<size_t>(begin), static_cast<size_t>(end - begin));
}

std::string PythonLower(std::string_view s) {
  bool ascii = true;
  for (char c : s) ascii = ascii && static_cast<unsigned char>(c) < 0x80;
  if (ascii) {
    std::string out(s);
    for (char& c : out) {
      if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
    }
    return out;
  }
  UErrorCode status = U_ZERO_ERROR;
  int32_t utf16_len = 0;
  u_strFromUTF8(nullptr, 0, &utf16_len, s.data(), static_cast<int32_t>(s.size()), &status);
  if (status != U_BUFFER_OVERFLOW_ERROR && U_FAILURE(status)) return std::string(s);
  std::u16string utf16(static_cast<size_t>(utf16_len), u'\0');
  status = U_ZERO_ERROR;
  u_strFromUTF8(utf16.data(), utf16_len, nullptr, s.data(), static_cast<int32_t>(s.size()), &status);
  if (U_FAILURE(status)) return std::string(s);
  // Full case mapping can grow the text (U+0130 becomes two code points).
  std::u16string lowered(utf16.size() * 3 + 1, u'\0');
  status = U_ZERO_ERROR;
  const int32_t lowered_len = u_strToLower(lowered.data(), static_cast<int32_t>(lowered.size()), utf16.data(),
                                           utf16_len, "", &status);
  if (U_FAILURE(status)) return std::string(s);
  std::string out(static_cast<size_t>(lowered_len) * 3, '\0');
  int32_t out_len = 0;
  status = U_ZERO_ERROR;
  u_strToUTF8(out.data(), static_cast<int32_t>(out.size()), &out_len, lowered.data(), lowered_len, &status);
  if (U_FAILURE(status)) return std::string(s);
  out.resize(static_cast<size_t>(out_len));
  return out;
}

}  // namespace kimi::chat
