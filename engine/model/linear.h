// Views of the weight matrices the forward pass multiplies by (BF16, MXFP4, and the dense
// projections in whichever of the three formats they are stored), and their products through
// the kernels (one product, or several in one parallel region). A view points into the mapped safetensors file; it owns
// nothing and is valid while the model's ModelDir is alive.
//
// Thread safety: views are immutable values; the helpers are reentrant (the pool serialises its
// own parallel regions).
#pragma once

#include <cstdint>
#include <vector>

#include "kernels/cpu/kernels.h"
#include "kimi/quantization.h"

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
  uint64_t bytes() const { return MatrixWeightBytes(MatrixFormat::kBf16, rows, cols); }
  uint64_t elements() const { return present() ? uint64_t(rows) * uint64_t(cols) : 0; }
  // One row's elements: row r of the matrix starts at w + r * cols.
  const uint16_t* Row(int64_t r) const { return w + r * cols; }
};

// An MXFP4 linear weight [rows, cols]: packed [rows, cols/2], E8M0 scales [rows, cols/32].
struct Mxfp4Matrix {
  const uint8_t* packed = nullptr;
  const uint8_t* scale = nullptr;
  int64_t rows = 0;
  int64_t cols = 0;

  uint64_t bytes() const { return MatrixWeightBytes(MatrixFormat::kMxfp4, rows, cols); }
};

// A dense projection [rows = out, cols = in] in the format its checkpoint stores it
// (kimi/quantization.h): BF16, int8 per output channel, or MXFP4. Read in place.
struct DenseMatrix {
  MatrixFormat format = MatrixFormat::kBf16;
  const uint16_t* w = nullptr;            // BF16 [rows, cols]
  const uint8_t* q = nullptr;             // int8: q + 128 [rows, cols]; MXFP4: nibbles [rows, cols/2]
  const float* row_scale = nullptr;       // int8: [rows]
  const uint8_t* block_scale = nullptr;   // MXFP4: E8M0 [rows, cols/32]
  int64_t rows = 0;
  int64_t cols = 0;

  bool present() const { return w != nullptr || q != nullptr; }
  uint64_t elements() const { return present() ? uint64_t(rows) * uint64_t(cols) : 0; }
  uint64_t bytes() const { return present() ? MatrixWeightBytes(format, rows, cols) : 0; }
};

// y[M, W.rows] = x[M, W.cols] · Wᵀ (contiguous rows).
inline void Apply(const Bf16Matrix& W, const float* x, int64_t M, float* y, ThreadPool* pool) {
  kernels::MatmulBf16(x, W.cols, W.w, M, W.rows, W.cols, y, W.rows, pool);
}
inline void Apply(const Mxfp4Matrix& W, const float* x, int64_t M, float* y, ThreadPool* pool) {
  kernels::MatmulMxfp4(x, W.cols, W.packed, W.scale, M, W.rows, W.cols, y, W.rows, pool);
}
inline void Apply(const DenseMatrix& W, const float* x, int64_t M, float* y, ThreadPool* pool) {
  switch (W.format) {
    case MatrixFormat::kBf16:
      return kernels::MatmulBf16(x, W.cols, W.w, M, W.rows, W.cols, y, W.rows, pool);
    case MatrixFormat::kInt8Channel:
      return kernels::MatmulInt8(x, W.cols, W.q, W.row_scale, M, W.rows, W.cols, y, W.rows, pool);
    case MatrixFormat::kMxfp4:
      return kernels::MatmulMxfp4(x, W.cols, W.q, W.block_scale, M, W.rows, W.cols, y, W.rows, pool);
  }
}

// Several products with the same row count: the BF16 ones run in one parallel region
// (kernels::MatmulBf16Batch), so a decode step's projections of one input, say, synchronise the
// threads once instead of once per matrix; quantised ones run one after another after them.
// Results equal Apply() on each product.
// Kept in a layer's scratch and cleared before each use, so it allocates only the first time.
// Not thread-safe.
class ProductBatch {
 public:
  void Clear() {
    bf16_.clear();
    quantized_.clear();
  }
  // y[M, W.rows] = x[M, W.cols] · Wᵀ (contiguous rows). An absent W is skipped.
  void Add(const Bf16Matrix& W, const float* x, float* y) {
    if (W.present()) bf16_.push_back({x, W.cols, W.w, W.rows, W.cols, y, W.rows});
  }
  void Add(const DenseMatrix& W, const float* x, float* y) {
    if (!W.present()) return;
    if (W.format == MatrixFormat::kBf16) {
      bf16_.push_back({x, W.cols, W.w, W.rows, W.cols, y, W.rows});
    } else {
      quantized_.push_back({&W, x, y});
    }
  }
  void Add(const kernels::Bf16Product& p) { bf16_.push_back(p); }
  void Run(int64_t M, ThreadPool* pool) const {
    if (!bf16_.empty()) kernels::MatmulBf16Batch(bf16_, M, pool);
    for (const Quantized& p : quantized_) Apply(*p.W, p.x, M, p.y, pool);
  }

 private:
  struct Quantized {
    const DenseMatrix* W;
    const float* x;
    float* y;
  };
  std::vector<kernels::Bf16Product> bf16_;
  std::vector<Quantized> quantized_;
};

}  // namespace kimi::model
