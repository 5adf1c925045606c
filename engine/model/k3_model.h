// Internal structure of the K3 model: every weight in named structs (shapes in comments), the
// activations of one forward pass, and the pass itself. kimi/model.h is the public face.
//
// Owns: the ModelDir (the mapping every weight view points into), the thread pool, scratch.
// Thread safety: Forward is called under Model's mutex; the weights are immutable after Load.
#pragma once

#include <memory>
#include <mutex>
#include <vector>

#include "core/numa_placement.h"
#include "core/thread_pool.h"
#include "kimi/model.h"
#include "kimi/model_dir.h"
#include "model/attn_residual.h"
#include "model/batch.h"
#include "model/kda.h"
#include "model/mla.h"
#include "model/moe.h"

namespace kimi::model {

struct LayerWeights {
  bool is_kda = false;
  bool is_moe = false;
  int slot = 0;                       // index among the layers of the same mixer kind
  std::vector<float> input_norm;      // [D]
  std::vector<float> post_norm;       // [D]
  AttnResWeights attn_res, mlp_res;   // when attn_res_block_size is set
  KdaWeights kda;                     // is_kda
  MlaWeights mla;                     // !is_kda
  SituMlpWeights mlp;                 // !is_moe: dense MLP of width I
  MoeWeights moe;                     // is_moe
};

struct ModelWeights {
  Bf16Matrix embed;                   // [V, D]
  std::vector<LayerWeights> layers;   // [L]
  AttnResWeights output_res;          // when attn_res_block_size is set
  std::vector<float> final_norm;      // [D]
  Bf16Matrix lm_head;                 // [V, D] (= embed when tied)
};

// Activations of one pass over R rows.
struct Activations {
  std::vector<float> partial;              // [R, D] residual stream: the current block's partial sum
  std::vector<float> mixed;                // [R, D] the depth mixture feeding a sub-layer
  std::vector<float> normed;               // [R, D] the sub-layer's normalised input
  std::vector<float> out;                  // [R, D] the sub-layer's output
  std::vector<std::vector<float>> blocks;  // block snapshots, each [R, D]
  std::vector<float> head_in;              // [rows with logits, D]
  KdaScratch kda;
  MlaScratch mla;
  FfnScratch ffn;
};

}  // namespace kimi::model

namespace kimi {

class Model::Impl {
 public:
  Status Bind();
  // Reads the NUMA topology, plans and applies the placement, and logs each decision.
  void PlaceForNuma();
  // Runs one pass; `logit_rows` lists the rows whose logits go to `logits` ([n × V]).
  void Forward(std::span<const int32_t> tokens, model::Segments segments, std::span<const int64_t> logit_rows,
               float* logits);

  std::unique_ptr<ModelDir> dir;
  K3Config config;
  ModelOptions options;
  std::unique_ptr<ThreadPool> pool;
  NumaPlan numa;  // the experts' pointers to it stay valid: Impl does not move
  model::ModelWeights weights;
  model::OwnedWeights owned;  // realigned copies and int8 scales (WeightBinder)
  int num_kda = 0, num_mla = 0;

  std::mutex mu;  // one forward pass at a time
  model::Activations act;  // GUARDED_BY(mu)
};

}  // namespace kimi
