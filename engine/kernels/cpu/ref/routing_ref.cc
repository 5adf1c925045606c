// Reference top-k routing: score every expert, then a stable full sort (by biased score
// descending, expert index ascending on ties) and take the first top_k.
#include <algorithm>
#include <cmath>
#include <numeric>
#include <vector>

#include "kernels/cpu/ref/reference.h"

namespace kimi::kernels::ref {

void TopKRoute(const float* logits, const float* bias, int64_t E, int top_k, bool renormalize,
               float scaling, int32_t* ids, float* weights) {
  std::vector<float> s(E), choice(E);
  for (int64_t e = 0; e < E; ++e) {
    s[e] = 1.0f / (1.0f + std::exp(-logits[e]));
    choice[e] = s[e] + (bias ? bias[e] : 0.0f);
  }
  std::vector<int32_t> order(E);
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](int32_t a, int32_t b) { return choice[a] > choice[b]; });
  float sum = 0.0f;
  for (int i = 0; i < top_k; ++i) sum += s[order[i]];
  for (int i = 0; i < top_k; ++i) {
    ids[i] = order[i];
    float wgt = s[order[i]];
    if (renormalize) wgt /= sum;
    weights[i] = wgt * scaling;
  }
}

}  // namespace kimi::kernels::ref
