#include "kimi/dtype.h"

#include <gtest/gtest.h>

#include <random>

namespace kimi {
namespace {

TEST(DTypeTest, Bf16RoundTripsRepresentableValues) {
  for (float v : {0.0f, 1.0f, -2.5f, 3.140625f, 65280.0f, -1e-3f}) {
    float back = Bf16ToF32(F32ToBf16(v));
    EXPECT_NEAR(back, v, std::fabs(v) * 1.0f / 128.0f) << v;
  }
  EXPECT_EQ(Bf16ToF32(F32ToBf16(1.0f)), 1.0f);
  EXPECT_TRUE(std::isnan(Bf16ToF32(F32ToBf16(std::nanf("")))));
}

TEST(DTypeTest, Bf16RoundsToNearestEven) {
  // 1 + 2^-8 lies exactly between two bf16 values (1 and 1+2^-7): ties go to even (1).
  EXPECT_EQ(Bf16ToF32(F32ToBf16(1.0f + std::ldexp(1.0f, -8))), 1.0f);
  EXPECT_EQ(Bf16ToF32(F32ToBf16(1.0f + 3 * std::ldexp(1.0f, -8))), 1.0f + std::ldexp(1.0f, -6));
}

TEST(DTypeTest, E2M1DecodesEveryCode) {
  const float expected[16] = {0, 0.5f, 1, 1.5f, 2, 3, 4, 6, -0.0f, -0.5f, -1, -1.5f, -2, -3, -4, -6};
  for (uint8_t c = 0; c < 16; ++c) EXPECT_EQ(E2M1ToF32(c), expected[c]) << int(c);
  EXPECT_EQ(E8M0ToF32(127), 1.0f);
  EXPECT_EQ(E8M0ToF32(130), 8.0f);
  EXPECT_EQ(E8M0ToF32(125), 0.25f);
}

TEST(DTypeTest, Mxfp4BlockQuantisationIsCloseAndPacksLowNibbleFirst) {
  std::mt19937 rng(7);
  std::normal_distribution<float> dist(0.0f, 0.02f);
  float x[32];
  for (float& v : x) v = dist(rng);
  uint8_t packed[16];
  uint8_t scale = QuantizeMxfp4Block(x, packed);
  float amax = 0;
  for (float v : x) amax = std::fmax(amax, std::fabs(v));
  for (int i = 0; i < 32; ++i) {
    float back = Mxfp4Element(packed, &scale, i);
    // E2M1's coarsest step is 2 (between 4 and 6), so the error is at most one scale unit.
    EXPECT_LE(std::fabs(back - x[i]), E8M0ToF32(scale) * 1.0f + 1e-9f) << i;
  }
  float exact[32] = {1.0f, -6.0f};
  QuantizeMxfp4Block(exact, packed);
  EXPECT_EQ(packed[0] & 0x0f, 0x2);   // +1.0 in the low nibble
  EXPECT_EQ(packed[0] >> 4, 0xf);     // -6.0 in the high nibble
  (void)amax;
}

}  // namespace
}  // namespace kimi
