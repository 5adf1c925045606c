// The backend comparison: every GPU op on seeded random inputs against the CPU scalar reference
// (kernels/cpu/ref), one named case per op and shape, each with its own tolerance — the idea
// of llama.cpp's test-backend-ops. A new GPU op comes with its cases here.
//
// Tolerances (|gpu − ref| <= atol + rtol·|ref| everywhere; a layout or decoding bug gives errors
// of order 1):
//   matmul        atol 1e-5·√K (BF16) or 4e-5·√K (MXFP4, |w| up to 24), rtol 1e-5: fp32 sums in
//                 another order against the reference's double sums
//   norms/softmax atol 1e-6, rtol 1e-5: fp32 block sums vs double
//   element-wise  atol 1e-6, rtol 1e-5: device expf/tanhf are within 2 ulp of the host's
//   conv, KDA     atol 1e-5, rtol 1e-4: fp32 recurrences, the same order of operations;
//                 the chunked forms atol 1e-4 (the UT transform as an inverse, not a substitution)
//   synthetic fill exact (the host evaluates the same functions)
//   MLA           atol 1e-5, rtol 1e-4: fp32 online softmax vs double (decode and prefill kernels)
//   routing       ids exact (unless two biased scores are within 1e-6: then either order),
//                 weights rtol 1e-5;  argmax: exact
// Every case skips when no device is visible.
#include <algorithm>
#include <cmath>
#include <functional>
#include <numeric>
#include <random>
#include <string>
#include <vector>

#include "gpu/gpu_ops.h"
#include "gpu/gpu_test_util.h"
#include "gpu/synth_fill.h"
#include "gpu/synth_weights.h"
#include "kernels/cpu/kernel_test_util.h"
#include "kernels/cpu/ref/reference.h"
#include "kimi/dtype.h"

namespace kimi::gpu {
namespace {

using kernels::testing::AllClose;
using kernels::testing::RandomBf16;
using kernels::testing::RandomBytes;
using kernels::testing::RandomFloats;
using testing::ToDevice;
using testing::ToHost;

struct OpCase {
  std::string name;
  std::function<void(const GpuStream&)> run;  // records failures with EXPECT_*
};

void Sync(const GpuStream& s) {
  Status st = s.Synchronize();
  ASSERT_TRUE(st.ok()) << st.ToString();
}

#define EXPECT_OK(expr)                      \
  do {                                       \
    ::kimi::Status _st = (expr);             \
    EXPECT_TRUE(_st.ok()) << _st.ToString(); \
  } while (0)

// ---- matmul ----

void Bf16MatmulCase(const GpuStream& s, int64_t M, int64_t N, int64_t K, int64_t pad) {
  const int64_t ldx = K + pad, ldy = N + 1;
  auto x = RandomFloats(M * ldx, 11 + M);
  auto w = RandomBf16(N * K, 12 + N);
  std::vector<float> want(M * ldy, 0.0f);
  kernels::ref::MatmulBf16(x.data(), ldx, w.data(), M, N, K, want.data(), ldy);
  auto dx = ToDevice(x);
  auto dw = ToDevice(w);
  auto dy = ToDevice(std::vector<float>(M * ldy, 0.0f));
  EXPECT_OK(MatmulBf16(dx.as<float>(), ldx, dw.as<uint16_t>(), M, N, K, dy.as<float>(), ldy, s));
  Sync(s);
  EXPECT_TRUE(AllClose(ToHost<float>(dy, want.size()), want, 1e-5f * std::sqrt(float(K)), 1e-5f));
}

void Mxfp4MatmulCase(const GpuStream& s, int64_t M, int64_t N, int64_t K, int64_t pad) {
  const int64_t ldx = K + pad, ldy = N + 3;
  auto x = RandomFloats(M * ldx, 21 + M);
  auto packed = RandomBytes(N * K / 2, 22 + N);
  auto scales = RandomBytes(N * K / 32, 23 + N, 124, 129);
  std::vector<float> want(M * ldy, 0.0f);
  kernels::ref::MatmulMxfp4(x.data(), ldx, packed.data(), scales.data(), M, N, K, want.data(), ldy);
  auto dx = ToDevice(x);
  auto dp = ToDevice(packed);
  auto ds = ToDevice(scales);
  auto dy = ToDevice(std::vector<float>(M * ldy, 0.0f));
  EXPECT_OK(
      MatmulMxfp4(dx.as<float>(), ldx, dp.as<uint8_t>(), ds.as<uint8_t>(), M, N, K, dy.as<float>(), ldy, s));
  Sync(s);
  EXPECT_TRUE(AllClose(ToHost<float>(dy, want.size()), want, 4e-5f * std::sqrt(float(K)), 1e-5f));
}

// Groups of packed rows, each multiplied by its own expert's MXFP4 matrix in one launch; the
// reference runs each group alone. Counts cover one row, a full GEMV chunk, several chunks.
void GroupedMxfp4Case(const GpuStream& s, int64_t N, int64_t K, int64_t pad) {
  const std::vector<int32_t> expert = {4, 0, 2, 5}, count = {1, 8, 11, 20};
  constexpr int64_t kExperts = 6;
  std::vector<int32_t> first;
  int64_t rows = 0;
  for (int32_t c : count) first.push_back(int32_t(rows)), rows += c;
  const int64_t ldx = K + pad, ldy = N + 2;
  auto x = RandomFloats(rows * ldx, 41);
  std::vector<DeviceBuffer> packed, scales;
  std::vector<std::vector<uint8_t>> host_packed, host_scales;
  std::vector<const uint8_t*> packed_ptrs, scale_ptrs;
  for (int64_t e = 0; e < kExperts; ++e) {
    host_packed.push_back(RandomBytes(N * K / 2, 42 + e));
    host_scales.push_back(RandomBytes(N * K / 32, 52 + e, 124, 129));
    packed.push_back(ToDevice(host_packed.back()));
    scales.push_back(ToDevice(host_scales.back()));
    packed_ptrs.push_back(packed.back().as<uint8_t>());
    scale_ptrs.push_back(scales.back().as<uint8_t>());
  }
  std::vector<float> want(rows * ldy, 0.0f);
  for (size_t g = 0; g < expert.size(); ++g) {
    kernels::ref::MatmulMxfp4(x.data() + first[g] * ldx, ldx, host_packed[expert[g]].data(),
                              host_scales[expert[g]].data(), count[g], N, K, want.data() + first[g] * ldy, ldy);
  }
  auto dx = ToDevice(x);
  auto dpp = ToDevice(packed_ptrs);
  auto dsp = ToDevice(scale_ptrs);
  auto de = ToDevice(expert);
  auto df = ToDevice(first);
  auto dc = ToDevice(count);
  auto dy = ToDevice(std::vector<float>(rows * ldy, 0.0f));
  EXPECT_OK(GroupedMatmulMxfp4(dx.as<float>(), ldx, dpp.as<const uint8_t*>(), dsp.as<const uint8_t*>(),
                               de.as<int32_t>(), df.as<int32_t>(), dc.as<int32_t>(), int64_t(expert.size()), N, K,
                               dy.as<float>(), ldy, s));
  Sync(s);
  EXPECT_TRUE(AllClose(ToHost<float>(dy, want.size()), want, 4e-5f * std::sqrt(float(K)), 1e-5f));
}

// ---- element-wise and row-wise ----

using UnaryGpu = Status (*)(const float*, int64_t, float*, const GpuStream&);
using UnaryRef = void (*)(const float*, int64_t, float*);

void UnaryCase(const GpuStream& s, UnaryGpu gpu, UnaryRef ref, int64_t n, float range) {
  auto x = RandomFloats(n, 31, -range, range);
  std::vector<float> want(n);
  ref(x.data(), n, want.data());
  auto dx = ToDevice(x);
  EXPECT_OK(gpu(dx.as<float>(), n, dx.as<float>(), s));  // in place, as allowed
  Sync(s);
  EXPECT_TRUE(AllClose(ToHost<float>(dx, n), want, 1e-6f, 1e-5f));
}

// Two inputs in their own ranges, one output: SiTU (gate, up) and MulSigmoid (x, gate).
void BinaryCase(const GpuStream& s, int64_t n, float range_a, float range_b,
                const std::function<void(const float*, const float*, float*)>& ref,
                const std::function<Status(const float*, const float*, float*)>& gpu) {
  auto a = RandomFloats(n, 32, -range_a, range_a);
  auto b = RandomFloats(n, 33, -range_b, range_b);
  std::vector<float> want(n);
  ref(a.data(), b.data(), want.data());
  auto da = ToDevice(a), db = ToDevice(b), dout = ToDevice(std::vector<float>(n));
  EXPECT_OK(gpu(da.as<float>(), db.as<float>(), dout.as<float>()));
  Sync(s);
  EXPECT_TRUE(AllClose(ToHost<float>(dout, n), want, 1e-6f, 1e-5f));
}

void RmsNormCase(const GpuStream& s, int64_t rows, int64_t dim) {
  auto x = RandomFloats(rows * dim, 41, -3.0f, 3.0f);
  auto w = RandomFloats(dim, 42, 0.5f, 1.5f);
  std::vector<float> want(rows * dim);
  kernels::ref::RmsNorm(x.data(), w.data(), rows, dim, 1e-5f, want.data());
  auto dx = ToDevice(x), dw = ToDevice(w);
  EXPECT_OK(RmsNorm(dx.as<float>(), dw.as<float>(), rows, dim, 1e-5f, dx.as<float>(), s));
  Sync(s);
  EXPECT_TRUE(AllClose(ToHost<float>(dx, want.size()), want, 1e-6f, 1e-5f));
}

void L2NormalizeCase(const GpuStream& s, int64_t rows, int64_t dim) {
  auto x = RandomFloats(rows * dim, 43, -2.0f, 2.0f);
  std::vector<float> want(rows * dim);
  const float scale = 1.0f / std::sqrt(float(dim));
  kernels::ref::L2Normalize(x.data(), rows, dim, 1e-6f, scale, want.data());
  auto dx = ToDevice(x), dout = ToDevice(std::vector<float>(rows * dim));
  EXPECT_OK(L2Normalize(dx.as<float>(), rows, dim, 1e-6f, scale, dout.as<float>(), s));
  Sync(s);
  EXPECT_TRUE(AllClose(ToHost<float>(dout, want.size()), want, 1e-6f, 1e-5f));
}

void SoftmaxCase(const GpuStream& s, int64_t rows, int64_t n) {
  auto x = RandomFloats(rows * n, 44, -30.0f, 30.0f);
  std::vector<float> want(rows * n);
  kernels::ref::Softmax(x.data(), rows, n, want.data());
  auto dx = ToDevice(x);
  EXPECT_OK(Softmax(dx.as<float>(), rows, n, dx.as<float>(), s));
  Sync(s);
  EXPECT_TRUE(AllClose(ToHost<float>(dx, want.size()), want, 1e-6f, 1e-5f));
}

void KdaGateCase(const GpuStream& s, int64_t T, int64_t H, int64_t dk) {
  auto f = RandomFloats(T * H * dk, 45, -4.0f, 4.0f);
  auto a_log = RandomFloats(H, 46, -1.0f, 1.5f);
  auto dt_bias = RandomFloats(H * dk, 47, -1.0f, 1.0f);
  std::vector<float> want(f.size());
  kernels::ref::KdaGate(f.data(), a_log.data(), dt_bias.data(), T, H, dk, -5.0f, want.data());
  auto df = ToDevice(f), da = ToDevice(a_log), db = ToDevice(dt_bias),
       dg = ToDevice(std::vector<float>(f.size()));
  EXPECT_OK(KdaGate(df.as<float>(), da.as<float>(), db.as<float>(), T, H, dk, -5.0f, dg.as<float>(), s));
  Sync(s);
  EXPECT_TRUE(AllClose(ToHost<float>(dg, want.size()), want, 1e-6f, 1e-5f));
}

// ---- conv ----

void ConvCase(const GpuStream& s, int64_t T, int64_t C, int width, bool with_bias) {
  const int64_t ldx = C + 5, ldo = C + 2, hist = width - 1;
  auto x = RandomFloats(T * ldx, 51 + T);
  auto w = RandomFloats(C * width, 52, -0.7f, 0.7f);
  auto bias = RandomFloats(C, 53, -0.2f, 0.2f);
  auto state = RandomFloats(hist * C, 54);
  std::vector<float> want(T * ldo, 0.0f), want_state = state;
  kernels::ref::CausalConv1dSilu(x.data(), ldx, T, C, w.data(), with_bias ? bias.data() : nullptr, width,
                                 want_state.data(), C, want.data(), ldo);
  auto dx = ToDevice(x), dw = ToDevice(w), db = ToDevice(bias), dstate = ToDevice(state);
  auto dout = ToDevice(std::vector<float>(T * ldo, 0.0f));
  EXPECT_OK(CausalConv1dSilu(dx.as<float>(), ldx, T, C, dw.as<float>(), with_bias ? db.as<float>() : nullptr,
                             width, dstate.as<float>(), dout.as<float>(), ldo, s));
  Sync(s);
  EXPECT_TRUE(AllClose(ToHost<float>(dout, want.size()), want, 1e-5f, 1e-4f)) << "outputs";
  EXPECT_TRUE(AllClose(ToHost<float>(dstate, want_state.size()), want_state, 0.0f, 0.0f)) << "state";
}

// ---- KDA ----

// Host tensors of one KDA call with K3's input conditioning: q, k L2-normalised per head,
// g a log gate in [−5, 0), β in (0, 1).
struct KdaInputs {
  int64_t T, H, dk, dv;
  std::vector<float> q, k, v, g, beta, state;
  KdaInputs(int64_t T_, int64_t H_, int64_t dk_, int64_t dv_, uint32_t seed)
      : T(T_), H(H_), dk(dk_), dv(dv_) {
    q = RandomFloats(T * H * dk, seed);
    k = RandomFloats(T * H * dk, seed + 1);
    kernels::ref::L2Normalize(q.data(), T * H, dk, 1e-6f, 1.0f, q.data());
    kernels::ref::L2Normalize(k.data(), T * H, dk, 1e-6f, 1.0f, k.data());
    v = RandomFloats(T * H * dv, seed + 2);
    g = RandomFloats(T * H * dk, seed + 3, -5.0f, -0.01f);
    beta = RandomFloats(T * H, seed + 4, 0.05f, 0.95f);
    state = RandomFloats(H * dk * dv, seed + 5, -0.5f, 0.5f);
  }
  kernels::KdaArgs Args(const float* q_, const float* k_, const float* v_, const float* g_, const float* b_,
                        float* state_, float* out) const {
    return kernels::KdaArgs{
        q_,     k_,  v_,    g_, b_, T, H, dk, dv, H * dk, H * dv, H, 1.0f / std::sqrt(float(dk)),
        state_, out, H * dv};
  }
};

void KdaCase(const GpuStream& s, int64_t T, int64_t H, int64_t dk, int64_t dv, bool against_chunked) {
  KdaInputs in(T, H, dk, dv, 61 + uint32_t(T));
  std::vector<float> want(T * H * dv), want_state = in.state;
  auto ref_args = in.Args(in.q.data(), in.k.data(), in.v.data(), in.g.data(), in.beta.data(),
                          want_state.data(), want.data());
  if (against_chunked) {
    kernels::ref::KdaChunked(ref_args);
  } else {
    kernels::ref::KdaRecurrent(ref_args);
  }
  auto dq = ToDevice(in.q), dk_ = ToDevice(in.k), dv_ = ToDevice(in.v), dg = ToDevice(in.g),
       db = ToDevice(in.beta);
  auto dstate = ToDevice(in.state), dout = ToDevice(std::vector<float>(T * H * dv));
  EXPECT_OK(KdaRecurrent(in.Args(dq.as<float>(), dk_.as<float>(), dv_.as<float>(), dg.as<float>(),
                                 db.as<float>(), dstate.as<float>(), dout.as<float>()),
                         s));
  Sync(s);
  const float tol = against_chunked ? 1e-4f : 1e-5f;
  EXPECT_TRUE(AllClose(ToHost<float>(dout, want.size()), want, tol, 1e-4f)) << "outputs";
  EXPECT_TRUE(AllClose(ToHost<float>(dstate, want_state.size()), want_state, tol, 1e-4f)) << "state";
}

// The chunked prefill against the CPU's chunked reference (the same algebra, tolerance as the
// other KDA cases against it) and, for the state after the prompt, the recurrence.
void KdaChunkedCase(const GpuStream& s, int64_t T, int64_t H, int64_t dk, int64_t dv) {
  KdaInputs in(T, H, dk, dv, 161 + uint32_t(T));
  std::vector<float> want(T * H * dv), want_state = in.state;
  kernels::ref::KdaChunked(in.Args(in.q.data(), in.k.data(), in.v.data(), in.g.data(), in.beta.data(),
                                   want_state.data(), want.data()));
  std::vector<float> rec(T * H * dv), rec_state = in.state;
  kernels::ref::KdaRecurrent(in.Args(in.q.data(), in.k.data(), in.v.data(), in.g.data(), in.beta.data(),
                                     rec_state.data(), rec.data()));
  auto dq = ToDevice(in.q), dk_ = ToDevice(in.k), dv_ = ToDevice(in.v), dg = ToDevice(in.g),
       db = ToDevice(in.beta);
  auto dstate = ToDevice(in.state), dout = ToDevice(std::vector<float>(T * H * dv));
  auto scratch = ToDevice(std::vector<float>(size_t(KdaChunkedScratchFloats(T, H, dk)), std::nanf("")));
  EXPECT_OK(KdaChunked(in.Args(dq.as<float>(), dk_.as<float>(), dv_.as<float>(), dg.as<float>(), db.as<float>(),
                               dstate.as<float>(), dout.as<float>()),
                       scratch.as<float>(), s));
  Sync(s);
  const auto out = ToHost<float>(dout, want.size());
  const auto state = ToHost<float>(dstate, want_state.size());
  EXPECT_TRUE(AllClose(out, want, 1e-4f, 1e-4f)) << "outputs vs chunked reference";
  EXPECT_TRUE(AllClose(state, want_state, 1e-4f, 1e-4f)) << "state vs chunked reference";
  EXPECT_TRUE(AllClose(out, rec, 1e-4f, 1e-4f)) << "outputs vs recurrence";
  EXPECT_TRUE(AllClose(state, rec_state, 1e-4f, 1e-4f)) << "state vs recurrence";
}

// ---- synthetic weights ----

// The device fill writes exactly synth_fill.h's values, with the spread the header promises.
void SynthFillCase(const GpuStream& s, int64_t rows, int64_t cols) {
  auto bf16 = ToDevice(std::vector<uint16_t>(size_t(rows * cols)));
  auto packed = ToDevice(std::vector<uint8_t>(size_t(rows * cols / 2)));
  auto scales = ToDevice(std::vector<uint8_t>(size_t(rows * cols / 32)));
  EXPECT_OK(FillSynthBf16(bf16.as<uint16_t>(), rows * cols, cols, 99, s));
  EXPECT_OK(FillSynthMxfp4Packed(packed.as<uint8_t>(), rows, cols, 98, s));
  EXPECT_OK(FillSynthMxfp4Scales(scales.as<uint8_t>(), rows, cols, s));
  Sync(s);
  const auto w = ToHost<uint16_t>(bf16, size_t(rows * cols));
  const float half = SynthBf16HalfWidth(cols);
  double sum2 = 0.0;
  for (int64_t i = 0; i < rows * cols; ++i) {
    ASSERT_EQ(w[i], SynthBf16(99, uint64_t(i), half)) << "bf16 element " << i;
    const double x = Bf16ToF32(w[i]);
    sum2 += x * x;
  }
  EXPECT_NEAR(std::sqrt(sum2 / double(rows * cols)) * std::sqrt(double(cols)), 1.0, 0.02);
  const auto p = ToHost<uint8_t>(packed, size_t(rows * cols / 2));
  for (int64_t i = 0; i < rows * cols / 2; ++i) ASSERT_EQ(p[i], SynthPackedByte(98, uint64_t(i))) << "byte " << i;
  const auto sc = ToHost<uint8_t>(scales, size_t(rows * cols / 32));
  EXPECT_TRUE(std::all_of(sc.begin(), sc.end(), [&](uint8_t b) { return b == SynthMxfp4Scale(cols); }));
}

// ---- MLA ----

void MlaCase(const GpuStream& s, int64_t nq, int64_t H, int64_t q_pos0, int64_t R, int64_t P,
             int64_t page_size, bool prefill_kernel = false) {
  const int64_t n_tok = q_pos0 + nq, pages = (n_tok + page_size - 1) / page_size + 2;
  // Pages in a shuffled order so the block table matters.
  std::vector<int32_t> table(pages);
  std::iota(table.begin(), table.end(), 0);
  std::shuffle(table.begin(), table.end(), std::mt19937(71));
  auto pool = RandomFloats(pages * page_size * (R + P), 72);
  auto ql = RandomFloats(nq * H * R, 73);
  auto qp = RandomFloats(nq * H * P, 74);
  const float scale = 1.0f / std::sqrt(float(128 + P));
  std::vector<float> want(nq * H * R);
  kernels::MlaPagedCache host_cache{pool.data(), table.data(), page_size, R, P};
  kernels::ref::MlaAbsorbed(ql.data(), H * R, qp.data(), H * P, nq, H, q_pos0, host_cache, scale, want.data(),
                            H * R);
  auto dpool = ToDevice(pool), dtable = ToDevice(table), dql = ToDevice(ql), dqp = ToDevice(qp);
  auto dout = ToDevice(std::vector<float>(want.size()));
  kernels::MlaPagedCache dev_cache{dpool.as<float>(), dtable.as<int32_t>(), page_size, R, P};
  const auto attention = prefill_kernel ? MlaPrefillAttention : MlaAbsorbedAttention;
  EXPECT_OK(attention(dql.as<float>(), dqp.as<float>(), nq, H, q_pos0, dev_cache, scale, dout.as<float>(), s));
  Sync(s);
  EXPECT_TRUE(AllClose(ToHost<float>(dout, want.size()), want, 1e-5f, 1e-4f));
}

// ---- routing and sampling ----

void RouteCase(const GpuStream& s, int64_t T, int64_t E, int top_k, bool with_bias, bool renormalize) {
  auto logits = RandomFloats(T * E, 81 + uint32_t(E), -4.0f, 4.0f);
  auto bias = RandomFloats(E, 82, -0.1f, 0.1f);
  std::vector<int32_t> want_ids(T * top_k);
  std::vector<float> want_w(T * top_k);
  for (int64_t t = 0; t < T; ++t)
    kernels::ref::TopKRoute(logits.data() + t * E, with_bias ? bias.data() : nullptr, E, top_k, renormalize,
                            2.5f, want_ids.data() + t * top_k, want_w.data() + t * top_k);
  auto dl = ToDevice(logits), db = ToDevice(bias);
  auto dids = ToDevice(std::vector<int32_t>(T * top_k, -7));
  auto dw = ToDevice(std::vector<float>(T * top_k));
  EXPECT_OK(TopKRoute(dl.as<float>(), with_bias ? db.as<float>() : nullptr, T, E, top_k, renormalize, 2.5f,
                      dids.as<int32_t>(), dw.as<float>(), s));
  Sync(s);
  auto ids = ToHost<int32_t>(dids, want_ids.size());
  auto choice = [&](int64_t t, int32_t e) {
    return 1.0f / (1.0f + std::exp(-logits[t * E + e])) + (with_bias ? bias[e] : 0.0f);
  };
  for (int64_t i = 0; i < T * top_k; ++i) {
    if (ids[i] == want_ids[i]) continue;
    const int64_t t = i / top_k;
    const bool near_tie =
        ids[i] >= 0 && ids[i] < E && std::fabs(choice(t, ids[i]) - choice(t, want_ids[i])) < 1e-6f;
    EXPECT_TRUE(near_tie) << "token " << t << " rank " << i % top_k << ": gpu expert " << ids[i]
                          << ", reference " << want_ids[i];
  }
  EXPECT_TRUE(AllClose(ToHost<float>(dw, want_w.size()), want_w, 1e-6f, 1e-5f));
}

void ArgmaxCase(const GpuStream& s, int64_t rows, int64_t V) {
  const int64_t ld = V + 4;
  auto logits = RandomFloats(rows * ld, 91, -10.0f, 10.0f);
  // Row 0: the maximum twice (the lower index must win); row 1: NaNs around a maximum.
  if (rows > 0) logits[V / 3] = logits[V / 2] = 50.0f;
  if (rows > 1) {
    logits[ld + 1] = std::nanf("");
    logits[ld + V - 1] = 40.0f;
    logits[ld + V - 2] = std::nanf("");
  }
  std::vector<int32_t> want(rows);
  for (int64_t r = 0; r < rows; ++r) {
    int32_t best = -1;
    for (int64_t v = 0; v < V; ++v) {
      const float x = logits[r * ld + v];
      if (!std::isnan(x) && (best < 0 || x > logits[r * ld + best])) best = int32_t(v);
    }
    want[r] = best;
  }
  auto dl = ToDevice(logits);
  auto dids = ToDevice(std::vector<int32_t>(rows, -7));
  EXPECT_OK(ArgmaxRows(dl.as<float>(), rows, V, ld, dids.as<int32_t>(), s));
  Sync(s);
  EXPECT_EQ(ToHost<int32_t>(dids, rows), want);
}

// ---- the case table ----

std::vector<OpCase> AllCases() {
  std::vector<OpCase> c;
  auto add = [&](std::string name, std::function<void(const GpuStream&)> fn) {
    c.push_back({std::move(name), std::move(fn)});
  };
  // Decode GEMVs (every row count, vector and scalar paths) and prefill GEMMs with tails.
  for (int64_t M : {1, 2, 3, 5, 8}) {
    add("MatmulBf16_gemv_M" + std::to_string(M),
        [=](const GpuStream& s) { Bf16MatmulCase(s, M, 77, 520, 0); });
    add("MatmulMxfp4_gemv_M" + std::to_string(M),
        [=](const GpuStream& s) { Mxfp4MatmulCase(s, M, 77, 544, 0); });
  }
  add("MatmulBf16_gemv_oddK", [](const GpuStream& s) { Bf16MatmulCase(s, 3, 33, 301, 2); });
  add("MatmulBf16_gemv_wide", [](const GpuStream& s) { Bf16MatmulCase(s, 1, 1024, 7168, 0); });
  add("MatmulMxfp4_gemv_unalignedX", [](const GpuStream& s) { Mxfp4MatmulCase(s, 2, 40, 256, 1); });
  add("MatmulMxfp4_gemv_wide", [](const GpuStream& s) { Mxfp4MatmulCase(s, 1, 1024, 7168, 0); });
  add("MatmulBf16_gemm_M9", [](const GpuStream& s) { Bf16MatmulCase(s, 9, 130, 300, 3); });
  add("MatmulBf16_gemm_M70", [](const GpuStream& s) { Bf16MatmulCase(s, 70, 129, 97, 0); });
  add("MatmulMxfp4_gemm_M33", [](const GpuStream& s) { Mxfp4MatmulCase(s, 33, 65, 288, 0); });
  add("MatmulMxfp4_gemm_M130", [](const GpuStream& s) { Mxfp4MatmulCase(s, 130, 200, 1024, 4); });
  // From kTensorCoreMinRows rows (CUDA): the tensor-core tile, edges in M, N and K, same tolerances.
  add("GroupedMatmulMxfp4_4experts", [](const GpuStream& s) { GroupedMxfp4Case(s, 70, 512, 0); });
  add("GroupedMatmulMxfp4_unalignedX", [](const GpuStream& s) { GroupedMxfp4Case(s, 33, 256, 1); });
  add("MatmulBf16_tensorcore_M64_edges", [](const GpuStream& s) { Bf16MatmulCase(s, 64, 100, 72, 1); });
  add("MatmulBf16_tensorcore_M200_wide", [](const GpuStream& s) { Bf16MatmulCase(s, 200, 256, 2048, 0); });
  add("MatmulMxfp4_tensorcore_M256", [](const GpuStream& s) { Mxfp4MatmulCase(s, 256, 192, 1024, 0); });
  // Element-wise and row-wise.
  add("Silu", [](const GpuStream& s) { UnaryCase(s, Silu, kernels::ref::Silu, 100003, 20.0f); });
  add("Sigmoid", [](const GpuStream& s) { UnaryCase(s, Sigmoid, kernels::ref::Sigmoid, 100003, 20.0f); });
  add("Situ", [](const GpuStream& s) {
    const int64_t n = 100003;
    BinaryCase(
        s, n, 20.0f, 80.0f,
        [&](const float* g, const float* u, float* o) { kernels::ref::Situ(g, u, n, 4.0f, 25.0f, o); },
        [&](const float* g, const float* u, float* o) { return Situ(g, u, n, 4.0f, 25.0f, o, s); });
  });
  add("MulSigmoid", [](const GpuStream& s) {
    const int64_t n = 4099;
    BinaryCase(
        s, n, 5.0f, 12.0f,
        [&](const float* x, const float* g, float* o) { kernels::ref::MulSigmoid(x, g, n, o); },
        [&](const float* x, const float* g, float* o) { return MulSigmoid(x, g, n, o, s); });
  });
  add("RmsNorm_small", [](const GpuStream& s) { RmsNormCase(s, 3, 100); });
  add("RmsNorm_K3", [](const GpuStream& s) { RmsNormCase(s, 4, 7168); });
  add("L2Normalize", [](const GpuStream& s) { L2NormalizeCase(s, 37, 128); });
  add("Softmax_small", [](const GpuStream& s) { SoftmaxCase(s, 5, 7); });
  add("Softmax_vocab", [](const GpuStream& s) { SoftmaxCase(s, 2, 163840); });
  add("KdaGate", [](const GpuStream& s) { KdaGateCase(s, 5, 6, 32); });
  // Conv: decode, fewer tokens than the history, prefill; every width class.
  add("Conv_decode_w4", [](const GpuStream& s) { ConvCase(s, 1, 300, 4, true); });
  add("Conv_T2_w4", [](const GpuStream& s) { ConvCase(s, 2, 300, 4, false); });
  add("Conv_prefill_w2", [](const GpuStream& s) { ConvCase(s, 37, 129, 2, true); });
  add("Conv_prefill_w8", [](const GpuStream& s) { ConvCase(s, 19, 257, 8, true); });
  // KDA: decode and prefill at the nano and K3 head sizes; a dv that is not a multiple of 32;
  // a long prefill against the chunked reference (what the CPU prefill computes).
  add("Kda_decode_nano", [](const GpuStream& s) { KdaCase(s, 1, 6, 32, 32, false); });
  add("Kda_decode_k3", [](const GpuStream& s) { KdaCase(s, 1, 4, 128, 128, false); });
  add("Kda_prefill_dv40", [](const GpuStream& s) { KdaCase(s, 20, 3, 48, 40, false); });
  add("Kda_prefill_vs_chunked", [](const GpuStream& s) { KdaCase(s, 150, 2, 128, 128, true); });
  // Chunked prefill: a short prompt, exactly one chunk, several chunks with a short last one at
  // K3's head size, odd head sizes (dv not a multiple of the 32-column tile).
  add("KdaChunked_T1", [](const GpuStream& s) { KdaChunkedCase(s, 1, 2, 32, 32); });
  add("KdaChunked_one_chunk", [](const GpuStream& s) { KdaChunkedCase(s, 64, 3, 128, 128); });
  add("KdaChunked_k3_150", [](const GpuStream& s) { KdaChunkedCase(s, 150, 2, 128, 128); });
  add("KdaChunked_odd_heads", [](const GpuStream& s) { KdaChunkedCase(s, 70, 3, 48, 40); });
  add("KdaChunked_nano_300", [](const GpuStream& s) { KdaChunkedCase(s, 300, 6, 32, 32); });
  // MLA: first token, a long decode over many pages, several query rows (prefill-style).
  add("Mla_first_token", [](const GpuStream& s) { MlaCase(s, 1, 6, 0, 64, 16, 16); });
  add("Mla_decode_k3", [](const GpuStream& s) { MlaCase(s, 1, 4, 1000, 512, 64, 64); });
  add("Mla_multi_query", [](const GpuStream& s) { MlaCase(s, 5, 3, 37, 64, 16, 16); });
  // The tiled prefill kernel: a prompt from position 0 (partial query tile), a continued
  // prompt over many pages at K3's sizes, one query row.
  add("MlaPrefill_from_start", [](const GpuStream& s) { MlaCase(s, 37, 3, 0, 64, 16, 16, true); });
  add("MlaPrefill_k3_continued", [](const GpuStream& s) { MlaCase(s, 70, 4, 300, 512, 64, 64, true); });
  add("MlaPrefill_one_row", [](const GpuStream& s) { MlaCase(s, 1, 2, 9, 64, 16, 16, true); });
  // Routing at the nano, mini and full expert counts.
  add("TopKRoute_nano", [](const GpuStream& s) { RouteCase(s, 5, 16, 4, true, true); });
  add("TopKRoute_mini_nobias", [](const GpuStream& s) { RouteCase(s, 7, 64, 8, false, false); });
  add("TopKRoute_k3", [](const GpuStream& s) { RouteCase(s, 3, 896, 16, true, true); });
  add("ArgmaxRows_vocab", [](const GpuStream& s) { ArgmaxCase(s, 3, 163840); });
  add("ArgmaxRows_small", [](const GpuStream& s) { ArgmaxCase(s, 2, 5); });
  add("SynthFill", [](const GpuStream& s) { SynthFillCase(s, 96, 1024); });
  return c;
}

class GpuOpsTest : public testing::GpuTest, public ::testing::WithParamInterface<OpCase> {};

TEST_P(GpuOpsTest, MatchesCpuReference) {
  GetParam().run(stream());
}

INSTANTIATE_TEST_SUITE_P(Ops, GpuOpsTest, ::testing::ValuesIn(AllCases()),
                         [](const ::testing::TestParamInfo<OpCase>& info) { return info.param.name; });

}  // namespace
}  // namespace kimi::gpu
