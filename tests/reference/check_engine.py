#!/usr/bin/env python3
"""Compares `kimi-engine` with the numpy reference on one model directory.

Runs, for the same token ids:
  prefill   `ENGINE eval --model DIR --token-ids IDS --dump-logits F` against
            `k3_reference.py --mode prefill`
  decode    the same eval with --decode-flag (for example "--mode decode"), when given,
            against `k3_reference.py --mode decode`
  greedy    `ENGINE generate --model DIR --token-ids IDS --max-tokens N` against the reference's
            greedy ids (the last N integers the engine prints are taken as its ids)

on the kernel path --kernels names (KIMI_KERNELS), if given, else the engine's default, and fails when max |engine - reference| / max |reference| exceeds --tolerance (in prefill
also with every near-tied expert choice tried the other way: compare_prefill), or when a greedy
id differs at a step where the reference's top-two logit gap exceeds the tolerance (see
docs/engine.md, "Tolerances against the reference"). With --synth-preset the model directory is
first written by `ENGINE synth --preset NAME --out DIR`; with --quantize SCHEME it is then
rewritten by `ENGINE quantize` and the quantised copy is checked (the reference dequantises it).
"""

import argparse
import os
import re
import shlex
import subprocess
import sys
import tempfile

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import k3_reference as ref  # noqa: E402


# The reference prompts: these ids, and prompt_ids(100, vocab) (the long-prompt CTest).
DEFAULT_TOKEN_IDS = "1,7,42,3,99,250,13,5,77,64,2,31"
LONG_PROMPT_LENGTH = 100


def prompt_ids(length, vocab):
    """`length` token ids from a fixed linear congruential sequence (the same on every run)."""
    ids, state = [], 12345
    for _ in range(length):
        state = (state * 1103515245 + 12345) % 2**31
        ids.append(state % vocab)
    return ids


# What the engine logs when KIMI_KERNELS names a kernel path the machine lacks
# (engine/kernels/cpu/kernels.cc, ActiveKernels); it then runs its default path.
KERNELS_MISSING = "KIMI_KERNELS names no kernel path this machine has"


class KernelPathMissing(Exception):
    pass


def run(cmd):
    done = subprocess.run(cmd, capture_output=True, text=True)
    if done.returncode != 0:
        sys.stderr.write(done.stdout + done.stderr)
        raise SystemExit(f"command failed ({done.returncode}): {shlex.join(cmd)}")
    if os.environ.get("KIMI_KERNELS") and KERNELS_MISSING in done.stderr:
        raise KernelPathMissing(os.environ["KIMI_KERNELS"])
    return done.stdout


def engine_logits(engine, model_dir, ids, path, extra, vocab):
    run([engine, "eval", "--model", model_dir, "--token-ids", ",".join(map(str, ids)),
         "--dump-logits", path] + extra)
    logits = np.fromfile(path, dtype="<f4")
    if logits.size != len(ids) * vocab:
        raise SystemExit(f"{path}: {logits.size} floats, expected {len(ids)} x {vocab}")
    return logits.reshape(len(ids), vocab).astype(np.float64)


def relative_error(actual, expected):
    return float(np.max(np.abs(actual - expected)) / np.max(np.abs(expected)))


def compare(name, actual, expected, tolerance):
    error = relative_error(actual, expected)
    same_argmax = float(np.mean(actual.argmax(1) == expected.argmax(1)))
    print(f"{name}: max relative error {error:.3e} (tolerance {tolerance:.1e}), "
          f"argmax agreement {same_argmax:.3f}")
    return error <= tolerance


# At most this many near ties are tried the other way, closest first.
MAX_NEAR_TIES = 8


def compare_prefill(model, ids, actual, tolerance):
    """compare() of the engine's prefill with the reference's. An expert choice whose k-th and
    (k+1)-th scores lie within `tolerance` of each other is a near tie: the engine's scores,
    off by float32 rounding, may order them the other way, and a different expert changes a
    random model's outputs at order 1 (the greedy check accepts near-tied tokens likewise).
    Where the comparison fails, such choices are taken the other way one at a time, and the
    prefill passes when one of them accounts for the whole difference."""
    margins = []
    expected, _ = model.prefill(ids, ref.Options(kda="chunked", route_margins=margins))
    if compare("prefill", actual, expected, tolerance):
        return True
    near = sorted((m, layer, row) for layer, row, m in margins if m < tolerance)
    for margin, layer, row in near[:MAX_NEAR_TIES]:
        other, _ = model.prefill(ids, ref.Options(kda="chunked", route_swaps=[(layer, row)]))
        if relative_error(actual, other) <= tolerance:
            print(f"prefill: layer {layer}'s expert choice at token {row} is a near tie (score margin "
                  f"{margin:.1e} < {tolerance:.1e}); with it taken the other way:")
            return compare("prefill", actual, other, tolerance)
    if near:
        print(f"prefill: {len(near)} near-tied expert choices, taking "
              f"{min(len(near), MAX_NEAR_TIES)} of them the other way does not explain the difference")
    return False


def check_greedy(engine, model, model_dir, ids, steps, tolerance):
    out = run([engine, "generate", "--model", model_dir, "--token-ids", ",".join(map(str, ids)),
               "--max-tokens", str(steps)])
    printed = [int(t) for t in re.findall(r"-?\d+", out)]
    if len(printed) < steps:
        print(f"greedy: engine printed {len(printed)} ids, expected {steps}")
        return False
    engine_ids = printed[-steps:]
    logits, seq = model.prefill(list(ids))
    last, ok = logits[-1], True
    for step, token in enumerate(engine_ids):
        top2 = np.sort(last)[-2:]
        gap = (top2[1] - top2[0]) / np.max(np.abs(last))
        expected = int(np.argmax(last))
        if token != expected:
            decisive = gap > tolerance
            print(f"greedy step {step}: engine {token}, reference {expected}, "
                  f"top-two gap {gap:.2e} ({'FAIL' if decisive else 'near tie, accepted'})")
            if decisive:
                ok = False
                break
        # follow the engine's choice so later steps compare like with like
        last = model.forward([(seq, [token])], ref.Options(mla="absorbed"))[0][0]
    print(f"greedy: {steps} steps compared, {'ok' if ok else 'mismatch'}")
    return ok


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--engine", required=True, help="path of the kimi-engine binary")
    ap.add_argument("--model", help="model directory (or use --synth-preset)")
    ap.add_argument("--synth-preset", help="write the model with ENGINE synth --preset NAME")
    ap.add_argument("--quantize", help="check the model rewritten by ENGINE quantize --scheme NAME instead")
    ap.add_argument("--token-ids", default=DEFAULT_TOKEN_IDS)
    ap.add_argument("--prompt-length", type=int, default=0,
                    help="use this many generated ids instead of --token-ids")
    ap.add_argument("--threads", type=int, default=0,
                    help="kernel threads for the engine's eval (default: its own default)")
    ap.add_argument("--decode-flag", default="",
                    help="extra eval arguments selecting token-by-token decode")
    ap.add_argument("--greedy-steps", type=int, default=32)
    ap.add_argument("--tolerance", type=float, default=1e-3)
    ap.add_argument("--kernels", default="",
                    help="run the engine on this kernel path (KIMI_KERNELS: avx2, avx512bf16, amx, "
                         "scalar); prints SKIPPED and passes where the machine lacks it")
    args = ap.parse_args()
    if args.kernels:
        os.environ["KIMI_KERNELS"] = args.kernels
        try:
            return check(args)
        except KernelPathMissing as missing:
            print(f"SKIPPED: this machine has no {missing} kernel path")
            return 0
    return check(args)


def check(args):
    threads = ["--threads", str(args.threads)] if args.threads else []

    with tempfile.TemporaryDirectory() as tmp:
        model_dir = args.model
        if args.synth_preset:
            model_dir = os.path.join(tmp, args.synth_preset)
            run([args.engine, "synth", "--preset", args.synth_preset, "--out", model_dir])
        if not model_dir:
            raise SystemExit("give --model or --synth-preset")
        if args.quantize:
            quantized = os.path.join(tmp, "quantized-" + args.quantize)
            run([args.engine, "quantize", "--in", model_dir, "--out", quantized, "--scheme", args.quantize])
            model_dir = quantized
        model = ref.Model(model_dir)
        vocab = model.cfg.vocab_size
        if args.prompt_length:
            ids = prompt_ids(args.prompt_length, vocab)
        else:
            ids = [int(t) % vocab for t in args.token_ids.split(",")]
        ok = True

        actual = engine_logits(args.engine, model_dir, ids, os.path.join(tmp, "p.bin"), threads, vocab)
        ok &= compare_prefill(model, ids, actual, args.tolerance)

        if args.decode_flag:
            expected, _ = model.decode(ids)
            actual = engine_logits(args.engine, model_dir, ids, os.path.join(tmp, "d.bin"),
                                   shlex.split(args.decode_flag) + threads, vocab)
            ok &= compare("decode", actual, expected, args.tolerance)

        if args.greedy_steps:
            ok &= check_greedy(args.engine, model, model_dir, ids[:4], args.greedy_steps,
                               args.tolerance)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
