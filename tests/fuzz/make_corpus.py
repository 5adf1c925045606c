#!/usr/bin/env python3
"""Writes the hand-made corpus of tests/fuzz/corpus: two valid safetensors images (good_*) and
one file per kind of damage (bad_*). Re-run to regenerate; the files are committed."""
import json
import os
import struct

HERE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "corpus")


def image(header, data, length=None):
    text = header if isinstance(header, bytes) else json.dumps(header).encode()
    return struct.pack("<Q", len(text) if length is None else length) + text + data


def t(dtype, shape, begin, end):
    return {"dtype": dtype, "shape": shape, "data_offsets": [begin, end]}


FILES = {
    "good_two_tensors.safetensors": image(
        {"__metadata__": {"format": "pt"}, "a": t("BF16", [2, 2], 0, 8), "b": t("F32", [3], 8, 20)}, bytes(20)),
    "good_mxfp4_expert.safetensors": image(
        {"e.weight_packed": t("U8", [4, 16], 0, 64), "e.weight_scale": t("U8", [4, 1], 64, 68)}, bytes(68)),
    "bad_short_length.safetensors": b"\x05\x00\x00",
    "bad_empty.safetensors": b"",
    "bad_length_past_eof.safetensors": image({"a": t("U8", [1], 0, 1)}, b"\x00", length=4096),
    "bad_truncated_header.safetensors": image({"a": t("F32", [4], 0, 16)}, b"")[:20],
    "bad_invalid_json.safetensors": image(b'{"a": {"dtype": "F32", "shape": [1], ', b"\x00" * 4),
    "bad_not_object.safetensors": image(b"[1, 2, 3]", b""),
    "bad_deep_nesting.safetensors": image(b"[" * 5000 + b"]" * 5000, b""),
    "bad_offsets_past_end.safetensors": image({"a": t("F32", [4], 0, 16)}, bytes(8)),
    "bad_overlap.safetensors": image({"a": t("F32", [4], 0, 16), "b": t("F32", [2], 8, 16)}, bytes(16)),
    "bad_gap.safetensors": image({"a": t("U8", [4], 4, 8)}, bytes(8)),
    "bad_dtype.safetensors": image({"a": t("Q4_K", [4], 0, 4)}, bytes(4)),
    "bad_shape_bytes.safetensors": image({"a": t("BF16", [3, 3], 0, 16)}, bytes(16)),
    "bad_negative_dim.safetensors": image({"a": t("BF16", [-2, 4], 0, 16)}, bytes(16)),
    "bad_shape_overflow.safetensors": image({"a": t("F64", [2**32, 2**32, 16], 0, 8)}, bytes(8)),
    "bad_offsets_backwards.safetensors": image({"a": t("U8", [2], 2, 0)}, bytes(2)),
    "bad_huge_offset.safetensors": image({"a": t("U8", [1], 2**64 - 2, 2**64 - 1)}, bytes(1)),
    "bad_metadata.safetensors": image({"__metadata__": {"k": 1}}, b""),
    "bad_trailing_bytes.safetensors": image({"a": t("U8", [2], 0, 2)}, bytes(6)),
}

# Seeds for the JSON parsers that share the entry point (config.json, the index). Neither good_
# nor bad_: the replay test only runs them.
TEXT_CONFIG = {
    "model_type": "kimi_linear", "hidden_size": 128, "num_hidden_layers": 2, "vocab_size": 4352,
    "rms_norm_eps": 1e-5, "num_attention_heads": 2, "kv_lora_rank": 64, "q_lora_rank": 96,
    "qk_nope_head_dim": 32, "qk_rope_head_dim": 16, "v_head_dim": 32, "mla_use_output_gate": True,
    "intermediate_size": 384, "num_experts": 4, "num_experts_per_token": 2, "num_shared_experts": 2,
    "moe_intermediate_size": 96, "routed_expert_hidden_size": 64, "latent_moe_use_norm": True,
    "first_k_dense_replace": 1, "hidden_act": "situ", "activation_situ_beta": 4.0,
    "activation_situ_linear_beta": 25.0, "attn_res_block_size": 2,
    "linear_attn_config": {"kda_layers": [1], "full_attn_layers": [2], "num_heads": 2, "head_dim": 32,
                           "short_conv_kernel_size": 4, "gate_lower_bound": -5.0, "use_full_rank_gate": True},
    "quantization_config": {"quant_method": "compressed-tensors", "format": "mxfp4-pack-quantized",
                            "config_groups": {"group_0": {"weights": {"num_bits": 4, "group_size": 32}}}},
}
FILES["seed_config.json"] = json.dumps({"model_type": "kimi_k3", "text_config": TEXT_CONFIG}).encode()
FILES["seed_index.json"] = json.dumps({
    "metadata": {"total_size": 68},
    "weight_map": {"language_model.model.norm.weight": "model-00001-of-00002.safetensors",
                   "language_model.lm_head.weight": "model-00002-of-00002.safetensors"},
    "tensor_specs": {"language_model.model.norm.weight": {"dtype": "BF16", "shape": [128]}},
}).encode()

os.makedirs(HERE, exist_ok=True)
for name, data in FILES.items():
    with open(os.path.join(HERE, name), "wb") as f:
        f.write(data)
