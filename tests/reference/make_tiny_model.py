#!/usr/bin/env python3
"""Writes a tiny random-weight Kimi K3 model directory for testing the reference.

The layout follows the published checkpoint (see /work/notes/k3-tensors.md and
docs/engine.md): a `kimi_k3` config.json with `text_config`, safetensors shards with a
model.safetensors.index.json, `language_model.` tensor names, BF16 weights, F32 KDA
conv/A_log/dt_bias/o_norm and router bias, and routed experts in compressed-tensors
mxfp4-pack-quantized form (U8 weight_packed + U8 E8M0 weight_scale).

Sizes are tiny but exercise every path: KDA and MLA layers, a dense layer 0, latent MoE with
shared experts, attention-residual blocks that close inside the stack, MXFP4 with two scale
blocks per row, and A_log stored longer than the head count (as in the published file).
"""

import argparse
import json
import os
import struct

import numpy as np

TEXT_PREFIX = "language_model."


def tiny_text_config(full_rank_gate=True, block_size=3):
    kda = [1, 2, 3, 5, 6]
    full = [4, 7]
    return {
        "model_type": "kimi_linear",
        "dtype": "bfloat16",
        "vocab_size": 320,
        "hidden_size": 64,
        "num_hidden_layers": 7,
        "intermediate_size": 96,
        "rms_norm_eps": 1e-5,
        "hidden_act": "situ",
        "activation_situ_beta": 4.0,
        "activation_situ_linear_beta": 25.0,
        "num_attention_heads": 2,
        "num_key_value_heads": 2,
        "q_lora_rank": 32,
        "kv_lora_rank": 24,
        "qk_nope_head_dim": 16,
        "qk_rope_head_dim": 8,
        "v_head_dim": 16,
        "mla_use_nope": True,
        "mla_use_output_gate": True,
        "linear_attn_config": {
            "kda_layers": kda,
            "full_attn_layers": full,
            "num_heads": 2,
            "head_dim": 16,
            "short_conv_kernel_size": 4,
            "gate_lower_bound": -5.0,
            "use_full_rank_gate": full_rank_gate,
        },
        "first_k_dense_replace": 1,
        "moe_layer_freq": 1,
        "num_experts": 8,
        "num_experts_per_token": 3,
        "num_shared_experts": 2,
        "moe_intermediate_size": 32,
        "routed_expert_hidden_size": 64,
        "latent_moe_use_norm": True,
        "moe_router_activation_func": "sigmoid",
        "moe_renormalize": True,
        "routed_scaling_factor": 2.5,
        "topk_method": "noaux_tc",
        "use_grouped_topk": True,
        "num_expert_group": 1,
        "topk_group": 1,
        "attn_res_block_size": block_size,
        "tie_word_embeddings": False,
        "max_position_embeddings": 4096,
        "quantization_config": {
            "quant_method": "compressed-tensors",
            "format": "mxfp4-pack-quantized",
            "quantization_status": "compressed",
            "config_groups": {"group_0": {
                "format": "mxfp4-pack-quantized",
                "targets": ["Linear"],
                "weights": {"num_bits": 4, "group_size": 32, "type": "float",
                            "strategy": "group", "symmetric": True,
                            "scale_dtype": "torch.uint8"}}},
            "ignore": ["re:.*self_attn.*", "re:.*shared_experts.*",
                       "re:.*mlp\\.(gate|up|gate_up|down)_proj.*", "re:.*lm_head.*",
                       "re:.*vision_tower.*", "re:.*mm_projector.*"],
        },
    }


def float32_to_bf16_bits(x):
    """Round-to-nearest-even float32 -> BF16 bit patterns (uint16)."""
    bits = np.asarray(x, dtype=np.float32).view(np.uint32).astype(np.uint64)
    rounded = (bits + 0x7FFF + ((bits >> 16) & 1)) >> 16
    return rounded.astype(np.uint16)


class TensorSet:
    """Collects named tensors as (safetensors dtype, numpy array of the stored bytes)."""

    def __init__(self, rng, prefix):
        self.rng, self.prefix, self.tensors = rng, prefix, {}

    def put(self, name, dtype, array):
        self.tensors[self.prefix + name] = (dtype, np.ascontiguousarray(array))

    def bf16(self, name, values):
        self.put(name, "BF16", float32_to_bf16_bits(values))

    def f32(self, name, values):
        self.put(name, "F32", np.asarray(values, dtype="<f4"))

    def linear(self, name, out_dim, in_dim, gain=1.0):
        self.bf16(name, self.rng.normal(0.0, gain / np.sqrt(in_dim), (out_dim, in_dim)))

    def norm(self, name, dim):
        self.bf16(name, 1.0 + self.rng.normal(0.0, 0.1, dim))

    def mxfp4(self, name, out_dim, in_dim):
        """Random E2M1 codes (both signs) with per-32 E8M0 scales near 2^-4 / 2^-5."""
        codes = self.rng.integers(0, 16, (out_dim, in_dim), dtype=np.uint8)
        packed = (codes[:, 0::2] | (codes[:, 1::2] << 4)).astype(np.uint8)
        scale = self.rng.integers(122, 124, (out_dim, in_dim // 32), dtype=np.uint8)
        self.put(name + ".weight_packed", "U8", packed)
        self.put(name + ".weight_scale", "U8", scale)


def build_tensors(cfg, rng, prefix, a_log_extra):
    t = TensorSet(rng, prefix)
    D, V = cfg["hidden_size"], cfg["vocab_size"]
    lac = cfg["linear_attn_config"]
    H, d, K = lac["num_heads"], lac["head_dim"], lac["short_conv_kernel_size"]
    P = H * d
    Hm, dn, dr, dv = (cfg["num_attention_heads"], cfg["qk_nope_head_dim"],
                      cfg["qk_rope_head_dim"], cfg["v_head_dim"])
    rq, rc = cfg["q_lora_rank"], cfg["kv_lora_rank"]
    E, F, Dl, Ns = (cfg["num_experts"], cfg["moe_intermediate_size"],
                    cfg["routed_expert_hidden_size"], cfg["num_shared_experts"])

    t.bf16("model.embed_tokens.weight", rng.normal(0.0, 1.0, (V, D)))
    for i in range(cfg["num_hidden_layers"]):
        p = f"model.layers.{i}"
        t.norm(f"{p}.input_layernorm.weight", D)
        t.norm(f"{p}.post_attention_layernorm.weight", D)
        t.norm(f"{p}.self_attention_res_norm.weight", D)
        t.linear(f"{p}.self_attention_res_proj.weight", 1, D, gain=4.0)
        t.norm(f"{p}.mlp_res_norm.weight", D)
        t.linear(f"{p}.mlp_res_proj.weight", 1, D, gain=4.0)
        a = f"{p}.self_attn"
        if (i + 1) in lac["kda_layers"]:
            for part in "qkv":
                t.linear(f"{a}.{part}_proj.weight", P, D)
                t.f32(f"{a}.{part}_conv1d.weight", rng.normal(0.0, 0.5, (P, 1, K)))
            # Drawn at a fixed length so the padding does not shift the random stream.
            a_log = np.log(rng.uniform(1.0, 16.0, H + 2))
            t.f32(f"{a}.A_log", a_log[: H + a_log_extra])
            t.f32(f"{a}.dt_bias", rng.normal(0.0, 0.5, P))
            t.linear(f"{a}.f_a_proj.weight", d, D)
            t.linear(f"{a}.f_b_proj.weight", P, d)
            t.linear(f"{a}.b_proj.weight", H, D)
            if lac["use_full_rank_gate"]:
                t.linear(f"{a}.g_proj.weight", P, D)
            else:
                t.linear(f"{a}.g_a_proj.weight", d, D)
                t.linear(f"{a}.g_b_proj.weight", P, d)
            t.f32(f"{a}.o_norm.weight", 1.0 + rng.normal(0.0, 0.1, d))
            t.linear(f"{a}.o_proj.weight", D, P)
        else:
            t.linear(f"{a}.q_a_proj.weight", rq, D)
            t.norm(f"{a}.q_a_layernorm.weight", rq)
            t.linear(f"{a}.q_b_proj.weight", Hm * (dn + dr), rq, gain=2.0)
            t.linear(f"{a}.kv_a_proj_with_mqa.weight", rc + dr, D)
            t.norm(f"{a}.kv_a_layernorm.weight", rc)
            t.linear(f"{a}.kv_b_proj.weight", Hm * (dn + dv), rc, gain=2.0)
            t.linear(f"{a}.g_proj.weight", Hm * dv, D)
            t.linear(f"{a}.o_proj.weight", D, Hm * dv)
        if i < cfg["first_k_dense_replace"]:
            I = cfg["intermediate_size"]
            t.linear(f"{p}.mlp.gate_proj.weight", I, D, gain=2.0)
            t.linear(f"{p}.mlp.up_proj.weight", I, D, gain=2.0)
            t.linear(f"{p}.mlp.down_proj.weight", D, I)
        else:
            m = f"{p}.block_sparse_moe"
            t.linear(f"{m}.gate.weight", E, D, gain=2.0)
            t.f32(f"{m}.gate.e_score_correction_bias", rng.normal(0.0, 0.1, E))
            for e in range(E):
                t.mxfp4(f"{m}.experts.{e}.w1", F, Dl)
                t.mxfp4(f"{m}.experts.{e}.w3", F, Dl)
                t.mxfp4(f"{m}.experts.{e}.w2", Dl, F)
            t.linear(f"{m}.shared_experts.gate_proj.weight", Ns * F, D, gain=2.0)
            t.linear(f"{m}.shared_experts.up_proj.weight", Ns * F, D, gain=2.0)
            t.linear(f"{m}.shared_experts.down_proj.weight", D, Ns * F)
            t.linear(f"{m}.routed_expert_down_proj.weight", Dl, D)
            t.linear(f"{m}.routed_expert_up_proj.weight", D, Dl)
            t.norm(f"{m}.routed_expert_norm.weight", Dl)
    t.norm("model.norm.weight", D)
    t.norm("model.output_attn_res_norm.weight", D)
    t.linear("model.output_attn_res_proj.weight", 1, D, gain=4.0)
    t.linear("lm_head.weight", V, D)
    return t.tensors


def write_safetensors(path, tensors):
    """8-byte little-endian header length, JSON header (padded to 8 bytes), data."""
    header, offset, chunks = {}, 0, []
    for name in sorted(tensors):
        dtype, array = tensors[name]
        raw = array.astype(array.dtype.newbyteorder("<"), copy=False).tobytes()
        header[name] = {"dtype": dtype, "shape": list(array.shape),
                        "data_offsets": [offset, offset + len(raw)]}
        chunks.append(raw)
        offset += len(raw)
    header["__metadata__"] = {"format": "pt"}
    blob = json.dumps(header, separators=(",", ":")).encode()
    blob += b" " * (-len(blob) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(blob)))
        f.write(blob)
        for raw in chunks:
            f.write(raw)
    return offset


def write_model(out_dir, seed=0, shards=2, prefix=TEXT_PREFIX, a_log_extra=2,
                full_rank_gate=True, block_size=3):
    os.makedirs(out_dir, exist_ok=True)
    text = tiny_text_config(full_rank_gate=full_rank_gate, block_size=block_size)
    config = {"architectures": ["KimiK3ForConditionalGeneration"], "model_type": "kimi_k3",
              "text_config": text}
    with open(os.path.join(out_dir, "config.json"), "w") as f:
        json.dump(config, f, indent=2)
    tensors = build_tensors(text, np.random.default_rng(seed), prefix, a_log_extra)
    names = sorted(tensors)
    per_shard = (len(names) + shards - 1) // shards
    weight_map, total = {}, 0
    for s in range(shards):
        file_name = f"model-{s + 1:05d}-of-{shards:05d}.safetensors"
        part = {n: tensors[n] for n in names[s * per_shard: (s + 1) * per_shard]}
        total += write_safetensors(os.path.join(out_dir, file_name), part)
        weight_map.update({n: file_name for n in part})
    with open(os.path.join(out_dir, "model.safetensors.index.json"), "w") as f:
        json.dump({"metadata": {"total_size": total}, "weight_map": weight_map}, f, indent=2)
    return out_dir


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", required=True)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--shards", type=int, default=2)
    ap.add_argument("--no-prefix", action="store_true", help="omit the language_model. prefix")
    ap.add_argument("--low-rank-gate", action="store_true", help="KDA g_a/g_b instead of g_proj")
    args = ap.parse_args()
    write_model(args.out, args.seed, args.shards, "" if args.no_prefix else TEXT_PREFIX,
                full_rank_gate=not args.low_rank_gate)
    print(args.out)


if __name__ == "__main__":
    main()
