// Request ids: every request gets one, echoed in the X-Request-Id response header and
// written in the access log and in error messages that hide details.
//
// A client's own X-Request-Id is kept when it is sane (1 to 128 characters from
// [A-Za-z0-9._:-], so it cannot inject anything into logs or headers); otherwise, or when
// absent, the server makes one: "req_" followed by 24 hex digits from the OS's random source.
//
// Thread safety: both functions may be called from any thread.
#pragma once

#include <string>
#include <string_view>

namespace kimi::http {

inline constexpr size_t kMaxRequestIdLength = 128;

bool IsAcceptableRequestId(std::string_view id);
std::string NewRequestId();
// The incoming id when acceptable, else a new one.
std::string ChooseRequestId(std::string_view incoming);

}  // namespace kimi::http
