#include "tools/stdio_text.h"

#include <array>
#include <cerrno>
#include <charconv>
#include <cstdio>
#include <cstring>

#include "tools/command.h"
#include "tools/flags.h"

namespace kimi::tools {

Result<std::string> ReadAllStdin() {
  std::string text;
  std::array<char, 1 << 16> buf;
  size_t n;
  while ((n = std::fread(buf.data(), 1, buf.size(), stdin)) > 0) text.append(buf.data(), n);
  if (std::ferror(stdin)) return Status::IOError(std::string("reading stdin: ") + std::strerror(errno));
  return text;
}

Result<std::vector<int32_t>> ParseIdList(std::string_view text) {
  auto is_space = [](char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; };
  std::vector<int32_t> ids;
  size_t i = 0;
  bool expect_id = false;  // after a comma an id must follow
  while (true) {
    while (i < text.size() && is_space(text[i])) ++i;
    if (i == text.size()) {
      if (expect_id) return Status::InvalidArgument("token ids: the list ends with a comma");
      return ids;
    }
    if (text[i] == ',') {
      if (ids.empty() || expect_id) {
        return Status::InvalidArgument("token ids: empty entry at byte " + std::to_string(i));
      }
      expect_id = true;
      ++i;
      continue;
    }
    size_t end = i;
    while (end < text.size() && text[end] != ',' && !is_space(text[end])) ++end;
    const std::string_view entry = text.substr(i, end - i);
    int32_t id = 0;
    auto [ptr, ec] = std::from_chars(entry.data(), entry.data() + entry.size(), id);
    if (ec != std::errc() || ptr != entry.data() + entry.size() || id < 0) {
      return Status::InvalidArgument("token ids: '" + std::string(entry.substr(0, 40)) +
                                     "' is not a token id (a non-negative 32-bit decimal integer)");
    }
    ids.push_back(id);
    expect_id = false;
    i = end;
  }
}

std::string FormatIdList(std::span<const int32_t> ids) {
  std::string out;
  for (size_t i = 0; i < ids.size(); ++i) {
    if (i > 0) out += ',';
    out += std::to_string(ids[i]);
  }
  return out;
}

int FailUsage(const char* command, const Status& status) { return ReportError(command, status, kExitUsage); }

int FailInput(const char* command, const Status& status) { return ReportError(command, status, kExitFailure); }

}  // namespace kimi::tools
