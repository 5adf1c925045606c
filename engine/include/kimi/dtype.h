// Element types of the weights: BF16 and MXFP4 (OCP microscaling FP4, E2M1 values in blocks of
// 32 sharing one E8M0 scale), as the compressed-tensors `mxfp4-pack-quantized` format stores
// them: `weight_packed` uint8 [out, in/2] with the even element in the low nibble, and
// `weight_scale` uint8 [out, in/32] holding the biased exponent e, value = E2M1 · 2^(e−127).
//
// Scalar conversions only; the kernels have their own vectorised decoders, tested against these.
// Thread safety: pure functions.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>

namespace kimi {

enum class DType { kF32, kBF16, kF16, kU8, kI8, kI32, kI64, kF64, kBool };

inline float Bf16ToF32(uint16_t h) {
  uint32_t bits = static_cast<uint32_t>(h) << 16;
  float f;
  std::memcpy(&f, &bits, sizeof f);
  return f;
}

// Round to nearest even; NaN stays NaN.
inline uint16_t F32ToBf16(float f) {
  uint32_t bits;
  std::memcpy(&bits, &f, sizeof bits);
  if ((bits & 0x7fffffffu) > 0x7f800000u) return static_cast<uint16_t>((bits >> 16) | 0x40);
  uint32_t rounding = 0x7fffu + ((bits >> 16) & 1u);
  return static_cast<uint16_t>((bits + rounding) >> 16);
}

inline constexpr int kMxfp4BlockSize = 32;

// E2M1 magnitudes for codes 0..7; bit 3 of the nibble is the sign.
inline constexpr float kE2M1Magnitude[8] = {0.0f, 0.5f, 1.0f, 1.5f, 2.0f, 3.0f, 4.0f, 6.0f};

inline float E2M1ToF32(uint8_t nibble) {
  float m = kE2M1Magnitude[nibble & 7u];
  return (nibble & 8u) ? -m : m;
}

// 2^(e−127); e = 255 is NaN in E8M0.
inline float E8M0ToF32(uint8_t e) {
  if (e == 255) return std::nanf("");
  return std::ldexp(1.0f, static_cast<int>(e) - 127);
}

// Element i of a packed row (low nibble = even element).
inline float Mxfp4Element(const uint8_t* packed_row, const uint8_t* scale_row, int64_t i) {
  uint8_t byte = packed_row[i / 2];
  uint8_t nibble = (i % 2 == 0) ? (byte & 0x0f) : (byte >> 4);
  return E2M1ToF32(nibble) * E8M0ToF32(scale_row[i / kMxfp4BlockSize]);
}

// Nearest E2M1 code for x (already divided by the block scale), ties to the even code.
inline uint8_t F32ToE2M1(float x) {
  uint8_t sign = std::signbit(x) ? 8u : 0u;
  float a = std::fabs(x);
  if (!(a == a)) return 0;  // NaN → +0
  uint8_t best = 0;
  float best_err = INFINITY;
  for (uint8_t c = 0; c < 8; ++c) {
    float err = std::fabs(a - kE2M1Magnitude[c]);
    if (err < best_err || (err == best_err && (c % 2 == 0))) {
      best = c;
      best_err = err;
    }
  }
  return static_cast<uint8_t>(best | sign);
}

// Quantises one block of 32 floats: the shared exponent makes the block's largest magnitude
// land at or below 6 (E2M1's maximum). Writes 16 packed bytes and returns the E8M0 scale.
inline uint8_t QuantizeMxfp4Block(const float* x, uint8_t* packed16) {
  float amax = 0.0f;
  for (int i = 0; i < kMxfp4BlockSize; ++i) amax = std::fmax(amax, std::fabs(x[i]));
  int e = 0;
  if (amax > 0.0f) {
    e = static_cast<int>(std::ceil(std::log2(amax / 6.0f)));
    if (e < -127) e = -127;
    if (e > 127) e = 127;
  }
  float inv = std::ldexp(1.0f, -e);
  for (int i = 0; i < kMxfp4BlockSize; i += 2) {
    uint8_t lo = F32ToE2M1(x[i] * inv);
    uint8_t hi = F32ToE2M1(x[i + 1] * inv);
    packed16[i / 2] = static_cast<uint8_t>(lo | (hi << 4));
  }
  return static_cast<uint8_t>(e + 127);
}

// Quantises one row of `cols` floats (a multiple of 32) block by block: cols / 2 packed bytes
// and cols / 32 E8M0 scales.
inline void QuantizeMxfp4Row(const float* row, int64_t cols, uint8_t* packed, uint8_t* scales) {
  for (int64_t b = 0; b < cols / kMxfp4BlockSize; ++b) {
    scales[b] = QuantizeMxfp4Block(row + b * kMxfp4BlockSize, packed + b * (kMxfp4BlockSize / 2));
  }
}

}  // namespace kimi
