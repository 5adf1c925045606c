#!/usr/bin/env python3
"""Compares a quantised model with the BF16 model it was made from, through `kimi-engine`, over
the reference prompts of check_engine.py (its default ids and its 100-token prompt).

Prints, per prompt and over both: the max relative logit error max|q - bf16| / max|bf16| over
every position's logits (check_engine.py's measure), the argmax agreement of the positions
(each position's greedy choice with the same prefix), and how many of --greedy-steps generated
ids agree from the start of a greedy continuation of the prompt's first 4 ids; and, per quantised
matrix, the relative output error |(W_q - W) x| / |W x| for Gaussian x (the median and the
largest over the matrices): the weights' own error, which on random weights the logits amplify
through flipped expert choices. A measurement tool for docs/benchmarks.md; it asserts nothing.

  compare_models.py --engine build/engine/kimi-engine --reference DIR --model QUANTISED_DIR
"""

import argparse
import json
import os
import re
import sys
import tempfile

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import k3_reference as ref  # noqa: E402
from check_engine import DEFAULT_TOKEN_IDS, LONG_PROMPT_LENGTH, engine_logits, prompt_ids, run  # noqa: E402


def vocab_size(model_dir):
    with open(os.path.join(model_dir, "config.json")) as f:
        config = json.load(f)
    return config.get("text_config", config)["vocab_size"]


def greedy(engine, model_dir, ids, steps, threads):
    out = run([engine, "generate", "--model", model_dir, "--token-ids", ",".join(map(str, ids)),
               "--max-tokens", str(steps)] + threads)
    return [int(t) for t in re.findall(r"-?\d+", out)][-steps:]


def matrix_errors(reference_dir, model_dir, samples=8):
    """|(W_q - W) x| / |W x| over `samples` Gaussian x, for every matrix stored quantised."""
    bf16, quantised = ref.Checkpoint(reference_dir), ref.Checkpoint(model_dir)
    rng = np.random.default_rng(0)
    errors = []
    for name in sorted(quantised.location):
        if not name.endswith(".weight_packed") or ".experts." in name:
            continue
        prefix = name[:-len(".weight_packed")]
        w, wq = bf16.get(prefix + ".weight"), quantised.get_linear(prefix)
        x = rng.standard_normal((w.shape[1], samples))
        errors.append(float(np.linalg.norm((wq - w) @ x) / np.linalg.norm(w @ x)))
    return errors


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--engine", required=True)
    ap.add_argument("--reference", required=True, help="the BF16 model directory")
    ap.add_argument("--model", required=True, help="the quantised model directory")
    ap.add_argument("--threads", type=int, default=0)
    ap.add_argument("--greedy-steps", type=int, default=32)
    args = ap.parse_args()
    threads = ["--threads", str(args.threads)] if args.threads else []
    vocab = vocab_size(args.reference)
    prompts = {"default ids": [int(t) % vocab for t in DEFAULT_TOKEN_IDS.split(",")],
               f"{LONG_PROMPT_LENGTH}-token prompt": prompt_ids(LONG_PROMPT_LENGTH, vocab)}
    worst, same, positions, greedy_same, greedy_total = 0.0, 0, 0, 0, 0
    with tempfile.TemporaryDirectory() as tmp:
        for name, ids in prompts.items():
            want = engine_logits(args.engine, args.reference, ids, os.path.join(tmp, "r.bin"), threads, vocab)
            got = engine_logits(args.engine, args.model, ids, os.path.join(tmp, "q.bin"), threads, vocab)
            error = float(np.max(np.abs(got - want)) / np.max(np.abs(want)))
            agree = int(np.sum(got.argmax(1) == want.argmax(1)))
            a = greedy(args.engine, args.reference, ids[:4], args.greedy_steps, threads)
            b = greedy(args.engine, args.model, ids[:4], args.greedy_steps, threads)
            prefix = next((i for i, (x, y) in enumerate(zip(a, b)) if x != y), min(len(a), len(b)))
            print(f"{name}: max relative logit error {error:.4f}, argmax agreement {agree}/{len(ids)}, "
                  f"greedy continuation identical for {prefix}/{args.greedy_steps} ids")
            worst, same, positions = max(worst, error), same + agree, positions + len(ids)
            greedy_same, greedy_total = greedy_same + prefix, greedy_total + args.greedy_steps
    errors = matrix_errors(args.reference, args.model)
    print(f"matrices: {len(errors)} quantised, relative output error median {np.median(errors):.4f}, "
          f"largest {max(errors):.4f}")
    print(f"all: max relative logit error {worst:.4f}, argmax agreement {same / positions:.3f} "
          f"({same}/{positions}), greedy continuations {greedy_same}/{greedy_total}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
