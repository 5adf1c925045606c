#include "http/security_headers.h"

#include <httplib.h>

#include <string>

namespace kimi::http {

void SetBrowserSecurityHeaders(httplib::Response& res, std::string_view content_security_policy,
                               std::string_view cache_control) {
  res.set_header("Content-Security-Policy", std::string(content_security_policy));
  SetNoSniff(res);
  res.set_header("X-Frame-Options", "DENY");
  res.set_header("Referrer-Policy", "no-referrer");
  res.set_header("Cross-Origin-Opener-Policy", "same-origin");
  res.set_header("Cross-Origin-Resource-Policy", "same-origin");
  res.set_header("Cache-Control", std::string(cache_control));
}

void SetNoSniff(httplib::Response& res) {
  if (!res.has_header("X-Content-Type-Options")) res.set_header("X-Content-Type-Options", "nosniff");
}

}  // namespace kimi::http
