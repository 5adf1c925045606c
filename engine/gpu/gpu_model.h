// The device-resident K3 model: the same forward pass as the CPU engine (model/k3_model.cc),
// top to bottom, with every weight and activation in device memory and the kernels of
// gpu_ops.h / model_ops.h doing the arithmetic.
//
// Loading reuses the CPU engine's whole binding path (ModelDir, ValidateLayout,
// Model::Impl::Bind): every matrix it binds is uploaded once (UploadTensors, with progress)
// and the bound weight structs are copied with their matrix pointers moved to the device, so
// the names, shapes and config switches live in one place for both backends.
//
// Sequences: a GpuSequence holds one sequence's KDA states and its MLA latent caches on the
// device, sized for options.max_context tokens (pages of options.mla_page_tokens through an
// identity block table). Prefill runs pieces of at most options.max_rows tokens; DecodeBatch
// runs one token of up to max_rows sequences in one pass. Logits come back to the host.
//
// Owns: the bound CPU model (its mapping and host vectors), the weight arena, the activation
// buffer, the stream. A GpuSequence owns its device buffer.
// Thread safety: one call at a time per GpuModel (callers serialise); a GpuSequence is used by
// one call at a time and only with the model that made it.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "gpu/forward_plan.h"
#include "gpu/gpu_device.h"
#include "gpu/weight_upload.h"
#include "kimi/config.h"
#include "kimi/model.h"
#include "kimi/status.h"

namespace kimi::gpu {

struct GpuModelOptions {
  int device = 0;
  int64_t max_rows = 256;        // rows of one forward pass: a prefill piece, a decode batch
  int64_t max_context = 4096;    // tokens one sequence can hold (its MLA caches are this long)
  int64_t mla_page_tokens = 64;  // tokens per page of the MLA latent cache
  // Nonzero: every matrix is generated on the device from this seed (synth_weights.h) instead
  // of uploaded, and the directory's matrix bytes are never read — for benchmark models written
  // with SynthOptions::matrices_unwritten (docs/gpu.md, "k3-h200-40g"). The float vectors
  // (norms, conv taps, gates' biases) still come from the directory.
  uint64_t synthetic_fill_seed = 0;
};

class GpuModel;

class GpuSequence {
 public:
  int64_t length() const { return length_; }
  // Device pointers to the state of the slot-th KDA / MLA layer (for the forward pass).
  float* kda_recurrent(int slot) const { return kda_recurrent_[size_t(slot)]; }
  float* kda_conv(int slot) const { return kda_conv_[size_t(slot)]; }
  float* mla_pages(int slot) const { return mla_pages_[size_t(slot)]; }

 private:
  friend class GpuModel;
  DeviceBuffer storage_;
  std::vector<float*> kda_recurrent_, kda_conv_, mla_pages_;  // per KDA / MLA layer, into storage_
  int64_t length_ = 0;
  const GpuModel* owner_ = nullptr;
};

class GpuModel {
 public:
  // Binds the model in `dir` as the CPU engine does, uploads its weights to `options.device`
  // and plans the activations. Unimplemented for configs the GPU pass does not cover
  // (a KDA gate without gate_lower_bound); FailedPrecondition without a device.
  static Result<std::unique_ptr<GpuModel>> Load(const std::string& dir, const GpuModelOptions& options = {},
                                                const UploadProgress& progress = {});
  ~GpuModel();
  GpuModel(const GpuModel&) = delete;
  GpuModel& operator=(const GpuModel&) = delete;

  const K3Config& config() const;
  const GpuStream& stream() const { return stream_; }
  uint64_t weight_bytes() const { return weight_bytes_; }
  uint64_t activation_bytes() const { return plan_.total_bytes; }
  // Bytes of device memory one sequence takes.
  uint64_t sequence_bytes() const;

  Result<std::unique_ptr<GpuSequence>> NewSequence() const;

  // As Model::Prefill: `logits` gets [T × V] (kAll) or [1 × V] (kLast).
  Status Prefill(GpuSequence& seq, std::span<const int32_t> tokens, LogitsRows rows, std::vector<float>* logits);
  // As Model::DecodeBatch: `logits` gets [n × V]; with `greedy` set, also the argmax of each row
  // computed on the device (the lower id on ties).
  Status DecodeBatch(std::span<GpuSequence* const> seqs, std::span<const int32_t> tokens,
                     std::vector<float>* logits, std::vector<int32_t>* greedy = nullptr);

  struct Impl;

 private:
  GpuModel(std::unique_ptr<Impl> impl, GpuStream stream);
  Status CheckSequence(const GpuSequence& seq, int64_t n) const;

  std::unique_ptr<Impl> impl_;
  GpuStream stream_;
  ActivationPlan plan_;
  uint64_t weight_bytes_ = 0;
};

}  // namespace kimi::gpu
