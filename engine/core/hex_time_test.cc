#include <gtest/gtest.h>

#include "kimi/hex.h"
#include "kimi/utc_time.h"

namespace kimi {
namespace {

TEST(HexTest, EncodesLowercaseAndDecodesBothCases) {
  EXPECT_EQ(HexEncode(std::string("\x00\x9f\xff", 3)), "009fff");
  auto back = HexDecode("009FfF");
  ASSERT_TRUE(back.ok());
  EXPECT_EQ(*back, std::string("\x00\x9f\xff", 3));
}

TEST(HexTest, RejectsOddLengthAndNonHex) {
  EXPECT_EQ(HexDecode("abc").status().code(), Status::Code::kInvalidArgument);
  EXPECT_EQ(HexDecode("zz").status().code(), Status::Code::kInvalidArgument);
}

TEST(UtcTimeTest, FormatsMillisecondsIncludingBeforeTheEpoch) {
  EXPECT_EQ(FormatUtcMillis(0), "1970-01-01T00:00:00.000Z");
  EXPECT_EQ(FormatUtcMillis(1790000000123), "2026-09-21T14:13:20.123Z");
  EXPECT_EQ(FormatUtcMillis(-1), "1969-12-31T23:59:59.999Z");
  EXPECT_GT(UnixMillisNow(), 1790000000000);
}

}  // namespace
}  // namespace kimi
