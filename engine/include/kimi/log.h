// Structured logging for the engine and the daemon.
//
// One event a line: a JSON object ({"ts","level","msg",...fields}) when logs go to a file or
// a journal, or readable "ts LEVEL msg key=value" text when stderr is a terminal. Levels below
// the configured one are dropped before any formatting.
//
// Thread safety: every function may be called from any thread; lines never interleave.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <string>
#include <string_view>
#include <type_traits>
#include <variant>

namespace kimi::log {

enum class Level { kDebug = 0, kInfo = 1, kWarn = 2, kError = 3 };
enum class Format { kAuto, kJson, kText };

// One key=value pair of an event. Values are copied at the call.
struct Field {
  using Value = std::variant<std::string, int64_t, double, bool>;
  Field(std::string_view k, std::string_view v) : key(k), value(std::string(v)) {}
  Field(std::string_view k, const char* v) : key(k), value(std::string(v)) {}
  Field(std::string_view k, const std::string& v) : key(k), value(v) {}
  Field(std::string_view k, bool v) : key(k), value(v) {}
  Field(std::string_view k, double v) : key(k), value(v) {}
  template <typename I, typename = std::enable_if_t<std::is_integral_v<I> && !std::is_same_v<I, bool>>>
  Field(std::string_view k, I v) : key(k), value(static_cast<int64_t>(v)) {}
  std::string key;
  Value value;
};

// Sets the level and format; kAuto picks text when stderr is a terminal, JSON otherwise.
void Configure(Level level, Format format);
Level CurrentLevel();
bool ParseLevel(std::string_view name, Level* out);

void Write(Level level, std::string_view message, std::initializer_list<Field> fields = {});
inline void Debug(std::string_view m, std::initializer_list<Field> f = {}) { Write(Level::kDebug, m, f); }
inline void Info(std::string_view m, std::initializer_list<Field> f = {}) { Write(Level::kInfo, m, f); }
inline void Warn(std::string_view m, std::initializer_list<Field> f = {}) { Write(Level::kWarn, m, f); }
inline void Error(std::string_view m, std::initializer_list<Field> f = {}) { Write(Level::kError, m, f); }

// Formats one event as the JSON line Write() would emit (without the newline). For tests.
std::string FormatJson(Level level, std::string_view message, std::initializer_list<Field> fields,
                       std::string_view timestamp);
// The same as the terminal's "ts LEVEL msg key=value" text; a value with a space, quote, '='
// or any control character is written as an escaped JSON string. For tests.
std::string FormatText(Level level, std::string_view message, std::initializer_list<Field> fields,
                       std::string_view timestamp);

}  // namespace kimi::log
