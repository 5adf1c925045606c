// KDA with AVX2+FMA. The recurrence is independent per column of S (per value dimension), so
// the recurrent kernel walks S in blocks of 32 columns and runs every token over one block
// while it sits in L1 (128 rows × 32 columns = 16 KiB). The chunked kernel is kda_chunk.h
// on GemmF32 (gemm_f32_avx2.cc) with vectorised primitives.
#include <algorithm>
#include <cmath>

#include "kernels/cpu/avx2/avx2.h"
#include "kernels/cpu/avx2/vec_math_avx2.h"
#include "kernels/cpu/kda_chunk.h"

namespace kimi::kernels::avx2 {
namespace {

constexpr int kColVecs = 4;  // 32 columns per block

void ExpArray(const float* x, float* out, int64_t n) {
  Map8(x, n, out, [](__m256 v) { return Exp8(v); });
}

// Where the next block of state columns lies, so that its lines are on their way while the
// current block is worked on: the next 32 columns of the same head, else the next head's first.
// nullptr after the last block.
inline const float* NextBlock(const KdaArgs& a, int64_t h, int64_t j0, int64_t width) {
  if (j0 + 2 * width <= a.dv) return a.state + h * a.dk * a.dv + j0 + width;
  if (h + 1 < a.H) return a.state + (h + 1) * a.dk * a.dv;
  return nullptr;
}

// Columns [j0, j0 + 8·NV) of one head for all tokens; decay holds exp(g) of every token of the
// head ([T, dk]). Per token two passes over the block: the first only reads S (the decayed
// state's product with k, recomputing e·S rather than storing it), the second writes
// S ← e·S + k uᵀ and reads out q·S. Both passes round exactly as a stored e·S would, so the
// result is the one of decaying in place first. While a block is worked on, the first pass
// prefetches the next block's rows (`next`), so the state streams from memory at the rate the
// rows are consumed instead of one miss per row.
template <int NV>
void RecurrentColumns(const KdaArgs& a, int64_t h, int64_t j0, const float* decay_all, const float* next) {
  const int64_t dk = a.dk, dv = a.dv;
  float* S = a.state + h * dk * dv + j0;
  for (int64_t t = 0; t < a.T; ++t) {
    const float* q = a.q + t * a.ld_qk + h * dk;
    const float* k = a.k + t * a.ld_qk + h * dk;
    const float* v = a.v + t * a.ld_v + h * dv + j0;
    const float* decay = decay_all + t * dk;
    __m256 acc[NV];
    for (int i = 0; i < NV; ++i) acc[i] = _mm256_setzero_ps();
    for (int64_t d = 0; d < dk; ++d) {
      if (t == 0 && next != nullptr) {
        _mm_prefetch(reinterpret_cast<const char*>(next + d * dv), _MM_HINT_T0);
        if (NV * 8 > 16) _mm_prefetch(reinterpret_cast<const char*>(next + d * dv + 16), _MM_HINT_T0);
      }
      const __m256 e = _mm256_set1_ps(decay[d]), kd = _mm256_set1_ps(k[d]);
      for (int i = 0; i < NV; ++i) {
        acc[i] = _mm256_fmadd_ps(kd, _mm256_mul_ps(_mm256_loadu_ps(S + d * dv + 8 * i), e), acc[i]);
      }
    }
    const __m256 beta = _mm256_set1_ps(a.beta[t * a.ld_beta + h]);
    __m256 u[NV], o[NV];
    for (int i = 0; i < NV; ++i) {
      u[i] = _mm256_mul_ps(beta, _mm256_sub_ps(_mm256_loadu_ps(v + 8 * i), acc[i]));
      o[i] = _mm256_setzero_ps();
    }
    for (int64_t d = 0; d < dk; ++d) {
      const __m256 e = _mm256_set1_ps(decay[d]), kd = _mm256_set1_ps(k[d]), qd = _mm256_set1_ps(q[d]);
      for (int i = 0; i < NV; ++i) {
        const __m256 decayed = _mm256_mul_ps(_mm256_loadu_ps(S + d * dv + 8 * i), e);
        const __m256 s = _mm256_fmadd_ps(kd, u[i], decayed);
        _mm256_storeu_ps(S + d * dv + 8 * i, s);
        o[i] = _mm256_fmadd_ps(qd, s, o[i]);
      }
    }
    float* out = a.out + t * a.ld_out + h * dv + j0;
    const __m256 scale = _mm256_set1_ps(a.scale);
    for (int i = 0; i < NV; ++i) _mm256_storeu_ps(out + 8 * i, _mm256_mul_ps(o[i], scale));
  }
}

// One column j of one head for all tokens (the dv % 8 tail).
void RecurrentColumn(const KdaArgs& a, int64_t h, int64_t j) {
  const int64_t dk = a.dk, dv = a.dv;
  float* S = a.state + h * dk * dv + j;
  for (int64_t t = 0; t < a.T; ++t) {
    const float* q = a.q + t * a.ld_qk + h * dk;
    const float* k = a.k + t * a.ld_qk + h * dk;
    const float* g = a.g + t * a.ld_qk + h * dk;
    float acc = 0.0f;
    for (int64_t d = 0; d < dk; ++d) {
      S[d * dv] *= std::exp(g[d]);
      acc += k[d] * S[d * dv];
    }
    const float u = a.beta[t * a.ld_beta + h] * (a.v[t * a.ld_v + h * dv + j] - acc);
    float o = 0.0f;
    for (int64_t d = 0; d < dk; ++d) {
      S[d * dv] += k[d] * u;
      o += q[d] * S[d * dv];
    }
    a.out[t * a.ld_out + h * dv + j] = a.scale * o;
  }
}

// Rows x[0..8) become columns.
inline void Transpose8x8(__m256 x[8]) {
  __m256 t[8];
  for (int i = 0; i < 4; ++i) {
    t[2 * i] = _mm256_unpacklo_ps(x[2 * i], x[2 * i + 1]);
    t[2 * i + 1] = _mm256_unpackhi_ps(x[2 * i], x[2 * i + 1]);
  }
  __m256 u[8];
  for (int i = 0; i < 2; ++i) {
    u[4 * i + 0] = _mm256_shuffle_ps(t[4 * i], t[4 * i + 2], _MM_SHUFFLE(1, 0, 1, 0));
    u[4 * i + 1] = _mm256_shuffle_ps(t[4 * i], t[4 * i + 2], _MM_SHUFFLE(3, 2, 3, 2));
    u[4 * i + 2] = _mm256_shuffle_ps(t[4 * i + 1], t[4 * i + 3], _MM_SHUFFLE(1, 0, 1, 0));
    u[4 * i + 3] = _mm256_shuffle_ps(t[4 * i + 1], t[4 * i + 3], _MM_SHUFFLE(3, 2, 3, 2));
  }
  for (int i = 0; i < 4; ++i) {
    x[i] = _mm256_permute2f128_ps(u[i], u[4 + i], 0x20);
    x[4 + i] = _mm256_permute2f128_ps(u[i], u[4 + i], 0x31);
  }
}

struct Avx2Ops {
  static constexpr GemmF32Fn Gemm = GemmF32;
  // As asm volatile: GCC finds a function of nothing but _mm_prefetch free of side effects and
  // deletes its calls once inlined (every prefetch of this kernel was gone from the binary).
  static void Prefetch(const void* p, int64_t bytes) {
    const char* line = static_cast<const char*>(p);
    for (int64_t off = 0; off < bytes; off += 64) asm volatile("prefetcht1 %0" : : "m"(line[off]));
  }
  // 32 columns at a time held in registers across the whole sum over rows.
  static void CombineRows(float* out, float out_scale, float alpha, const float* coeffs, int64_t coeff_stride,
                          const float* rows, int64_t row_stride, int64_t count, int64_t n) {
    const __m256 vs = _mm256_set1_ps(out_scale), va = _mm256_set1_ps(alpha);
    int64_t j = 0;
    for (; j + 32 <= n; j += 32) {
      __m256 acc[4];
      for (int u = 0; u < 4; ++u) acc[u] = _mm256_setzero_ps();
      for (int64_t i = 0; i < count; ++i) {
        const __m256 c = _mm256_broadcast_ss(coeffs + i * coeff_stride);
        const float* r = rows + i * row_stride + j;
        for (int u = 0; u < 4; ++u) acc[u] = _mm256_fmadd_ps(c, _mm256_loadu_ps(r + 8 * u), acc[u]);
      }
      for (int u = 0; u < 4; ++u) {
        __m256 base = out_scale == 0.0f ? _mm256_setzero_ps() : _mm256_mul_ps(vs, _mm256_loadu_ps(out + j + 8 * u));
        _mm256_storeu_ps(out + j + 8 * u, _mm256_fmadd_ps(va, acc[u], base));
      }
    }
    for (; j + 8 <= n; j += 8) {
      __m256 acc = _mm256_setzero_ps();
      for (int64_t i = 0; i < count; ++i)
        acc = _mm256_fmadd_ps(_mm256_broadcast_ss(coeffs + i * coeff_stride), _mm256_loadu_ps(rows + i * row_stride + j), acc);
      __m256 base = out_scale == 0.0f ? _mm256_setzero_ps() : _mm256_mul_ps(vs, _mm256_loadu_ps(out + j));
      _mm256_storeu_ps(out + j, _mm256_fmadd_ps(va, acc, base));
    }
    for (; j < n; ++j) {
      float acc = 0.0f;
      for (int64_t i = 0; i < count; ++i) acc += coeffs[i * coeff_stride] * rows[i * row_stride + j];
      out[j] = (out_scale == 0.0f ? 0.0f : out_scale * out[j]) + alpha * acc;
    }
  }
  static void Scale(float alpha, float* y, int64_t n) {
    const __m256 va = _mm256_set1_ps(alpha);
    int64_t i = 0;
    for (; i + 8 <= n; i += 8) _mm256_storeu_ps(y + i, _mm256_mul_ps(va, _mm256_loadu_ps(y + i)));
    for (; i < n; ++i) y[i] *= alpha;
  }
  static void Exp(const float* x, float* out, int64_t n) { ExpArray(x, out, n); }
  static void DecayRow(const float* k, const float* q, const float* Gt, const float* Gp, const float* Ge,
                       const float* eGp, int64_t n, float* ka, float* qa, float* kg, float* qg, float* kend) {
    // Lanes [d, d + r) of every row: loaded whole, or the ragged end through a buffer.
    auto step = [&](int64_t d, auto load, auto store) {
      const __m256 gt = load(Gt + d), kv = load(k + d);
      const __m256 f = Exp8(_mm256_sub_ps(gt, load(Gp + d)));
      const __m256 kav = _mm256_mul_ps(kv, f), qav = _mm256_mul_ps(load(q + d), f), e = load(eGp + d);
      store(ka + d, kav);
      store(qa + d, qav);
      store(kg + d, _mm256_mul_ps(kav, e));
      store(qg + d, _mm256_mul_ps(qav, e));
      store(kend + d, _mm256_mul_ps(kv, Exp8(_mm256_sub_ps(load(Ge + d), gt))));
    };
    int64_t d = 0;
    for (; d + 8 <= n; d += 8) {
      step(d, [](const float* p) { return _mm256_loadu_ps(p); }, [](float* p, __m256 v) { _mm256_storeu_ps(p, v); });
    }
    if (d < n) {
      const int64_t r = n - d;
      step(d, [r](const float* p) { return LoadPartial(p, r, 0.0f); }, [r](float* p, __m256 v) { StorePartial(p, r, v); });
    }
  }
  // 8 × 8 blocks transposed in registers; the ragged edges element by element.
  static void Transpose(const float* src, int64_t rows, int64_t cols, int64_t ld_src, float* dst, int64_t ld_dst) {
    const int64_t rows8 = rows - rows % 8, cols8 = cols - cols % 8;
    for (int64_t r = 0; r < rows8; r += 8) {
      for (int64_t c = 0; c < cols8; c += 8) {
        __m256 x[8];
        for (int i = 0; i < 8; ++i) x[i] = _mm256_loadu_ps(src + (r + i) * ld_src + c);
        Transpose8x8(x);
        for (int i = 0; i < 8; ++i) _mm256_storeu_ps(dst + (c + i) * ld_dst + r, x[i]);
      }
    }
    for (int64_t r = 0; r < rows; ++r) {
      for (int64_t c = r < rows8 ? cols8 : 0; c < cols; ++c) dst[c * ld_dst + r] = src[r * ld_src + c];
    }
  }
  static void DecayedDots(const float* qt, const float* kt, const float* ki, const float* Gt,
                          const float* Gi, int64_t n, float* qk, float* kk) {
    __m256 aq = _mm256_setzero_ps(), ak = _mm256_setzero_ps();
    int64_t d = 0;
    for (; d + 8 <= n; d += 8) {
      __m256 decayed = _mm256_mul_ps(_mm256_loadu_ps(ki + d),
                                     Exp8(_mm256_sub_ps(_mm256_loadu_ps(Gt + d), _mm256_loadu_ps(Gi + d))));
      aq = _mm256_fmadd_ps(_mm256_loadu_ps(qt + d), decayed, aq);
      ak = _mm256_fmadd_ps(_mm256_loadu_ps(kt + d), decayed, ak);
    }
    if (d < n) {
      const int64_t r = n - d;
      __m256 decayed = _mm256_mul_ps(LoadPartial(ki + d, r, 0.0f),
                                     Exp8(_mm256_sub_ps(LoadPartial(Gt + d, r, 0.0f), LoadPartial(Gi + d, r, 0.0f))));
      aq = _mm256_fmadd_ps(LoadPartial(qt + d, r, 0.0f), decayed, aq);
      ak = _mm256_fmadd_ps(LoadPartial(kt + d, r, 0.0f), decayed, ak);
    }
    *qk = HorizontalSum(aq);
    *kk = HorizontalSum(ak);
  }
};

}  // namespace

void KdaRecurrent(const KdaArgs& a) {
  // exp(g) once per head and token, shared by every column block of the head.
  float* decay = ThreadScratchArray<float>(ScratchSlot::kA, a.T * a.dk);
  for (int64_t h = 0; h < a.H; ++h) {
    for (int64_t t = 0; t < a.T; ++t) ExpArray(a.g + t * a.ld_qk + h * a.dk, decay + t * a.dk, a.dk);
    int64_t j = 0;
    for (; j + 8 * kColVecs <= a.dv; j += 8 * kColVecs) {
      RecurrentColumns<kColVecs>(a, h, j, decay, NextBlock(a, h, j, 8 * kColVecs));
    }
    for (; j + 8 <= a.dv; j += 8) RecurrentColumns<1>(a, h, j, decay, nullptr);
    for (; j < a.dv; ++j) RecurrentColumn(a, h, j);
  }
}

void KdaChunked(const KdaArgs& a) { KdaChunkedHeads<Avx2Ops>(a); }

}  // namespace kimi::kernels::avx2
