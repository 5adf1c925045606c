// The security headers of every response a browser may load from the appliance's origin: the
// admin API's JSON (/admin/) and the console's files (/console/). One list for both, so that a
// header added for one is not forgotten for the other: nothing may be framed, sniffed, sent on
// as a referrer or opened by another origin; each caller names its content policy and how
// long a copy may be kept.
//
// Thread safety: stateless.
#pragma once

#include <string_view>

namespace httplib {
struct Response;
}

namespace kimi::http {

// The admin API answers JSON only: it may load nothing.
inline constexpr std::string_view kNoContentSecurityPolicy =
    "default-src 'none'; frame-ancestors 'none'; base-uri 'none'";

void SetBrowserSecurityHeaders(httplib::Response& res, std::string_view content_security_policy,
                               std::string_view cache_control);

// Every other response (the API, the probes, /metrics, errors): a browser that loads one
// reads it as the type it is sent as, never sniffed into a page.
void SetNoSniff(httplib::Response& res);

}  // namespace kimi::http
