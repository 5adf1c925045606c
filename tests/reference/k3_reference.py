#!/usr/bin/env python3
"""Independent reference of the Kimi K3 forward pass, written from docs/engine.md.

It reads a model directory (config.json + safetensors shards, BF16/F32 weights and
compressed-tensors MXFP4 routed experts) and computes logits for token ids, in one of
three modes:

  prefill   all tokens in one pass (KDA by the recurrence, or --kda chunked)
  decode    one token at a time with per-layer state (MLA latent cache, KDA state + conv state)
  generate  prefill the prompt, then greedy decode --max-tokens ids and print them

Numerics: every weight is converted exactly (BF16, F32 and MXFP4 are all exactly representable)
to float64, and every activation is kept in float64; nothing is rounded to BF16 between ops.
Only the logits written to --out are rounded to float32. The reference is therefore the
"infinite precision" answer an engine computing in float32 should approach. `--precision
float32` runs the same code with float32 weights and activations instead; its distance to the
float64 run measures what float32 arithmetic alone costs, which sizes engine tolerances.

It is meant for small models (k3-nano): weights are cached in float64.
Dependencies: numpy and the standard library only.
"""

import argparse
import json
import os
import struct
import sys

import numpy as np

# ----------------------------------------------------------------------------------------------
# safetensors and dtypes
# ----------------------------------------------------------------------------------------------

TEXT_PREFIX = "language_model."

E2M1_VALUES = np.array([0.0, 0.5, 1.0, 1.5, 2.0, 3.0, 4.0, 6.0,
                        -0.0, -0.5, -1.0, -1.5, -2.0, -3.0, -4.0, -6.0], dtype=np.float64)
MXFP4_BLOCK = 32

_NUMPY_DTYPES = {
    "F64": np.dtype("<f8"), "F32": np.dtype("<f4"), "F16": np.dtype("<f2"),
    "I64": np.dtype("<i8"), "I32": np.dtype("<i4"), "I16": np.dtype("<i2"), "I8": np.dtype("i1"),
    "U8": np.dtype("u1"), "BOOL": np.dtype("u1"), "BF16": np.dtype("<u2"),
}


def bf16_bits_to_float64(bits):
    """BF16 is the top half of an IEEE float32: shift the 16 bits up and reinterpret."""
    return (bits.astype(np.uint32) << 16).view(np.float32).astype(np.float64)


def mxfp4_dequantize(packed, scale):
    """compressed-tensors mxfp4-pack-quantized -> float64 [out, in].

    packed: uint8 [out, in/2], the even element in the low nibble.
    scale:  uint8 [out, in/32], E8M0 biased exponent e: block value = E2M1(nibble) * 2^(e-127).
    """
    out_dim, half = packed.shape
    codes = np.empty((out_dim, 2 * half), dtype=np.uint8)
    codes[:, 0::2] = packed & 0x0F
    codes[:, 1::2] = packed >> 4
    values = E2M1_VALUES[codes]
    exponents = scale.astype(np.int64) - 127
    block_scale = np.ldexp(1.0, exponents).astype(np.float64)
    block_scale[scale == 255] = np.nan
    return values * np.repeat(block_scale, MXFP4_BLOCK, axis=1)


def int8_dequantize(packed, scale, scale_dtype, shape):
    """compressed-tensors pack-quantized, 8 bits, per output channel -> float64 [out, in].

    packed: int32 [out, in/4], element 4j+i of a row in bits 8i..8i+7 of word j as q + 128.
    scale:  [out, 1] F32 or BF16.  shape: int32 [2] = [out, in].
    """
    out_dim, words = packed.shape
    if tuple(int(v) for v in shape) != (out_dim, 4 * words):
        raise ValueError(f"weight_shape {list(shape)} does not match weight_packed {list(packed.shape)}")
    codes = np.stack([(packed.astype(np.int64) >> (8 * i)) & 0xFF for i in range(4)], axis=2).reshape(out_dim, 4 * words)
    scale = bf16_bits_to_float64(scale) if scale_dtype == "BF16" else scale.astype(np.float64)
    return (codes - 128).astype(np.float64) * scale.reshape(out_dim, 1)


class SafetensorsFile:
    """One .safetensors file: 8-byte little-endian header length, JSON header, raw data."""

    def __init__(self, path):
        self.path = path
        with open(path, "rb") as f:
            (header_len,) = struct.unpack("<Q", f.read(8))
            self.header = json.loads(f.read(header_len))
        self.data_start = 8 + header_len
        self.header.pop("__metadata__", None)

    def names(self):
        return list(self.header.keys())

    def raw(self, name):
        """The tensor as stored (BF16 as uint16 bits)."""
        info = self.header[name]
        dtype = _NUMPY_DTYPES[info["dtype"]]
        begin, end = info["data_offsets"]
        count = int(np.prod(info["shape"])) if info["shape"] else 1
        if end - begin != count * dtype.itemsize:
            raise ValueError(f"{self.path}: tensor {name}: byte size does not match shape")
        with open(self.path, "rb") as f:
            f.seek(self.data_start + begin)
            buf = f.read(end - begin)
        return np.frombuffer(buf, dtype=dtype).reshape(info["shape"]), info["dtype"]


def canonical_name(name):
    """Strip the published `language_model.` prefix and map the legacy residual spelling."""
    if name.startswith(TEXT_PREFIX):
        name = name[len(TEXT_PREFIX):]
    for stem in ("self_attention_res", "mlp_res", "output_attn_res"):
        for old, new in (("proj_weight", "_proj.weight"), ("norm_weight", "_norm.weight")):
            if name.endswith(f"{stem}.{old}"):
                return name[: -len(f"{stem}.{old}")] + stem + new
    return name


class Checkpoint:
    """All shards of a model directory, addressed by canonical tensor name."""

    def __init__(self, model_dir, dtype=np.float64):
        self.dtype = dtype
        index_path = os.path.join(model_dir, "model.safetensors.index.json")
        if os.path.exists(index_path):
            with open(index_path) as f:
                files = sorted(set(json.load(f)["weight_map"].values()))
        else:
            files = sorted(p for p in os.listdir(model_dir) if p.endswith(".safetensors"))
        if not files:
            raise FileNotFoundError(f"{model_dir}: no safetensors files")
        self.location = {}
        for file_name in files:
            shard = SafetensorsFile(os.path.join(model_dir, file_name))
            for name in shard.names():
                self.location[canonical_name(name)] = (shard, name)
        self._cache = {}

    def has(self, name):
        return name in self.location

    def raw(self, name):
        if name not in self.location:
            raise KeyError(f"missing tensor {name}")
        shard, stored_name = self.location[name]
        return shard.raw(stored_name)

    def get(self, name):
        """A BF16/F32/F16/F64 tensor in the compute dtype (cached). A `.weight` that the
        directory stores quantised (`kimi-engine quantize`) is dequantised (get_linear)."""
        if name not in self.location and name.endswith(".weight") and self.has(name[:-len("weight")] + "weight_packed"):
            return self.get_linear(name[:-len(".weight")])
        if name not in self._cache:
            array, dtype = self.raw(name)
            if dtype == "BF16":
                array = bf16_bits_to_float64(array)
            elif dtype in ("F32", "F16", "F64"):
                array = array.astype(np.float64)
            else:
                raise ValueError(f"tensor {name}: dtype {dtype} is not a float type")
            self._cache[name] = array.astype(self.dtype)
        return self._cache[name]

    def get_linear(self, prefix):
        """A linear weight [out, in]: `prefix.weight` (BF16), MXFP4 planes (U8 weight_packed and
        weight_scale), or compressed-tensors pack-quantized int8 (I32 weight_packed holding
        q + 128 per byte, weight_scale [out, 1], weight_shape)."""
        if self.has(prefix + ".weight"):
            return self.get(prefix + ".weight")
        key = prefix + ".weight_packed"
        if key not in self._cache:
            packed, packed_dtype = self.raw(prefix + ".weight_packed")
            scale, scale_dtype = self.raw(prefix + ".weight_scale")
            if packed_dtype == "I32":
                self._cache[key] = int8_dequantize(packed, scale, scale_dtype,
                                                   self.raw(prefix + ".weight_shape")[0]).astype(self.dtype)
                return self._cache[key]
            if packed_dtype != "U8" or scale_dtype != "U8":
                raise ValueError(f"{prefix}: mxfp4 planes must be U8")
            if scale.shape != (packed.shape[0], 2 * packed.shape[1] // MXFP4_BLOCK):
                raise ValueError(f"{prefix}: weight_scale shape does not match weight_packed")
            self._cache[key] = mxfp4_dequantize(packed, scale).astype(self.dtype)
        return self._cache[key]


# ----------------------------------------------------------------------------------------------
# config
# ----------------------------------------------------------------------------------------------

class Config:
    """The text config (text_config when present, else the top level)."""

    def __init__(self, raw):
        text = raw.get("text_config", raw)
        self.raw = text
        self.vocab_size = text["vocab_size"]
        self.hidden_size = text["hidden_size"]
        self.num_layers = text["num_hidden_layers"]
        self.intermediate_size = text["intermediate_size"]
        self.eps = float(text.get("rms_norm_eps", 1e-5))
        if text.get("hidden_act", "situ") != "situ":
            raise ValueError(f"unsupported hidden_act {text.get('hidden_act')}")
        self.situ_beta = float(text.get("activation_situ_beta") or 1.0)
        linear_beta = text.get("activation_situ_linear_beta")
        self.situ_linear_beta = float(linear_beta) if linear_beta is not None else None
        self.attn_res_block_size = text.get("attn_res_block_size")
        self.tie_word_embeddings = bool(text.get("tie_word_embeddings", False))

        lac = text["linear_attn_config"]
        self.kda_layers = {int(i) - 1 for i in lac.get("kda_layers", [])}  # 1-based in the file
        self.kda_heads = lac["num_heads"]
        self.kda_head_dim = lac["head_dim"]
        self.conv_size = lac["short_conv_kernel_size"]
        self.gate_lower_bound = lac.get("gate_lower_bound")
        self.full_rank_gate = bool(lac.get("use_full_rank_gate", False))

        self.mla_heads = text["num_attention_heads"]
        self.q_lora_rank = text.get("q_lora_rank")
        self.kv_lora_rank = text["kv_lora_rank"]
        self.qk_nope_dim = text["qk_nope_head_dim"]
        self.qk_rope_dim = text["qk_rope_head_dim"]
        self.v_head_dim = text["v_head_dim"]
        self.mla_output_gate = bool(text.get("mla_use_output_gate", False))
        if not text.get("mla_use_nope", True):
            raise ValueError("only NoPE MLA (mla_use_nope = true) is specified")

        self.num_experts = text.get("num_experts") or 0
        self.top_k = text.get("num_experts_per_token", 1)
        self.num_shared_experts = text.get("num_shared_experts", 0) or 0
        self.moe_intermediate_size = text.get("moe_intermediate_size")
        self.latent_size = text.get("routed_expert_hidden_size")
        self.latent_norm = bool(text.get("latent_moe_use_norm", False))
        self.renormalize = bool(text.get("moe_renormalize", True))
        self.routed_scaling_factor = float(text.get("routed_scaling_factor", 1.0))
        self.first_k_dense = text.get("first_k_dense_replace", 0)
        self.moe_layer_freq = text.get("moe_layer_freq", 1)
        self.num_expert_group = text.get("num_expert_group", 1) or 1
        self.topk_group = text.get("topk_group", 1) or 1
        if text.get("moe_router_activation_func", "sigmoid") != "sigmoid":
            raise ValueError("only the sigmoid router is specified")

    def is_kda(self, layer):
        return layer in self.kda_layers

    def is_moe(self, layer):
        return (self.num_experts > 0 and layer >= self.first_k_dense
                and layer % self.moe_layer_freq == 0)

    @staticmethod
    def load(model_dir):
        with open(os.path.join(model_dir, "config.json")) as f:
            return Config(json.load(f))


# ----------------------------------------------------------------------------------------------
# elementwise math (float64)
# ----------------------------------------------------------------------------------------------

def sigmoid(x):
    return 0.5 * (1.0 + np.tanh(0.5 * x))  # overflow-free logistic


def silu(x):
    return x * sigmoid(x)


def rms_norm(x, weight, eps):
    """x / sqrt(mean(x^2) + eps) * weight, over the last axis."""
    return x / np.sqrt(np.mean(x * x, axis=-1, keepdims=True) + eps) * weight


def l2_normalize(x, eps=1e-6):
    """x * rsqrt(sum(x^2) + eps), over the last axis."""
    return x / np.sqrt(np.sum(x * x, axis=-1, keepdims=True) + eps)


def softmax(x, axis=-1):
    z = x - np.max(x, axis=axis, keepdims=True)
    e = np.exp(z)
    return e / np.sum(e, axis=axis, keepdims=True)


def situ(gate, up, beta, linear_beta):
    """SiTU: beta*tanh(g/beta)*sigmoid(g) * linear_beta*tanh(u/linear_beta)."""
    a = beta * np.tanh(gate / beta) * sigmoid(gate)
    if linear_beta is not None:
        up = linear_beta * np.tanh(up / linear_beta)
    return a * up


# ----------------------------------------------------------------------------------------------
# attention residuals
# ----------------------------------------------------------------------------------------------

def attn_res_mix(blocks, partial, norm_weight, proj_weight, eps):
    """Softmax over depth: candidates are the block snapshots and the running partial sum.

    Each candidate v gets the logit  proj . RMSNorm(v; norm_weight)
                                   = (v . (norm_weight * proj)) / sqrt(mean(v^2) + eps);
    the result is the softmax-weighted sum of the raw candidates. With no snapshots the
    partial sum passes through unchanged.
    """
    if not blocks:
        return partial
    candidates = np.stack(blocks + [partial])          # [n+1, N, D]
    w = norm_weight * proj_weight.reshape(-1)            # [D]
    logits = (candidates @ w) / np.sqrt(np.mean(candidates * candidates, axis=-1) + eps)
    p = softmax(logits, axis=0)                           # [n+1, N]
    return np.einsum("jn,jnd->nd", p, candidates)


# ----------------------------------------------------------------------------------------------
# KDA (Kimi Delta Attention)
# ----------------------------------------------------------------------------------------------

def causal_conv(x, weight, history):
    """Depthwise causal conv of width K: out[t,c] = sum_j weight[c,j] * x[t-K+1+j, c].

    x [T, C], weight [C, K], history [K-1, C] (the K-1 inputs before x; zeros at the start).
    Returns (out [T, C], new history [K-1, C]).
    """
    width = weight.shape[1]
    padded = np.concatenate([history, x], axis=0)
    out = np.zeros_like(x)
    for j in range(width):
        out += padded[j: j + len(x)] * weight[:, j]
    return out, padded[len(padded) - (width - 1):]


def kda_recurrent(q, k, v, g, beta, state):
    """The KDA recurrence, token by token.

    q, k, g [T, H, d]; v [T, H, dv]; beta [T, H]; state S [H, d, dv] (key x value).
      S <- diag(exp g_t) S
      S <- S + beta_t k_t (v_t - S^T k_t)^T
      o_t = S^T q_t
    """
    out = np.zeros_like(v)
    for t in range(len(q)):
        state = state * np.exp(g[t])[:, :, None]
        recalled = np.einsum("hk,hkv->hv", k[t], state)
        state = state + np.einsum("hk,hv->hkv", beta[t][:, None] * k[t], v[t] - recalled)
        out[t] = np.einsum("hk,hkv->hv", q[t], state)
    return out, state


def kda_chunked(q, k, v, g, beta, state, chunk_size=64):
    """The same map computed chunk by chunk with the WY/UT transform (docs/engine.md).

    Within a chunk of n tokens, G = cumsum(g) and for s <= r the decay from s to r is
    exp(G_r - G_s) (never formed as exp(G_r) * exp(-G_s), which overflows).
      A[r,s]  = beta_r * sum_i k_r,i k_s,i exp(G_r,i - G_s,i)   for s < r, else 0
      T       = (I + A)^-1 diag(beta)
      W = T (K * exp(G)),  U = T V,  Delta = U - W S0
      O       = (Q * exp(G)) S0 + Aqk Delta,  Aqk[r,s] = sum_i q_r,i k_s,i exp(G_r,i - G_s,i), s <= r
      S_end   = diag(exp G_n) S0 + (K * exp(G_n - G))^T Delta
    """
    steps, heads, _ = q.shape
    out = np.zeros_like(v)
    state = state.copy()
    for start in range(0, steps, chunk_size):
        end = min(start + chunk_size, steps)
        n = end - start
        lower_strict = np.tril(np.ones((n, n), dtype=bool), -1)
        lower_incl = np.tril(np.ones((n, n), dtype=bool), 0)
        for h in range(heads):
            qc, kc, vc, bc = q[start:end, h], k[start:end, h], v[start:end, h], beta[start:end, h]
            G = np.cumsum(g[start:end, h], axis=0)                       # [n, d]
            diff = G[:, None, :] - G[None, :, :]                          # [r, s, d]
            decay = np.exp(np.where(lower_incl[:, :, None], diff, -np.inf))
            a = bc[:, None] * np.einsum("ri,si,rsi->rs", kc, kc, decay)
            a = np.where(lower_strict, a, 0.0)
            t_mat = np.linalg.solve(np.eye(n, dtype=a.dtype) + a, np.diag(bc))
            w = t_mat @ (kc * np.exp(G))
            u = t_mat @ vc
            delta = u - w @ state[h]
            a_qk = np.einsum("ri,si,rsi->rs", qc, kc, decay)
            out[start:end, h] = (qc * np.exp(G)) @ state[h] + a_qk @ delta
            state[h] = (np.exp(G[-1])[:, None] * state[h]
                        + (kc * np.exp(G[-1] - G)).T @ delta)
    return out, state


class KdaState:
    def __init__(self, cfg, dtype):
        p = cfg.kda_heads * cfg.kda_head_dim
        self.conv = np.zeros((3, cfg.conv_size - 1, p), dtype)  # q, k, v pre-conv history
        self.S = np.zeros((cfg.kda_heads, cfg.kda_head_dim, cfg.kda_head_dim), dtype)


class KdaLayer:
    def __init__(self, ckpt, cfg, prefix):
        self.cfg = cfg
        H, d = cfg.kda_heads, cfg.kda_head_dim
        self.H, self.d = H, d
        self.w_qkv = [ckpt.get(f"{prefix}.{p}_proj.weight") for p in "qkv"]          # [P, D]
        self.conv = [ckpt.get(f"{prefix}.{p}_conv1d.weight").reshape(H * d, -1) for p in "qkv"]
        self.a_log = ckpt.get(f"{prefix}.A_log").reshape(-1)[:H]                      # first H
        self.dt_bias = ckpt.get(f"{prefix}.dt_bias").reshape(H, d)
        self.f_a = ckpt.get(f"{prefix}.f_a_proj.weight")                              # [d, D]
        self.f_b = ckpt.get(f"{prefix}.f_b_proj.weight")                              # [P, d]
        self.b = ckpt.get(f"{prefix}.b_proj.weight")                                  # [H, D]
        if cfg.full_rank_gate:
            self.g = ckpt.get(f"{prefix}.g_proj.weight")                              # [P, D]
        else:
            self.g_a = ckpt.get(f"{prefix}.g_a_proj.weight")
            self.g_b = ckpt.get(f"{prefix}.g_b_proj.weight")
        self.o_norm = ckpt.get(f"{prefix}.o_norm.weight")                             # [d]
        self.o_proj = ckpt.get(f"{prefix}.o_proj.weight")                             # [D, P]

    def new_state(self):
        return KdaState(self.cfg, self.o_proj.dtype)

    def decay_log(self, f):
        """Per-channel log decay g (< 0) from f = f_b(f_a(x)), shape [T, H, d]."""
        z = f + self.dt_bias
        if self.cfg.gate_lower_bound is not None:
            return self.cfg.gate_lower_bound * sigmoid(np.exp(self.a_log)[:, None] * z)
        softplus = np.logaddexp(0.0, z)
        return -np.exp(self.a_log)[:, None] * softplus

    def __call__(self, x, state, opts):
        T, H, d = len(x), self.H, self.d
        qkv = []
        for i in range(3):
            pre = x @ self.w_qkv[i].T
            post, state.conv[i] = causal_conv(pre, self.conv[i], state.conv[i])
            qkv.append(silu(post).reshape(T, H, d))
        q, k, v = qkv
        q = l2_normalize(q) * d ** -0.5
        k = l2_normalize(k)
        g = self.decay_log(((x @ self.f_a.T) @ self.f_b.T).reshape(T, H, d))
        beta = sigmoid(x @ self.b.T)                                                  # [T, H]
        if opts.kda == "chunked" and T > 1:
            o, state.S = kda_chunked(q, k, v, g, beta, state.S, opts.chunk_size)
        else:
            o, state.S = kda_recurrent(q, k, v, g, beta, state.S)
        gate = x @ self.g.T if self.cfg.full_rank_gate else (x @ self.g_a.T) @ self.g_b.T
        o = rms_norm(o, self.o_norm, self.cfg.eps) * sigmoid(gate.reshape(T, H, d))
        return o.reshape(T, H * d) @ self.o_proj.T


# ----------------------------------------------------------------------------------------------
# Gated MLA (NoPE)
# ----------------------------------------------------------------------------------------------

MLA_NORM_EPS = 1e-6  # q_a_layernorm and kv_a_layernorm (see docs/engine.md on this choice)


class MlaState:
    def __init__(self, cfg, dtype):
        self.latent = np.zeros((0, cfg.kv_lora_rank), dtype)  # normalised c_kv per past token
        self.k_pe = np.zeros((0, cfg.qk_rope_dim), dtype)     # shared positional key per past token


class MlaLayer:
    def __init__(self, ckpt, cfg, prefix):
        self.cfg = cfg
        Hm, dn, dr, dv, rc = (cfg.mla_heads, cfg.qk_nope_dim, cfg.qk_rope_dim,
                              cfg.v_head_dim, cfg.kv_lora_rank)
        if cfg.q_lora_rank:
            self.q_a = ckpt.get(f"{prefix}.q_a_proj.weight")                          # [rq, D]
            self.q_a_norm = ckpt.get(f"{prefix}.q_a_layernorm.weight")
            self.q_b = ckpt.get(f"{prefix}.q_b_proj.weight")                          # [Hm(dn+dr), rq]
        else:
            self.q_proj = ckpt.get(f"{prefix}.q_proj.weight")
        self.kv_a = ckpt.get(f"{prefix}.kv_a_proj_with_mqa.weight")                   # [rc+dr, D]
        self.kv_a_norm = ckpt.get(f"{prefix}.kv_a_layernorm.weight")
        kv_b = ckpt.get(f"{prefix}.kv_b_proj.weight").reshape(Hm, dn + dv, rc)
        self.w_uk = kv_b[:, :dn, :]                                                   # [Hm, dn, rc]
        self.w_uv = kv_b[:, dn:, :]                                                   # [Hm, dv, rc]
        if cfg.mla_output_gate:
            self.g = ckpt.get(f"{prefix}.g_proj.weight")                              # [Hm dv, D]
        self.o_proj = ckpt.get(f"{prefix}.o_proj.weight")                             # [D, Hm dv]
        self.scale = (dn + dr) ** -0.5

    def new_state(self):
        return MlaState(self.cfg, self.o_proj.dtype)

    def __call__(self, x, state, opts):
        cfg = self.cfg
        T, Hm, dn, rc = len(x), cfg.mla_heads, cfg.qk_nope_dim, cfg.kv_lora_rank
        if cfg.q_lora_rank:
            q = rms_norm(x @ self.q_a.T, self.q_a_norm, MLA_NORM_EPS) @ self.q_b.T
        else:
            q = x @ self.q_proj.T
        q = q.reshape(T, Hm, -1)
        q_nope, q_pe = q[..., :dn], q[..., dn:]
        kv = x @ self.kv_a.T
        state.latent = np.concatenate([state.latent, rms_norm(kv[:, :rc], self.kv_a_norm, MLA_NORM_EPS)])
        state.k_pe = np.concatenate([state.k_pe, kv[:, rc:]])
        C, KPE = state.latent, state.k_pe
        past = len(C) - T
        visible = np.arange(len(C))[None, :] <= (past + np.arange(T))[:, None]       # [T, S]

        pe_scores = np.einsum("thr,sr->hts", q_pe, KPE)
        if opts.mla == "absorbed":
            q_latent = np.einsum("thn,hnc->thc", q_nope, self.w_uk)                  # W_UK^T q
            scores = (np.einsum("thc,sc->hts", q_latent, C) + pe_scores) * self.scale
            p = softmax(np.where(visible[None], scores, -np.inf))
            o_latent = np.einsum("hts,sc->thc", p, C)
            o = np.einsum("thc,hvc->thv", o_latent, self.w_uv)
        else:
            k_nope = np.einsum("sc,hnc->shn", C, self.w_uk)
            values = np.einsum("sc,hvc->shv", C, self.w_uv)
            scores = (np.einsum("thn,shn->hts", q_nope, k_nope) + pe_scores) * self.scale
            p = softmax(np.where(visible[None], scores, -np.inf))
            o = np.einsum("hts,shv->thv", p, values)
        o = o.reshape(T, -1)
        if cfg.mla_output_gate:
            o = o * sigmoid(x @ self.g.T)
        return o @ self.o_proj.T


# ----------------------------------------------------------------------------------------------
# MLP, latent MoE
# ----------------------------------------------------------------------------------------------

class SituMlp:
    def __init__(self, gate, up, down, cfg):
        self.gate, self.up, self.down, self.cfg = gate, up, down, cfg

    def __call__(self, x, opts=None):
        return situ(x @ self.gate.T, x @ self.up.T, self.cfg.situ_beta,
                    self.cfg.situ_linear_beta) @ self.down.T


def route(logits, bias, cfg, swapped_rows=(), margins=None):
    """Sigmoid scores; top-k chosen on score + bias; weights are the unbiased scores there.

    Rows in swapped_rows take the (k+1)-th choice in place of the k-th: the other side of a near
    tie (check_engine.py). margins, a list, receives (row, k-th minus (k+1)-th choice score)."""
    scores = sigmoid(logits)                                           # [N, E]
    choice = scores + bias
    if cfg.num_expert_group > 1:
        # Group-limited routing as the public references do it: a group's rank is the sum of
        # its two best choice scores; choices outside the best topk_group groups become 0.
        n, e = choice.shape
        grouped = choice.reshape(n, cfg.num_expert_group, -1)
        group_rank = np.sort(grouped, axis=-1)[..., -2:].sum(-1)
        dropped = np.argsort(-group_rank, axis=-1, kind="stable")[:, cfg.topk_group:]
        for row in range(n):
            grouped[row, dropped[row]] = 0.0
        choice = grouped.reshape(n, e)
    order = np.argsort(-choice, axis=-1, kind="stable")                # ties: lower index
    k = cfg.top_k
    if k < choice.shape[1]:
        if margins is not None:
            last = np.take_along_axis(choice, order[:, k - 1: k + 1], axis=-1)
            margins.extend((row, float(last[row, 0] - last[row, 1])) for row in range(len(choice)))
        for row in swapped_rows:
            order[row, [k - 1, k]] = order[row, [k, k - 1]]
    chosen = order[:, :k]
    weights = np.take_along_axis(scores, chosen, axis=-1)
    if cfg.renormalize and cfg.top_k > 1:
        weights = weights / (weights.sum(-1, keepdims=True) + 1e-20)
    return chosen, weights * cfg.routed_scaling_factor


class LatentMoe:
    def __init__(self, ckpt, cfg, prefix, layer):
        self.ckpt, self.cfg, self.prefix, self.layer = ckpt, cfg, prefix, layer
        self.router = ckpt.get(f"{prefix}.gate.weight")                               # [E, D]
        self.bias = ckpt.get(f"{prefix}.gate.e_score_correction_bias")                # [E]
        if cfg.latent_size:
            self.down = ckpt.get(f"{prefix}.routed_expert_down_proj.weight")          # [Dl, D]
            self.up = ckpt.get(f"{prefix}.routed_expert_up_proj.weight")              # [D, Dl]
        self.norm = ckpt.get(f"{prefix}.routed_expert_norm.weight") if cfg.latent_norm else None
        self.shared = None
        if cfg.num_shared_experts:
            s = f"{prefix}.shared_experts"
            self.shared = SituMlp(ckpt.get(f"{s}.gate_proj.weight"), ckpt.get(f"{s}.up_proj.weight"),
                                  ckpt.get(f"{s}.down_proj.weight"), cfg)

    def expert(self, e):
        p = f"{self.prefix}.experts.{e}"
        return SituMlp(self.ckpt.get_linear(f"{p}.w1"), self.ckpt.get_linear(f"{p}.w3"),
                       self.ckpt.get_linear(f"{p}.w2"), self.cfg)

    def __call__(self, x, opts):
        swapped = [row for layer, row in opts.route_swaps if layer == self.layer]
        margins = [] if opts.route_margins is not None else None
        chosen, weights = route(x @ self.router.T, self.bias, self.cfg, swapped, margins)
        if margins is not None:
            opts.route_margins.extend((self.layer, row, m) for row, m in margins)
        z = x @ self.down.T if self.cfg.latent_size else x
        y = np.zeros_like(z)
        for n in range(len(x)):
            for e, w in zip(chosen[n], weights[n]):
                y[n] += w * self.expert(int(e))(z[n: n + 1])[0]
        if self.norm is not None:
            y = rms_norm(y, self.norm, self.cfg.eps)
        if self.cfg.latent_size:
            y = y @ self.up.T
        if self.shared is not None:
            y = y + self.shared(x)
        return y


# ----------------------------------------------------------------------------------------------
# the model
# ----------------------------------------------------------------------------------------------

class Options:
    """route_swaps: (layer, row) pairs whose k-th expert choice is replaced by the (k+1)-th,
    rows counted within one forward pass; route_margins, when a list, receives (layer, row,
    margin) for every expert choice of the pass (route())."""

    def __init__(self, kda="recurrent", mla="naive", chunk_size=64, route_swaps=(), route_margins=None):
        self.kda, self.mla, self.chunk_size = kda, mla, chunk_size
        self.route_swaps, self.route_margins = tuple(route_swaps), route_margins


class Layer:
    def __init__(self, ckpt, cfg, i):
        p = f"model.layers.{i}"
        self.index = i
        self.input_norm = ckpt.get(f"{p}.input_layernorm.weight")
        self.post_norm = ckpt.get(f"{p}.post_attention_layernorm.weight")
        if cfg.attn_res_block_size:
            self.attn_res = (ckpt.get(f"{p}.self_attention_res_norm.weight"),
                             ckpt.get(f"{p}.self_attention_res_proj.weight"))
            self.mlp_res = (ckpt.get(f"{p}.mlp_res_norm.weight"),
                            ckpt.get(f"{p}.mlp_res_proj.weight"))
        self.mixer = (KdaLayer if cfg.is_kda(i) else MlaLayer)(ckpt, cfg, f"{p}.self_attn")
        if cfg.is_moe(i):
            self.ffn = LatentMoe(ckpt, cfg, f"{p}.block_sparse_moe", i)
        else:
            self.ffn = SituMlp(ckpt.get(f"{p}.mlp.gate_proj.weight"),
                               ckpt.get(f"{p}.mlp.up_proj.weight"),
                               ckpt.get(f"{p}.mlp.down_proj.weight"), cfg)


class Sequence:
    """Per-sequence decode state: one KdaState or MlaState per layer."""

    def __init__(self, model):
        self.layers = [layer.mixer.new_state() for layer in model.layers]


class Model:
    def __init__(self, model_dir, dtype=np.float64):
        """dtype float64 is the reference; float32 estimates what a float32 engine deviates."""
        self.cfg = Config.load(model_dir)
        ckpt = Checkpoint(model_dir, dtype)
        cfg = self.cfg
        self.embed = ckpt.get("model.embed_tokens.weight")                            # [V, D]
        self.layers = [Layer(ckpt, cfg, i) for i in range(cfg.num_layers)]
        self.norm = ckpt.get("model.norm.weight")
        if cfg.attn_res_block_size:
            self.output_res = (ckpt.get("model.output_attn_res_norm.weight"),
                               ckpt.get("model.output_attn_res_proj.weight"))
        self.lm_head = self.embed if cfg.tie_word_embeddings else ckpt.get("lm_head.weight")

    def forward(self, segments, opts):
        """segments: list of (Sequence, token ids). Runs the new tokens of every sequence in one
        pass (rows are concatenated; only the attention mixers look across a sequence) and
        returns one logits array [len(ids), V] per segment."""
        cfg = self.cfg
        ids = np.concatenate([np.asarray(t, dtype=np.int64) for _, t in segments])
        bounds = np.cumsum([0] + [len(t) for _, t in segments])
        x = self.embed[ids]
        blocks = []
        for layer in self.layers:
            def mix(values):
                out = np.empty_like(values)
                for s, (seq, _) in enumerate(segments):
                    rows = slice(bounds[s], bounds[s + 1])
                    out[rows] = layer.mixer(values[rows], seq.layers[layer.index], opts)
                return out

            if cfg.attn_res_block_size:
                partial = x
                h = attn_res_mix(blocks, partial, *layer.attn_res, cfg.eps)
                if layer.index % cfg.attn_res_block_size == 0:
                    blocks.append(partial)
                    partial = None
                a = mix(rms_norm(h, layer.input_norm, cfg.eps))
                partial = a if partial is None else partial + a
                h = attn_res_mix(blocks, partial, *layer.mlp_res, cfg.eps)
                x = partial + layer.ffn(rms_norm(h, layer.post_norm, cfg.eps), opts)
            else:
                x = x + mix(rms_norm(x, layer.input_norm, cfg.eps))
                x = x + layer.ffn(rms_norm(x, layer.post_norm, cfg.eps), opts)
        if cfg.attn_res_block_size:
            x = attn_res_mix(blocks, x, *self.output_res, cfg.eps)
        logits = rms_norm(x, self.norm, cfg.eps) @ self.lm_head.T
        return [logits[bounds[s]: bounds[s + 1]] for s in range(len(segments))]

    def prefill(self, ids, opts=None, seq=None):
        seq = seq or Sequence(self)
        return self.forward([(seq, ids)], opts or Options())[0], seq

    def decode(self, ids, opts=None):
        """Token by token; absorbed MLA unless opts say otherwise."""
        opts = opts or Options(mla="absorbed")
        seq = Sequence(self)
        rows = [self.forward([(seq, [t])], opts)[0][0] for t in ids]
        return np.stack(rows), seq

    def generate(self, ids, max_tokens, opts=None):
        logits, seq = self.prefill(ids, opts)
        out = []
        token = int(np.argmax(logits[-1]))
        step_opts = Options(mla="absorbed")
        for _ in range(max_tokens):
            out.append(token)
            token = int(np.argmax(self.forward([(seq, [token])], step_opts)[0][0]))
        return out


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--model", required=True, help="model directory")
    ap.add_argument("--token-ids", required=True, help="comma-separated token ids")
    ap.add_argument("--out", help="write float32 little-endian logits [n_tokens x vocab]")
    ap.add_argument("--mode", choices=["prefill", "decode", "generate"], default="prefill")
    ap.add_argument("--kda", choices=["recurrent", "chunked"], default="recurrent",
                    help="KDA algorithm for multi-token prefill")
    ap.add_argument("--chunk-size", type=int, default=64)
    ap.add_argument("--mla", choices=["naive", "absorbed"], default=None,
                    help="MLA form (default: naive for prefill, absorbed for decode)")
    ap.add_argument("--max-tokens", type=int, default=32, help="generate: ids to produce")
    ap.add_argument("--precision", choices=["float64", "float32"], default="float64",
                    help="float32 computes everything in float32, to size engine tolerances")
    args = ap.parse_args(argv)

    ids = [int(t) for t in args.token_ids.split(",") if t.strip()]
    model = Model(args.model, np.float32 if args.precision == "float32" else np.float64)
    if any(t < 0 or t >= model.cfg.vocab_size for t in ids):
        ap.error("token id outside the vocabulary")
    if args.mode == "generate":
        opts = Options(kda=args.kda, mla=args.mla or "naive", chunk_size=args.chunk_size)
        print(",".join(str(t) for t in model.generate(ids, args.max_tokens, opts)))
        return 0
    if args.mode == "prefill":
        opts = Options(kda=args.kda, mla=args.mla or "naive", chunk_size=args.chunk_size)
        logits, _ = model.prefill(ids, opts)
    else:
        logits, _ = model.decode(ids, Options(mla=args.mla or "absorbed"))
    if args.out:
        logits.astype("<f4").tofile(args.out)
    else:
        print(" ".join(str(int(np.argmax(row))) for row in logits))
    return 0


if __name__ == "__main__":
    sys.exit(main())
