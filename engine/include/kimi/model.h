// The Kimi K3 model: weights bound in place from a model directory, and the forward pass.
//
// Load() opens the directory (config.json, safetensors shards), checks that every tensor the
// config needs is present with the right dtype and shape, and keeps the large weights where
// they are mapped: BF16 matrices and the MXFP4 routed experts are read in place, never copied or
// dequantised. Only vectors (norm gains, gate biases, conv taps) are converted to float32.
//
// A SequenceState carries everything a sequence needs between calls: per MLA layer the latent
// cache (c_kv and k_pe per past token, in pages addressed through a block table, so a runtime
// can later hand out pages from a shared pool), per KDA layer the recurrent state S and the
// causal-conv history. Prefill() runs many tokens of one sequence; DecodeBatch() runs one token
// for each of several sequences in one pass, and ForwardBatch() any mix of prefill chunks and
// decodes in one pass, so every weight is streamed once per step.
//
// Owns: the mapped model directory, the thread pool the kernels run on, the scratch buffers of
// the forward pass. SequenceState owns its caches.
// Thread safety: Model methods may be called from any thread; forward passes are serialised by
// an internal mutex (one pass at a time uses all the pool's threads). A SequenceState must not
// be used by two calls at once.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "kimi/config.h"
#include "kimi/safetensors.h"
#include "kimi/status.h"

namespace kimi {

struct ModelOptions {
  int threads = 0;               // kernel threads, counting the caller; 0: one per hardware thread
  int64_t prefill_piece = 256;   // Prefill runs at most this many tokens per forward pass
  int64_t mla_page_tokens = 64;  // tokens per page of the MLA latent cache
  // The forward pass flushes subnormal floats to zero (docs/kernels.md "Subnormals"); true
  // keeps IEEE gradual underflow, only to measure what flushing saves (kimi-engine bench).
  bool keep_subnormals = false;
  // Where the NUMA topology is read (a sysfs-like tree; tests give one in files). On several
  // nodes the routed experts and the threads are placed by node (docs/engine.md "Many sockets").
  std::string numa_root = "/sys/devices/system";
};

// The latent cache of one MLA layer for one sequence. Token t lives in physical page
// block_table[t / page_tokens], slot t % page_tokens; a page holds page_tokens rows of
// [c_kv (kv_lora_rank) | k_pe (qk_rope_head_dim)] float32.
//
// Two ways to hold the pages:
// - private (shared_pages == nullptr): `pages` is this sequence's own storage, grown by the
//   forward pass as tokens arrive;
// - pooled (shared_pages set): physical page p is at shared_pages + p·page_tokens·row_width, an
//   arena owned by someone else (the runtime's page pool), so pages can be shared read-only
//   between sequences (prefix caching). The owner appends page ids to block_table before a pass
//   needs them; the pass only writes rows of pages past the shared prefix.
struct MlaLatentCache {
  int64_t page_tokens = 0;
  int64_t row_width = 0;              // kv_lora_rank + qk_rope_head_dim
  std::vector<float> pages;           // private: [num_pages, page_tokens, row_width]
  std::vector<int32_t> block_table;   // logical page -> physical page
  float* shared_pages = nullptr;      // pooled: the arena block_table indexes
};

// The state of one KDA layer for one sequence.
struct KdaLayerState {
  std::vector<float> recurrent;  // S per head: [H, head_dim (key), head_dim (value)]
  std::vector<float> conv;       // pre-conv history of q, k, v: [3, K-1, H*head_dim], oldest first
};

// Everything one sequence carries between forward passes. Index kda[j] is the j-th KDA layer
// and mla[j] the j-th MLA layer in layer order.
struct SequenceState {
  int64_t length = 0;  // tokens consumed so far
  std::vector<KdaLayerState> kda;
  std::vector<MlaLatentCache> mla;

  // Bytes held by the caches (for memory accounting); pooled MLA pages count at their full
  // size, also when other sequences share them.
  uint64_t Bytes() const;
};

enum class LogitsRows {
  kAll,   // one row of logits per input token
  kLast,  // only the row of the last token
};

// One sequence's share of a batched step: `tokens` (at least one) continue `state`.
struct BatchInput {
  SequenceState* state = nullptr;
  std::span<const int32_t> tokens;
  bool want_logits = true;  // the logits row of its last token
};

class Model {
 public:
  // Opens, validates and binds the model in `dir`. Errors name the file and the tensor.
  static Result<std::unique_ptr<Model>> Load(const std::string& dir, const ModelOptions& options = {});
  ~Model();
  Model(const Model&) = delete;
  Model& operator=(const Model&) = delete;

  const K3Config& config() const;
  int threads() const;

  // A fresh (empty) state for a new sequence.
  std::unique_ptr<SequenceState> NewSequence() const;

  // Runs `tokens` (at least one, each < vocab_size) after what `state` has consumed.
  // `logits` receives [tokens.size() × V] (kAll) or [1 × V] (kLast), float32 row-major.
  Status Prefill(SequenceState& state, std::span<const int32_t> tokens, LogitsRows rows,
                 std::vector<float>* logits);

  // One token per sequence, all sequences in one pass. states[i] consumes tokens[i];
  // `logits` receives [states.size() × V]. Precondition: the states are distinct.
  Status DecodeBatch(std::span<SequenceState* const> states, std::span<const int32_t> tokens,
                     std::vector<float>* logits);

  // Any mix of prefill chunks and decodes of distinct sequences in ONE forward pass: every
  // weight matrix is streamed once for all rows (routed experts grouped by token), while the
  // KDA and MLA steps run per sequence on its own state. `logits` receives one row [V] per
  // input with want_logits, in input order. The tokens of all inputs together form the pass,
  // so the caller bounds its size (the scratch grows to the largest pass).
  // Errors: InvalidArgument for no inputs, an empty input, a token outside the vocabulary or a
  // state that appears twice; FailedPrecondition for a pooled MLA cache whose block table does
  // not cover the new tokens. Nothing is run then.
  Status ForwardBatch(std::span<const BatchInput> inputs, std::vector<float>* logits);

  // Bytes of weights a batch-1 decode step reads: every matrix a token touches (one embedding
  // row, the k routed experts it is sent to per MoE layer, all the rest in full).
  uint64_t DecodeWeightBytesPerToken() const;
  // Multiply-adds ×2 of the weight products per token (what prefill FLOP/s is counted from;
  // attention and the KDA recurrence are not included).
  uint64_t MatmulFlopsPerToken() const;

  // The weight files this model computes with in place (every shard of its directory), for
  // checks that the bytes served are still the bytes that were verified. The pointers stay
  // valid as long as the Model.
  std::vector<MappedWeightFile> MappedWeights() const;

  // What Load decided about NUMA placement, one line per decision (also logged at start).
  const std::vector<std::string>& PlacementDecisions() const;

  class Impl;

 private:
  explicit Model(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace kimi
