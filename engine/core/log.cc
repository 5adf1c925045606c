#include "kimi/log.h"

#include "kimi/utc_time.h"

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <ctime>
#include <mutex>

#include <nlohmann/json.hpp>

namespace kimi::log {
namespace {

std::atomic<int> g_level{static_cast<int>(Level::kInfo)};
std::atomic<int> g_format{static_cast<int>(Format::kAuto)};
std::mutex g_write_mutex;

std::string_view LevelName(Level level) {
  switch (level) {
    case Level::kDebug: return "debug";
    case Level::kInfo: return "info";
    case Level::kWarn: return "warn";
    case Level::kError: return "error";
  }
  return "info";
}

std::string NowUtc() { return FormatUtcMillis(UnixMillisNow()); }

nlohmann::json ToJson(const Field::Value& v) {
  return std::visit([](const auto& x) { return nlohmann::json(x); }, v);
}

// The code points past ASCII that break or disguise a line on a terminal or in a viewer, as
// the audit log's text rule has them: C1 controls (NEL, CSI), the line and paragraph
// separators, bidi embeddings, overrides and isolates. Written as \uXXXX, which a JSON string
// reads back as the same character and a text line shows as text. Invalid UTF-8 is not looked
// into (the JSON writer replaces it).
std::string EscapeDisguising(std::string line) {
  std::string out;
  out.reserve(line.size());
  for (size_t i = 0; i < line.size(); ++i) {
    const auto b = [&](size_t k) { return static_cast<unsigned char>(k < line.size() ? line[k] : 0); };
    uint32_t c = 0;
    size_t length = 0;
    if (b(i) == 0xC2 && b(i + 1) >= 0x80 && b(i + 1) <= 0x9F) {
      c = b(i + 1), length = 2;
    } else if (b(i) == 0xE2 && b(i + 1) == 0x80 && b(i + 2) >= 0xA8 && b(i + 2) <= 0xAE) {
      c = 0x2000 + (b(i + 2) - 0x80), length = 3;
    } else if (b(i) == 0xE2 && b(i + 1) == 0x81 && b(i + 2) >= 0xA6 && b(i + 2) <= 0xA9) {
      c = 0x2040 + (b(i + 2) - 0x80), length = 3;
    }
    if (length == 0) {
      out += line[i];
      continue;
    }
    char escaped[8];
    std::snprintf(escaped, sizeof escaped, "\\u%04x", static_cast<unsigned>(c));
    out += escaped;
    i += length - 1;
  }
  return out;
}

}  // namespace

std::string FormatText(Level level, std::string_view message, std::initializer_list<Field> fields,
                       std::string_view ts) {
  std::string out(ts);
  out += ' ';
  std::string lvl(LevelName(level));
  for (auto& c : lvl) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  out += lvl;
  out.append(6 - lvl.size(), ' ');
  out += message;
  for (const Field& f : fields) {
    out += ' ';
    out += f.key;
    out += '=';
    if (auto* s = std::get_if<std::string>(&f.value)) {
      // Anything that could end the line, forge another field or drive the terminal (CR, ESC,
      // every control character) is written as a JSON string, escaped.
      const bool plain = !s->empty() && std::none_of(s->begin(), s->end(), [](char ch) {
        const auto c = static_cast<unsigned char>(ch);
        return c <= 0x20 || c == 0x7F || c == '"' || c == '=';
      });
      out += plain ? *s : nlohmann::json(*s).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
    } else {
      out += ToJson(f.value).dump();
    }
  }
  return EscapeDisguising(std::move(out));
}

void Configure(Level level, Format format) {
  g_level.store(static_cast<int>(level));
  g_format.store(static_cast<int>(format));
}

Level CurrentLevel() { return static_cast<Level>(g_level.load()); }

bool ParseLevel(std::string_view name, Level* out) {
  for (Level l : {Level::kDebug, Level::kInfo, Level::kWarn, Level::kError}) {
    if (name == LevelName(l)) {
      *out = l;
      return true;
    }
  }
  return false;
}

std::string FormatJson(Level level, std::string_view message, std::initializer_list<Field> fields,
                       std::string_view timestamp) {
  nlohmann::ordered_json j;
  j["ts"] = timestamp;
  j["level"] = LevelName(level);
  j["msg"] = message;
  for (const Field& f : fields) j[f.key] = ToJson(f.value);
  return EscapeDisguising(j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
}

void Write(Level level, std::string_view message, std::initializer_list<Field> fields) {
  if (static_cast<int>(level) < g_level.load()) return;
  std::string ts = NowUtc();
  auto format = static_cast<Format>(g_format.load());
  if (format == Format::kAuto) format = isatty(STDERR_FILENO) ? Format::kText : Format::kJson;
  std::string line = format == Format::kJson ? FormatJson(level, message, fields, ts)
                                             : FormatText(level, message, fields, ts);
  line += '\n';
  std::lock_guard<std::mutex> lock(g_write_mutex);
  std::fwrite(line.data(), 1, line.size(), stderr);
  std::fflush(stderr);
}

}  // namespace kimi::log
