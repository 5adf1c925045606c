// Deterministic synthetic weights generated where they live: the values a device fill kernel
// (synth_weights.cu) writes, as inline functions the host can evaluate too, so the comparison
// test checks the device's bytes against these exactly. Used for benchmark models too large to
// write to disk (gpu_model.h GpuModelOptions::fill_seed, docs/gpu.md "k3-h200-40g").
//
// Element i of a matrix with seed s:
//   BF16: uniform on [−√3·σ, √3·σ) with σ = 1/√fan_in (the synthetic writer's N(0, 1/fan_in)
//         has the same spread), truncated to BF16;
//   MXFP4: each packed byte two uniform E2M1 codes; every block scale the one E8M0 exponent
//         that brings the codes' RMS (√(68.5/8) ≈ 2.93) to about σ.
// Owns nothing. Thread safety: pure functions.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>

#if defined(__CUDACC__) || defined(__HIPCC__)
#define KIMI_HOST_DEVICE __host__ __device__
#else
#define KIMI_HOST_DEVICE
#endif

namespace kimi::gpu {

// splitmix64 of (seed, i): independent-looking 64-bit words for any index.
KIMI_HOST_DEVICE inline uint64_t SynthHash(uint64_t seed, uint64_t i) {
  uint64_t z = seed + (i + 1) * 0x9E3779B97F4A7C15ull;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

// Half the width of the uniform BF16 draw: √3/√fan_in.
inline float SynthBf16HalfWidth(int64_t fan_in) {
  return std::sqrt(3.0f / static_cast<float>(fan_in));
}

KIMI_HOST_DEVICE inline uint16_t SynthBf16(uint64_t seed, uint64_t i, float half_width) {
  const uint32_t r = static_cast<uint32_t>(SynthHash(seed, i) >> 40);  // 24 random bits
  const float v = (static_cast<float>(r) * (2.0f / 16777216.0f) - 1.0f) * half_width;
  uint32_t bits;
  std::memcpy(&bits, &v, sizeof bits);
  return static_cast<uint16_t>(bits >> 16);
}

KIMI_HOST_DEVICE inline uint8_t SynthPackedByte(uint64_t seed, uint64_t i) {
  return static_cast<uint8_t>(SynthHash(seed, i) >> 32);
}

// The E8M0 scale byte for fan_in: 127 + round(log2(σ / 2.93)).
inline uint8_t SynthMxfp4Scale(int64_t fan_in) {
  const double sigma = 1.0 / std::sqrt(static_cast<double>(fan_in));
  return static_cast<uint8_t>(127 + std::lround(std::log2(sigma / std::sqrt(68.5 / 8.0))));
}

}  // namespace kimi::gpu
