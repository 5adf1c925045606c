// UTC timestamps with milliseconds, "2026-11-30T01:02:03.456Z": the format of the logs and of
// the audit records, written by one function.
//
// Thread safety: pure functions (gmtime_r).
#pragma once

#include <cstdint>
#include <string>

namespace kimi {

// Milliseconds since the Unix epoch, from the system clock.
int64_t UnixMillisNow();

// Formats unix_ms (negative values too) as ISO 8601 UTC with milliseconds and a 'Z'.
std::string FormatUtcMillis(int64_t unix_ms);

}  // namespace kimi
