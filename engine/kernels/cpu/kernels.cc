// Entry points of kernels.h: pick the table once, then split each call over the pool.
#include "kernels/cpu/kernels.h"

#include <algorithm>
#include <cassert>
#include <cstdlib>
#include <cstring>
#include <utility>

#include "core/illegal_instruction.h"
#include "core/thread_pool.h"
#include "kimi/log.h"
#include "kernels/cpu/kernel_table.h"
#include "kernels/cpu/scratch.h"

namespace kimi::kernels {
namespace {

// Decode batches take the streaming product (each weight read once, activation rows from
// L2) while the activations fit in L2 alongside a weight strip; measured faster than the
// blocked GEMM up to 16 rows at K = 2048 and up to 8 at K = 7168 (docs/kernels.md).
bool UseGemv(int64_t M, int64_t K) { return M <= 4 || (M <= 16 && M * K <= 64 * 1024); }

// The BF16 streaming product (2 weight rows × up to 6 activation rows per tile) beats the
// blocked GEMM, which packs every weight block to fp32 for only M/6 tile rows, at every row
// count a decode step reaches: one thread, weights from memory, the GEMM measured 1.2–1.6×
// slower at 24–64 rows and K = 1024, 4096, 7168 (`kimi-bench-kernels --only cutover`), and
// 2–4× slower over k3-mini's 123 BF16 matrices at 8–32 rows (`kimi-bench-bf16-stream
// --cutover`). A step of 16 decodes with a prefill piece beside it stays on the GEMV, whose
// rows equal each row alone bit for bit (MatmulTest.BatchedRowsEqualRowsAlone, up to 64).
constexpr int64_t kMaxGemvRowsBf16 = 64;
bool UseBf16Gemv(int64_t M) { return M <= kMaxGemvRowsBf16; }

// The MXFP4 GEMV decodes each weight once per tile of 4 activation rows, while the GEMM
// dequantises whole panels to fp32 first, which on small matrices (an expert's 256 × 512)
// costs more than it saves: measured on k3-mini's expert shapes, the GEMV is ~1.5× faster
// per row at M = 24 and as fast at M = 32–48. Up to 32 rows of at most 512 values it streams.
bool UseMxfp4Gemv(int64_t M, int64_t K) { return UseGemv(M, K) || (M <= 32 && K <= 512); }

template <typename Fn>
void Split(ThreadPool* pool, int64_t n, int64_t align, Fn&& fn) {
  if (pool == nullptr || pool->num_threads() == 1) {
    if (n > 0) fn(0, n);
    return;
  }
  pool->ParallelFor(0, n, align, [&](int64_t b, int64_t e, int) { fn(b, e); });
}

// Decode products hand out their output rows in chunks that whichever thread is free takes
// (ThreadPool::ParallelForChunks): a worker that wakes late, or a thread the OS deschedules on
// a busy machine, leaves its rows to the others instead of holding up the region. A chunk is
// at most kChunkBytes of weights (few enough chunks that taking one costs nothing, each strip's
// prefetch runs within a chunk), and at least kChunksPerThread chunks per thread so that a
// late thread's share can move. Every row is computed by the same code whichever chunk it
// falls in, so results do not depend on the split.
//
// The chunks shrink towards the end (guided): each is a 1/(2 × threads) share of the rows not
// yet handed out, between kMinChunkBytes and the full size. With equal chunks the thread that
// takes the last one finishes up to a whole chunk after the other, which at 16 activation rows
// is ~60 µs of an idle thread per region; small last chunks bound that by the smallest chunk,
// while the first chunks (most of the rows) keep the full size.
constexpr int64_t kChunkBytes = 256 * 1024;
constexpr int64_t kMinChunkBytes = 32 * 1024;
constexpr int64_t kChunksPerThread = 4;
constexpr int kMaxChunks = 256;

int64_t RoundUp(int64_t v, int64_t align) { return (v + align - 1) / align * align; }

// Writes the end row of each chunk of [0, n) to ends (chunk i is [ends[i - 1], ends[i]),
// chunk 0 starts at 0) and returns their number.
int PlanChunks(int64_t n, int64_t align, int64_t row_bytes, int threads, int64_t* ends) {
  row_bytes = std::max<int64_t>(row_bytes, 1);
  const int64_t most = RoundUp(std::max<int64_t>(1, std::min(kChunkBytes / row_bytes, n / (kChunksPerThread * threads))), align);
  const int64_t least = std::min(most, RoundUp(std::max<int64_t>(1, kMinChunkBytes / row_bytes), align));
  int count = 0;
  for (int64_t done = 0; done < n;) {
    int64_t rows = std::clamp(RoundUp((n - done) / (2 * threads), align), least, most);
    if (count == kMaxChunks - 1) rows = n - done;
    done = std::min(n, done + rows);
    ends[count++] = done;
  }
  return count;
}

template <typename Fn>
void SplitChunks(ThreadPool* pool, int64_t n, int64_t align, int64_t row_bytes, Fn&& fn) {
  if (pool == nullptr || pool->num_threads() == 1) {
    if (n > 0) fn(0, n);
    return;
  }
  int64_t ends[kMaxChunks];
  const int count = PlanChunks(n, align, row_bytes, pool->num_threads(), ends);
  pool->ParallelForChunks(0, count, 1, [&](int64_t c0, int64_t c1, int) {
    fn(c0 == 0 ? 0 : ends[c0 - 1], ends[c1 - 1]);
  });
}

// Element-wise and row-wise ops below this many elements run on the calling thread: waking the
// pool and waiting for it (several µs) costs more than the op itself. Decode's norms, gates and
// activations (a few thousand elements) all fall below it; prefill's are far above.
constexpr int64_t kMinParallelElements = 16 * 1024;

// Split() for n units of `unit_elements` elements each, serial when the whole is small.
template <typename Fn>
void SplitElements(ThreadPool* pool, int64_t n, int64_t align, int64_t unit_elements, Fn&& fn) {
  Split(n * unit_elements < kMinParallelElements ? nullptr : pool, n, align, std::forward<Fn>(fn));
}

}  // namespace

const KernelTable* KernelsNamed(const char* isa) {
  if (std::strcmp(isa, "scalar") == 0) return &ReferenceKernels();
  if (std::strcmp(isa, "avx2") == 0) return Avx2Kernels();
  if (std::strcmp(isa, "avx512bf16") == 0) return Avx512Bf16Kernels();
  if (std::strcmp(isa, "amx") == 0) return AmxKernels();
  return nullptr;
}

FmaPeakResult PerProductPeak(FmaPeakResult instruction, const char* name) {
  instruction.isa = name;
  instruction.gflops /= kBf16DotProductsPerProduct;
  instruction.gflops_per_cpu_s /= kBf16DotProductsPerProduct;
  return instruction;
}

FmaPeakResult PrefillGemmPeak(const KernelTable& table, ThreadPool* pool, const FmaPeakResult& fma, double seconds) {
  static_assert(kBf16DotProductsPerProduct == 2, "the names below say 2");
  if (&table == Avx512Bf16Kernels()) {
    return PerProductPeak(MeasureBf16DotPeak(pool, seconds), "avx512bf16-vdpbf16ps, 2 per product");
  }
  if (&table == AmxKernels()) return PerProductPeak(MeasureAmxBf16Peak(pool, seconds), "amx-tdpbf16ps, 2 per product");
  return fma;
}

bool BetterPrefillGemm(double dot_peak, double fma_peak) { return dot_peak >= 0.75 * fma_peak; }

const KernelTable* ChooseDefault(const KernelTable* fma_table, double fma_peak, const KernelTable* dot, double dot_peak,
                                 const KernelTable* amx, double amx_peak) {
  const KernelTable* chosen = fma_table;
  double chosen_dot_peak = 0;
  for (const auto& [table, peak] : {std::pair{dot, dot_peak}, std::pair{amx, amx_peak}}) {
    if (table != nullptr && BetterPrefillGemm(peak, fma_peak) && peak > chosen_dot_peak) {
      chosen = table;
      chosen_dot_peak = peak;
    }
  }
  return chosen;
}

const DefaultChoice& DefaultKernelChoice() {
  static const DefaultChoice choice = [] {
    DefaultChoice c;
    const KernelTable* avx2 = Avx2Kernels();
    const KernelTable* dot = Avx512Bf16Kernels();
    const KernelTable* amx = AmxKernels();
    c.table = avx2 != nullptr ? avx2 : &ReferenceKernels();
    if (avx2 == nullptr || (dot == nullptr && amx == nullptr)) return c;
    constexpr double kSeconds = 0.01;
    const FmaPeakResult fma = MeasureFmaPeak(nullptr, kSeconds);
    c.fma_peak = fma.gflops_per_cpu_s;
    if (dot != nullptr) c.dot_peak = PrefillGemmPeak(*dot, nullptr, fma, kSeconds).gflops_per_cpu_s;
    if (amx != nullptr) {
      Status check = CheckBf16DotGemm(amx->gemm_bf16);
      double amx_peak = 0;
      if (check.ok() && !RunUnlessIllegalInstruction(
                            [&] { amx_peak = PrefillGemmPeak(*amx, nullptr, fma, kSeconds).gflops_per_cpu_s; })) {
        check = Status::Unavailable("the AMX peak loop: the CPU refused an instruction (SIGILL)");
      }
      c.amx_check = check.ok() ? "passed" : check.ToString();
      if (check.ok()) {
        c.amx_peak = amx_peak;
      } else {
        amx = nullptr;
      }
    }
    c.table = ChooseDefault(c.table, c.fma_peak, dot, c.dot_peak, amx, c.amx_peak);
    return c;
  }();
  return choice;
}

namespace {

// The table the entry points use and whether KIMI_KERNELS named it, decided once.
struct ActiveChoice {
  const KernelTable* table;
  bool named;
};

const ActiveChoice& Active() {
  static const ActiveChoice choice = []() -> ActiveChoice {
    const char* force = std::getenv("KIMI_KERNELS");
    if (force == nullptr || *force == '\0') return {&DefaultKernels(), false};
    if (const KernelTable* named = KernelsNamed(force)) return {named, true};
    log::Warn("KIMI_KERNELS names no kernel path this machine has (scalar, avx2, avx512bf16, amx)",
              {{"KIMI_KERNELS", force}, {"using", DefaultKernels().isa}});
    return {&DefaultKernels(), false};
  }();
  return choice;
}

}  // namespace

const KernelTable& ActiveKernels() { return *Active().table; }

bool ActiveKernelsNamed() { return Active().named; }

const char* ActiveIsa() { return ActiveKernels().isa; }

void MatmulBf16(const float* x, int64_t ldx, const uint16_t* w, int64_t M, int64_t N, int64_t K,
                float* y, int64_t ldy, ThreadPool* pool) {
  assert(M >= 1 && N >= 1 && K >= 1 && ldx >= K && ldy >= N);
  const Bf16Product product{x, ldx, w, N, K, y, ldy};
  MatmulBf16Batch(std::span<const Bf16Product>(&product, 1), M, pool);
}

namespace {

// The GEMV's activations of each product of a batch, rearranged once on the calling thread
// (kernel_table.h, prepare_gemv_bf16) so that the slices the threads take do not each do it
// again: at 16 rows that was a copy of 16 × K floats per slice of 32–256 KiB of weights.
// Products that share their x (a layer's q, k, v and gate projections) share one copy.
// Empty when the table has no such split or there is a single slice.
class PreparedActivations {
 public:
  static constexpr size_t kMaxProducts = 16;

  // `wanted`: the products take the GEMV and their rows are sliced over threads.
  PreparedActivations(const KernelTable& kt, std::span<const Bf16Product> products, int64_t M, bool wanted) {
    if (kt.prepare_gemv_bf16 == nullptr || !wanted || products.empty() || products.size() > kMaxProducts) return;
    int64_t floats = 0;
    bool owns_copy[kMaxProducts];
    for (size_t i = 0; i < products.size(); ++i) {
      const size_t same = SameInputAs(products, i);
      owns_copy[i] = same == i;
      offset_[i] = owns_copy[i] ? floats : offset_[same];
      if (owns_copy[i]) floats += kt.gemv_bf16_prepared_floats(M, products[i].K);
    }
    base_ = ThreadScratchArray<float>(ScratchSlot::kD, size_t(floats));
    for (size_t i = 0; i < products.size(); ++i) {
      const Bf16Product& p = products[i];
      if (owns_copy[i]) kt.prepare_gemv_bf16(p.x, p.ldx, M, p.K, base_ + offset_[i]);
    }
  }

  // Product i's prepared activations, or nullptr.
  const float* For(size_t i) const { return base_ == nullptr ? nullptr : base_ + offset_[i]; }

 private:
  // The first product with the same activations as product i (i itself when none).
  static size_t SameInputAs(std::span<const Bf16Product> products, size_t i) {
    for (size_t j = 0; j < i; ++j) {
      if (products[j].x == products[i].x && products[j].ldx == products[i].ldx && products[j].K == products[i].K) return j;
    }
    return i;
  }

  float* base_ = nullptr;
  int64_t offset_[kMaxProducts] = {};
};

}  // namespace

void MatmulBf16Batch(std::span<const Bf16Product> products, int64_t M, ThreadPool* pool) {
  const KernelTable& kt = ActiveKernels();
  int64_t total = 0, bytes = 0;
  for (const Bf16Product& p : products) {
    assert(M >= 1 && p.N >= 1 && p.K >= 1 && p.ldx >= p.K && p.ldy >= p.N);
    total += p.N;
    bytes += 2 * p.N * p.K;
  }
  const bool gemv = UseBf16Gemv(M);
  const bool sliced = pool != nullptr && pool->num_threads() > 1;
  // Rows past the GEMV's limit take the GEMM on the original activations: nothing is prepared.
  const PreparedActivations prepared(kt, products, M, gemv && sliced);
  // Rows [r0, r1) of the products laid end to end.
  auto rows = [&](int64_t r0, int64_t r1) {
    int64_t offset = 0;
    for (size_t i = 0; i < products.size(); ++i) {
      const Bf16Product& p = products[i];
      const int64_t n0 = std::max(r0, offset) - offset, n1 = std::min(r1, offset + p.N) - offset;
      offset += p.N;
      if (n0 >= n1) continue;
      if (const float* xr = prepared.For(i)) {
        kt.gemv_bf16_prepared(xr, p.x, p.ldx, p.w + n0 * p.K, M, n1 - n0, p.K, p.y + n0, p.ldy);
        continue;
      }
      (gemv ? kt.gemv_bf16 : kt.gemm_bf16)(p.x, p.ldx, p.w + n0 * p.K, M, n1 - n0, p.K, p.y + n0, p.ldy);
    }
  };
  if (gemv) {
    SplitChunks(pool, total, 16, bytes / std::max<int64_t>(total, 1), rows);
  } else {
    Split(pool, total, 16, rows);
  }
}

void MatmulMxfp4(const float* x, int64_t ldx, const uint8_t* w_packed, const uint8_t* w_scale,
                 int64_t M, int64_t N, int64_t K, float* y, int64_t ldy, ThreadPool* pool) {
  assert(M >= 1 && N >= 1 && K >= 32 && K % 32 == 0 && ldx >= K && ldy >= N);
  const KernelTable& kt = ActiveKernels();
  auto rows = [&](MatmulMxfp4Fn fn, int64_t n0, int64_t n1) {
    fn(x, ldx, w_packed + n0 * (K / 2), w_scale + n0 * (K / 32), M, n1 - n0, K, y + n0, ldy);
  };
  if (UseMxfp4Gemv(M, K)) {
    SplitChunks(pool, N, 16, K / 2 + K / 32, [&](int64_t n0, int64_t n1) { rows(kt.gemv_mxfp4, n0, n1); });
  } else {
    Split(pool, N, 16, [&](int64_t n0, int64_t n1) { rows(kt.gemm_mxfp4, n0, n1); });
  }
}

void MatmulInt8(const float* x, int64_t ldx, const uint8_t* w, const float* w_scale, int64_t M, int64_t N, int64_t K,
                float* y, int64_t ldy, ThreadPool* pool) {
  assert(M >= 1 && N >= 1 && K >= 1 && ldx >= K && ldy >= N);
  const KernelTable& kt = ActiveKernels();
  auto rows = [&](KernelTable::MatmulInt8Fn fn, int64_t n0, int64_t n1) {
    fn(x, ldx, w + n0 * K, w_scale + n0, M, n1 - n0, K, y + n0, ldy);
  };
  if (UseGemv(M, K)) {
    SplitChunks(pool, N, 16, K + 4, [&](int64_t n0, int64_t n1) { rows(kt.gemv_int8, n0, n1); });
  } else {
    Split(pool, N, 16, [&](int64_t n0, int64_t n1) { rows(kt.gemm_int8, n0, n1); });
  }
}

void RmsNorm(const float* x, const float* weight, int64_t rows, int64_t dim, float eps, float* out,
             ThreadPool* pool) {
  auto fn = ActiveKernels().rms_norm;
  SplitElements(pool, rows, 1, dim, [&](int64_t r0, int64_t r1) { fn(x + r0 * dim, weight, r1 - r0, dim, eps, out + r0 * dim); });
}

void Situ(const float* gate, const float* up, int64_t n, float beta, float beta_lin, float* out,
          ThreadPool* pool) {
  auto fn = ActiveKernels().situ;
  SplitElements(pool, n, 64, 1, [&](int64_t b, int64_t e) { fn(gate + b, up + b, e - b, beta, beta_lin, out + b); });
}

void Silu(const float* x, int64_t n, float* out, ThreadPool* pool) {
  auto fn = ActiveKernels().silu;
  SplitElements(pool, n, 64, 1, [&](int64_t b, int64_t e) { fn(x + b, e - b, out + b); });
}

void Sigmoid(const float* x, int64_t n, float* out, ThreadPool* pool) {
  auto fn = ActiveKernels().sigmoid;
  SplitElements(pool, n, 64, 1, [&](int64_t b, int64_t e) { fn(x + b, e - b, out + b); });
}

void MulSigmoid(const float* x, const float* gate, int64_t n, float* out, ThreadPool* pool) {
  auto fn = ActiveKernels().mul_sigmoid;
  SplitElements(pool, n, 64, 1, [&](int64_t b, int64_t e) { fn(x + b, gate + b, e - b, out + b); });
}

void Softmax(const float* x, int64_t rows, int64_t n, float* out, ThreadPool* pool) {
  auto fn = ActiveKernels().softmax;
  SplitElements(pool, rows, 1, n, [&](int64_t r0, int64_t r1) { fn(x + r0 * n, r1 - r0, n, out + r0 * n); });
}

void L2Normalize(const float* x, int64_t rows, int64_t dim, float eps, float scale, float* out,
                 ThreadPool* pool) {
  auto fn = ActiveKernels().l2_normalize;
  SplitElements(pool, rows, 1, dim, [&](int64_t r0, int64_t r1) { fn(x + r0 * dim, r1 - r0, dim, eps, scale, out + r0 * dim); });
}

void CausalConv1dSilu(const float* x, int64_t ldx, int64_t T, int64_t C, const float* w,
                      const float* bias, int width, float* state, float* out, int64_t ldo,
                      ThreadPool* pool) {
  assert(width >= 2 && width <= 8 && T >= 0 && ldx >= C && ldo >= C);
  auto fn = ActiveKernels().causal_conv1d_silu;
  SplitElements(pool, C, 16, T * width, [&](int64_t c0, int64_t c1) {
    fn(x + c0, ldx, T, c1 - c0, w + c0 * width, bias ? bias + c0 : nullptr, width, state + c0, C,
       out + c0, ldo);
  });
}

KdaArgs SliceKdaHeads(const KdaArgs& a, int64_t h0, int64_t h1) {
  KdaArgs s = a;
  s.q += h0 * a.dk;
  s.k += h0 * a.dk;
  s.g += h0 * a.dk;
  s.v += h0 * a.dv;
  s.beta += h0;
  s.state += h0 * a.dk * a.dv;
  s.out += h0 * a.dv;
  s.H = h1 - h0;
  return s;
}

void KdaRecurrent(const KdaArgs& a, ThreadPool* pool) {
  assert(a.dk >= 1 && a.dv >= 1 && a.ld_qk >= a.H * a.dk && a.ld_v >= a.H * a.dv && a.ld_out >= a.H * a.dv);
  auto fn = ActiveKernels().kda_recurrent;
  Split(pool, a.H, 1, [&](int64_t h0, int64_t h1) { fn(SliceKdaHeads(a, h0, h1)); });
}

void KdaChunked(const KdaArgs& a, ThreadPool* pool) {
  assert(a.dk >= 1 && a.dv >= 1 && a.ld_qk >= a.H * a.dk && a.ld_v >= a.H * a.dv && a.ld_out >= a.H * a.dv);
  auto fn = ActiveKernels().kda_chunked;
  Split(pool, a.H, 1, [&](int64_t h0, int64_t h1) { fn(SliceKdaHeads(a, h0, h1)); });
}

void KdaGate(const float* f, const float* A_log, const float* dt_bias, int64_t T, int64_t H,
             int64_t dk, float lower_bound, float* g, ThreadPool* pool) {
  auto fn = ActiveKernels().kda_gate;
  const int64_t row = H * dk;
  SplitElements(pool, T, 1, row, [&](int64_t t0, int64_t t1) { fn(f + t0 * row, A_log, dt_bias, t1 - t0, H, dk, lower_bound, g + t0 * row); });
}

void MlaAbsorbedAttention(const float* q_latent, const float* q_pe, int64_t nq, int64_t H,
                          int64_t q_pos0, const MlaPagedCache& cache, float scale, float* out_latent,
                          ThreadPool* pool) {
  assert(nq >= 1 && H >= 1 && q_pos0 >= 0 && cache.page_size >= 1 && cache.kv_rank >= 1 && cache.rope_dim >= 0);
  auto fn = ActiveKernels().mla_absorbed;
  const int64_t R = cache.kv_rank, P = cache.rope_dim;
  Split(pool, H, 1, [&](int64_t h0, int64_t h1) {
    fn(q_latent + h0 * R, H * R, q_pe + h0 * P, H * P, nq, h1 - h0, q_pos0, cache, scale,
       out_latent + h0 * R, H * R);
  });
}

void HeadsTransposedBf16(const float* x, int64_t ldx, int64_t x_head_stride, const uint16_t* w,
                         int64_t w_head_stride, int64_t M, int64_t H, int64_t n_in, int64_t n_out, float* y,
                         ThreadPool* pool) {
  assert(M >= 0 && H >= 1 && n_in >= 1 && n_out >= 1);
  auto fn = ActiveKernels().heads_transposed_bf16;
  Split(pool, H, 1, [&](int64_t h0, int64_t h1) {
    fn(x + h0 * x_head_stride, ldx, x_head_stride, w + h0 * w_head_stride, w_head_stride, M, h1 - h0, n_in, n_out,
       y + h0 * n_out, H * n_out);
  });
}

void TopKRoute(const float* logits, const float* bias, int64_t T, int64_t E, int top_k,
               bool renormalize, float scaling, int32_t* ids, float* weights, ThreadPool* pool) {
  assert(top_k >= 1 && top_k <= E);
  auto fn = ActiveKernels().topk_route;
  Split(pool, T, 1, [&](int64_t t0, int64_t t1) {
    for (int64_t t = t0; t < t1; ++t)
      fn(logits + t * E, bias, E, top_k, renormalize, scaling, ids + t * top_k, weights + t * top_k);
  });
}

}  // namespace kimi::kernels
