// Binds the forward pass's weight structs to tensors of a model directory, checking each
// tensor's dtype and shape on the way. Matrices stay in the mapping (a view); only vectors are
// converted to float32 copies. The first error is kept and names the directory and the tensor.
//
// Owns: copies of BF16 matrices whose mapped data is not 2-byte aligned (rare: safetensors only
// guarantees byte alignment) and of int8 matrices' row scales (fp32, however stored); the views
// handed out point into them, so the binder's owned storage must be kept (TakeOwned) as long as
// the weights are used.
// Thread safety: one thread binds.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "kimi/model_dir.h"
#include "kimi/status.h"
#include "model/linear.h"

namespace kimi::model {

// The copies a binder made; the views it handed out point into them.
struct OwnedWeights {
  std::vector<std::unique_ptr<uint16_t[]>> bf16;
  std::vector<std::unique_ptr<float[]>> floats;
};

class WeightBinder {
 public:
  explicit WeightBinder(ModelDir& dir) : dir_(dir) {}

  // BF16 [rows, cols].
  Bf16Matrix Matrix(const std::string& name, int64_t rows, int64_t cols);
  // `prefix`.weight_packed U8 [rows, cols/2] and `prefix`.weight_scale U8 [rows, cols/32].
  Mxfp4Matrix Mxfp4(const std::string& prefix, int64_t rows, int64_t cols);
  // A dense projection `module` [rows, cols] in whichever format the directory stores it:
  // `module`.weight BF16; or `module`.weight_packed U8 [rows, cols/2] + weight_scale U8
  // [rows, cols/32] (MXFP4); or weight_packed I32 [rows, cols/4] + weight_scale F32 or BF16
  // [rows, 1] + weight_shape I32 [2] = {rows, cols} (int8 per channel, kimi/quantization.h).
  DenseMatrix Dense(const std::string& module, int64_t rows, int64_t cols);
  // A BF16 or F32 tensor of exactly `shape`, as float32.
  std::vector<float> Vector(const std::string& name, const std::vector<int64_t>& shape);
  // The first `n` elements of a BF16 or F32 tensor of any shape holding at least `n`
  // (A_log is published with 128 entries for 96 heads; dt_bias as [P] or [H, d]).
  std::vector<float> Leading(const std::string& name, int64_t n);

  bool Has(const std::string& name) { return dir_.Tensor(name).ok(); }
  // OK, or the first error met.
  const Status& status() const { return status_; }
  OwnedWeights TakeOwned() { return std::move(owned_); }

 private:
  // The view of `name` when its dtype is one of `dtypes`; nullptr (and an error) otherwise.
  const TensorView* Find(const std::string& name, std::initializer_list<DType> dtypes);
  bool CheckShape(const TensorView& t, const std::string& name, const std::vector<int64_t>& shape);
  void Fail(Status s);
  static std::vector<float> ToFloat(const TensorView& t, int64_t n);

  ModelDir& dir_;
  Status status_;
  OwnedWeights owned_;
};

}  // namespace kimi::model
