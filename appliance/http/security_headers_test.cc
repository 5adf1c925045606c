#include "http/security_headers.h"

#include <gtest/gtest.h>
#include <httplib.h>

namespace kimi::http {
namespace {

TEST(SecurityHeaders, EveryBrowserResponseGetsTheWholeListWithItsOwnPolicyAndCaching) {
  httplib::Response res;
  SetBrowserSecurityHeaders(res, kNoContentSecurityPolicy, "no-store");
  EXPECT_EQ(res.get_header_value("Content-Security-Policy"), kNoContentSecurityPolicy);
  EXPECT_EQ(res.get_header_value("X-Content-Type-Options"), "nosniff");
  EXPECT_EQ(res.get_header_value("X-Frame-Options"), "DENY");
  EXPECT_EQ(res.get_header_value("Referrer-Policy"), "no-referrer");
  EXPECT_EQ(res.get_header_value("Cross-Origin-Opener-Policy"), "same-origin");
  EXPECT_EQ(res.get_header_value("Cross-Origin-Resource-Policy"), "same-origin");
  EXPECT_EQ(res.get_header_value("Cache-Control"), "no-store");
  EXPECT_EQ(res.get_header_value_count("Cache-Control"), 1u);
}

TEST(SecurityHeaders, NoSniffIsSetOnce) {
  httplib::Response res;
  SetNoSniff(res);
  SetBrowserSecurityHeaders(res, kNoContentSecurityPolicy, "no-store");
  SetNoSniff(res);
  EXPECT_EQ(res.get_header_value("X-Content-Type-Options"), "nosniff");
  EXPECT_EQ(res.get_header_value_count("X-Content-Type-Options"), 1u);
}

}  // namespace
}  // namespace kimi::http
