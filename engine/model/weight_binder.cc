#include "model/weight_binder.h"

#include <cstring>

#include "kimi/dtype.h"
#include "kimi/safetensors.h"

namespace kimi::model {
namespace {

std::string ShapeText(const std::vector<int64_t>& shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + "]";
}

}  // namespace

void WeightBinder::Fail(Status s) {
  if (status_.ok()) status_ = std::move(s);
}

const TensorView* WeightBinder::Find(const std::string& name, std::initializer_list<DType> dtypes) {
  if (!status_.ok()) return nullptr;
  Result<const TensorView*> found = dir_.Tensor(name);
  if (!found.ok()) {
    Fail(found.status());
    return nullptr;
  }
  const TensorView* t = found.value();
  for (DType d : dtypes) {
    if (t->dtype == d) return t;
  }
  std::string wanted;
  for (DType d : dtypes) wanted += (wanted.empty() ? "" : " or ") + std::string(SafetensorsDTypeName(d));
  Fail(Status::Corruption(dir_.path() + ": tensor '" + name + "' is " + t->Describe() + ", expected " + wanted));
  return nullptr;
}

bool WeightBinder::CheckShape(const TensorView& t, const std::string& name, const std::vector<int64_t>& shape) {
  if (t.shape == shape) return true;
  Fail(Status::Corruption(dir_.path() + ": tensor '" + name + "' is " + t.Describe() + ", expected shape " +
                          ShapeText(shape)));
  return false;
}

std::vector<float> WeightBinder::ToFloat(const TensorView& t, int64_t n) {
  std::vector<float> out(n);
  const auto* bytes = static_cast<const uint8_t*>(t.data);
  for (int64_t i = 0; i < n; ++i) {
    if (t.dtype == DType::kBF16) {
      uint16_t b;
      std::memcpy(&b, bytes + 2 * i, 2);
      out[i] = Bf16ToF32(b);
    } else {
      std::memcpy(&out[i], bytes + 4 * i, 4);
    }
  }
  return out;
}

Bf16Matrix WeightBinder::Matrix(const std::string& name, int64_t rows, int64_t cols) {
  const TensorView* t = Find(name, {DType::kBF16});
  if (t == nullptr || !CheckShape(*t, name, {rows, cols})) return {};
  Bf16Matrix m{static_cast<const uint16_t*>(t->data), rows, cols};
  if (reinterpret_cast<uintptr_t>(t->data) % alignof(uint16_t) != 0) {
    // Misaligned in the file: the kernels read uint16_t, so this one matrix is copied.
    auto copy = std::make_unique<uint16_t[]>(size_t(rows) * cols);
    std::memcpy(copy.get(), t->data, t->bytes);
    m.w = copy.get();
    owned_.bf16.push_back(std::move(copy));
  }
  return m;
}

Mxfp4Matrix WeightBinder::Mxfp4(const std::string& prefix, int64_t rows, int64_t cols) {
  const std::string packed_name = prefix + ".weight_packed", scale_name = prefix + ".weight_scale";
  const TensorView* packed = Find(packed_name, {DType::kU8});
  if (packed == nullptr || !CheckShape(*packed, packed_name, {rows, cols / 2})) return {};
  const TensorView* scale = Find(scale_name, {DType::kU8});
  if (scale == nullptr || !CheckShape(*scale, scale_name, {rows, cols / kMxfp4BlockSize})) return {};
  return {static_cast<const uint8_t*>(packed->data), static_cast<const uint8_t*>(scale->data), rows, cols};
}

DenseMatrix WeightBinder::Dense(const std::string& module, int64_t rows, int64_t cols) {
  if (!status_.ok()) return {};
  if (Has(module + ".weight")) {
    const Bf16Matrix m = Matrix(module + ".weight", rows, cols);
    return {.format = MatrixFormat::kBf16, .w = m.w, .rows = m.rows, .cols = m.cols};
  }
  const std::string packed_name = module + ".weight_packed";
  const TensorView* packed = Find(packed_name, {DType::kU8, DType::kI32});
  if (packed == nullptr) return {};
  if (packed->dtype == DType::kU8) {
    const Mxfp4Matrix m = Mxfp4(module, rows, cols);
    return {.format = MatrixFormat::kMxfp4, .q = m.packed, .block_scale = m.scale, .rows = m.rows, .cols = m.cols};
  }
  if (cols % 4 != 0 || !CheckShape(*packed, packed_name, {rows, cols / 4})) {
    if (status_.ok()) Fail(Status::Corruption(dir_.path() + ": tensor '" + packed_name + "': " + std::to_string(cols) +
                                              " columns do not pack into int32 words"));
    return {};
  }
  const std::string scale_name = module + ".weight_scale", shape_name = module + ".weight_shape";
  const TensorView* scale = Find(scale_name, {DType::kF32, DType::kBF16});
  if (scale == nullptr || !CheckShape(*scale, scale_name, {rows, 1})) return {};
  const TensorView* shape = Find(shape_name, {DType::kI32});
  if (shape == nullptr || !CheckShape(*shape, shape_name, {2})) return {};
  int32_t stored[2];
  std::memcpy(stored, shape->data, sizeof stored);
  if (stored[0] != rows || stored[1] != cols) {
    Fail(Status::Corruption(dir_.path() + ": tensor '" + shape_name + "' says [" + std::to_string(stored[0]) + ", " +
                            std::to_string(stored[1]) + "], expected [" + std::to_string(rows) + ", " +
                            std::to_string(cols) + "]"));
    return {};
  }
  // The scales are copied: fp32 whatever their stored type, and aligned.
  std::vector<float> values = ToFloat(*scale, rows);
  auto copy = std::make_unique<float[]>(size_t(rows));
  std::memcpy(copy.get(), values.data(), values.size() * sizeof(float));
  DenseMatrix m{.format = MatrixFormat::kInt8Channel,
                .q = static_cast<const uint8_t*>(packed->data),
                .row_scale = copy.get(),
                .rows = rows,
                .cols = cols};
  owned_.floats.push_back(std::move(copy));
  return m;
}

std::vector<float> WeightBinder::Vector(const std::string& name, const std::vector<int64_t>& shape) {
  const TensorView* t = Find(name, {DType::kBF16, DType::kF32});
  if (t == nullptr || !CheckShape(*t, name, shape)) return {};
  return ToFloat(*t, t->numel());
}

std::vector<float> WeightBinder::Leading(const std::string& name, int64_t n) {
  const TensorView* t = Find(name, {DType::kBF16, DType::kF32});
  if (t == nullptr) return {};
  if (t->numel() < n) {
    Fail(Status::Corruption(dir_.path() + ": tensor '" + name + "' is " + t->Describe() + ", expected at least " +
                            std::to_string(n) + " elements"));
    return {};
  }
  return ToFloat(*t, n);
}

}  // namespace kimi::model
