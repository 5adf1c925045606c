// Reference dense products: one dot product per output, accumulated in double so the tests
// compare the optimised kernels against a result with negligible rounding of its own.
#include "kernels/cpu/ref/reference.h"
#include "kimi/dtype.h"

namespace kimi::kernels::ref {

void MatmulBf16(const float* x, int64_t ldx, const uint16_t* w, int64_t M, int64_t N, int64_t K,
                float* y, int64_t ldy) {
  for (int64_t m = 0; m < M; ++m) {
    for (int64_t n = 0; n < N; ++n) {
      double acc = 0.0;
      for (int64_t k = 0; k < K; ++k) acc += double(x[m * ldx + k]) * Bf16ToF32(w[n * K + k]);
      y[m * ldy + n] = static_cast<float>(acc);
    }
  }
}

// What the prefill GEMM on BF16 dot-product instructions (vdpbf16ps, AMX tdpbf16ps) computes:
// each activation split into two BF16 values, hi = bf16(x) and lo = bf16(x − hi) (round to
// nearest even), each product of two BF16 values exact in fp32, and the products summed in fp32
// in k order, lo·w before hi·w. The instructions also treat subnormal inputs as zero, which the
// engine's threads do anyway (core/float_mode.h).
void MatmulBf16Dot(const float* x, int64_t ldx, const uint16_t* w, int64_t M, int64_t N, int64_t K, float* y,
                   int64_t ldy) {
  for (int64_t m = 0; m < M; ++m) {
    for (int64_t n = 0; n < N; ++n) {
      float acc = 0.0f;
      for (int64_t k = 0; k < K; ++k) {
        const float value = x[m * ldx + k], hi = Bf16ToF32(F32ToBf16(value));
        const float lo = Bf16ToF32(F32ToBf16(value - hi)), weight = Bf16ToF32(w[n * K + k]);
        acc += lo * weight;
        acc += hi * weight;
      }
      y[m * ldy + n] = acc;
    }
  }
}

void MatmulMxfp4(const float* x, int64_t ldx, const uint8_t* w_packed, const uint8_t* w_scale,
                 int64_t M, int64_t N, int64_t K, float* y, int64_t ldy) {
  for (int64_t m = 0; m < M; ++m) {
    for (int64_t n = 0; n < N; ++n) {
      const uint8_t* packed_row = w_packed + n * (K / 2);
      const uint8_t* scale_row = w_scale + n * (K / kMxfp4BlockSize);
      double acc = 0.0;
      for (int64_t k = 0; k < K; ++k) acc += double(x[m * ldx + k]) * Mxfp4Element(packed_row, scale_row, k);
      y[m * ldy + n] = static_cast<float>(acc);
    }
  }
}

void GemmF32(const float* a, int64_t a_row, int64_t a_col, const float* b, int64_t ldb, int64_t M, int64_t N,
             int64_t K, float alpha, float beta, const float* c_row_scale, float* c, int64_t ldc) {
  for (int64_t m = 0; m < M; ++m) {
    const float beta_m = c_row_scale != nullptr ? beta * c_row_scale[m] : beta;
    for (int64_t n = 0; n < N; ++n) {
      double acc = 0.0;
      for (int64_t k = 0; k < K; ++k) acc += double(a[m * a_row + k * a_col]) * b[k * ldb + n];
      float* cmn = c + m * ldc + n;
      *cmn = (beta_m == 0.0f ? 0.0f : beta_m * *cmn) + alpha * static_cast<float>(acc);
    }
  }
}

}  // namespace kimi::kernels::ref
