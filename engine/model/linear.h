// Views of the weight matrices the forward pass multiplies by, and their products through the
// kernels (one product, or several in one parallel region). A view points into the mapped safetensors file; it owns
// nothing and is valid while the model's ModelDir is alive.
//
// Thread safety: views are immutable values; the helpers are reentrant (the pool serialises its
// own parallel regions).
#pragma once

#include <cstdint>
#include <vector>

#include "kernels/cpu/kernels.h"

namespace kimi {
class ThreadPool;
}

namespace kimi::model {

// A BF16 linear weight [rows = out, cols = in], row-major, read in place.
struct Bf16Matrix {
  const uint16_t* w = nullptr;
  int64_t rows = 0;
  int64_t cols = 0;

  bool present() const { return w != nullptr; }
  uint64_t bytes() const { return uint64_t(rows) * uint64_t(cols) * 2; }
  // One row's elements: row r of the matrix starts at w + r * cols.
  const uint16_t* Row(int64_t r) const { return w + r * cols; }
};

// An MXFP4 linear weight [rows, cols]: packed [rows, cols/2], E8M0 scales [rows, cols/32].
struct Mxfp4Matrix {
  const uint8_t* packed = nullptr;
  const uint8_t* scale = nullptr;
  int64_t rows = 0;
  int64_t cols = 0;

  uint64_t bytes() const { return uint64_t(rows) * uint64_t(cols) / 2 + uint64_t(rows) * uint64_t(cols) / 32; }
};

// y[M, W.rows] = x[M, W.cols] · Wᵀ (contiguous rows).
inline void Apply(const Bf16Matrix& W, const float* x, int64_t M, float* y, ThreadPool* pool) {
  kernels::MatmulBf16(x, W.cols, W.w, M, W.rows, W.cols, y, W.rows, pool);
}
inline void Apply(const Mxfp4Matrix& W, const float* x, int64_t M, float* y, ThreadPool* pool) {
  kernels::MatmulMxfp4(x, W.cols, W.packed, W.scale, M, W.rows, W.cols, y, W.rows, pool);
}

// Several BF16 products with the same row count, run in one parallel region
// (kernels::MatmulBf16Batch): a decode step's projections of one input, say, synchronise the
// threads once instead of once per matrix. Results equal Apply() on each product.
// Kept in a layer's scratch and cleared before each use, so it allocates only the first time.
// Not thread-safe.
class Bf16ProductBatch {
 public:
  void Clear() { items_.clear(); }
  // y[M, W.rows] = x[M, W.cols] · Wᵀ (contiguous rows). An absent W is skipped.
  void Add(const Bf16Matrix& W, const float* x, float* y) {
    if (W.present()) items_.push_back({x, W.cols, W.w, W.rows, W.cols, y, W.rows});
  }
  void Add(const kernels::Bf16Product& p) { items_.push_back(p); }
  void Run(int64_t M, ThreadPool* pool) const { kernels::MatmulBf16Batch(items_, M, pool); }

 private:
  std::vector<kernels::Bf16Product> items_;
};

}  // namespace kimi::model
