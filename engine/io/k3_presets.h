// Named Kimi K3 configurations for synthetic models: `k3-nano` (a few million parameters, for
// unit tests), `k3-mini` (a few hundred million, for demos and benchmarks), `k3-wide` (one
// decoder layer at the published widths, 16 GiB at most, so kernels are measured at the real
// shapes) and `k3-full-shape` (the published Kimi K3 config itself). nano and mini keep every
// structural feature of the published model (KDA and MLA layers, one dense layer, latent MoE
// with shared experts, SiTU, attention residuals, MXFP4 experts) at small widths.
//
// Their vocabulary (and k3-wide's) is 4096 ordinary ids followed by K3's 256 special ids at the same relative
// positions: published special id 163584+k becomes 4096+k (so [BOS] 4096, <|im_end|> 4098,
// [PAD] 4351).
//
// Thread safety: pure functions.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "kimi/config.h"
#include "kimi/status.h"

namespace kimi {

inline constexpr int64_t kK3SpecialTokenBase = 163584;
inline constexpr int64_t kK3SpecialTokenCount = 256;
inline constexpr int64_t kTinyOrdinaryVocab = 4096;
// What k3-wide's weights may take on disk: as many published-width layers as fit.
inline constexpr uint64_t kK3WideBudgetBytes = 16ull << 30;

Result<K3Config> K3Preset(std::string_view name);
// Gives c a vocabulary of `ordinary_tokens` ranks followed by K3's 256 special ids, with
// [BOS], <|end_of_msg|> and [PAD] at their K3 offsets. `kimi-engine synth --tokenizer` uses it
// to give k3-nano and k3-mini Kimi's real 163,840-id vocabulary.
void SetK3Vocabulary(K3Config& c, int64_t ordinary_tokens);
std::vector<std::string> K3PresetNames();
// Whether the preset is written as config and index only (no tensor data).
bool K3PresetIsShapeOnly(std::string_view name);

}  // namespace kimi
