// Top-k routing: vectorised sigmoid, then one pass that keeps the best top_k in a small
// sorted list (insertion), instead of sorting all E experts. A candidate enters only when its
// biased score is strictly greater than the list's last entry, so among equal scores the
// lower expert index (seen first) stays ahead: the reference's stable order.
#include "kernels/cpu/avx2/avx2.h"
#include "kernels/cpu/avx2/vec_math_avx2.h"
#include "kernels/cpu/scratch.h"

namespace kimi::kernels::avx2 {

void TopKRoute(const float* logits, const float* bias, int64_t E, int top_k, bool renormalize,
               float scaling, int32_t* ids, float* weights) {
  float* s = ThreadScratchArray<float>(ScratchSlot::kA, E);
  float* best = ThreadScratchArray<float>(ScratchSlot::kB, top_k);
  Map8(logits, E, s, [](__m256 v) { return Sigmoid8(v); });
  int count = 0;
  for (int64_t e = 0; e < E; ++e) {
    const float c = s[e] + (bias ? bias[e] : 0.0f);
    if (count == top_k && !(c > best[count - 1])) continue;
    int pos = count < top_k ? count++ : top_k - 1;
    while (pos > 0 && c > best[pos - 1]) {
      best[pos] = best[pos - 1];
      ids[pos] = ids[pos - 1];
      --pos;
    }
    best[pos] = c;
    ids[pos] = static_cast<int32_t>(e);
  }
  float sum = 0.0f;
  for (int i = 0; i < top_k; ++i) sum += s[ids[i]];
  for (int i = 0; i < top_k; ++i) weights[i] = (renormalize ? s[ids[i]] / sum : s[ids[i]]) * scaling;
}

}  // namespace kimi::kernels::avx2
