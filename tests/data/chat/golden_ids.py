#!/usr/bin/python3
"""Writes golden_ids.json: the token ids of every rendered golden prompt, for the real ranks.

Usage: /usr/bin/python3 golden_ids.py RANKS_DIR [OUT]   (RANKS_DIR holds Kimi's tiktoken.model; OUT defaults
to golden_ids.json beside this script)

An implementation independent of the engine's C++ tokenizer: Python's `regex` module
(Debian python3-regex) runs Kimi's pre-tokenisation pattern with its class intersections,
special tokens are split out the way tiktoken does with every special token allowed, and a
plain merge loop applies the ranks (lowest-rank adjacent pair first). It encodes each
case's "expected" string - the reference template's rendering - so the C++ test that renders
and encodes natively is checked against data neither step produced.

For each case: "ids" (the whole prompt, generation stub included) and "prompt_tokens" (ids
before the stub: what usage.prompt_tokens counts).
"""
import base64
import glob
import hashlib
import json
import os
import sys

import regex

KIMI_PATTERN = "|".join([
    r"[\p{Han}]+",
    r"[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}&&[^\p{Han}]]*[\p{Ll}\p{Lm}\p{Lo}\p{M}&&[^\p{Han}]]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?",
    r"[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}&&[^\p{Han}]]+[\p{Ll}\p{Lm}\p{Lo}\p{M}&&[^\p{Han}]]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?",
    r"\p{N}{1,3}",
    r" ?[^\s\p{L}\p{N}]+[\r\n]*",
    r"\s*[\r\n]+",
    r"\s+(?!\S)",
    r"\s+",
])

# K3's special-token table (offsets from the number of ranks); other ids are reserved names.
K3_SPECIAL = {"[BOS]": 0, "[EOS]": 1, "<|end_of_msg|>": 2, "<|open|>": 3, "<|close|>": 4,
              "<|sep|>": 5, "[UNK]": 254, "[PAD]": 255}
STUBS = ("<|open|>think<|sep|>", "<|open|>response<|sep|>")


def load_ranks(path):
    ranks = {}
    with open(path, "rb") as f:
        for line in f:
            if line.strip():
                token, rank = line.split()
                ranks[base64.b64decode(token)] = int(rank)
    return ranks


def bpe(piece, ranks):
    if piece in ranks:
        return [ranks[piece]]
    parts = [piece[i:i + 1] for i in range(len(piece))]
    while len(parts) > 1:
        best, best_rank = None, None
        for i in range(len(parts) - 1):
            r = ranks.get(parts[i] + parts[i + 1])
            if r is not None and (best_rank is None or r < best_rank):
                best, best_rank = i, r
        if best is None:
            break
        parts[best:best + 2] = [parts[best] + parts[best + 1]]
    return [ranks[p] for p in parts]


def encode(text, ranks, specials, pattern):
    ids = []
    special_re = regex.compile("|".join(regex.escape(s) for s in sorted(specials, key=len, reverse=True)))
    pos = 0
    for m in list(special_re.finditer(text)) + [None]:
        end = m.start() if m else len(text)
        for piece in pattern.findall(text[pos:end]):
            ids.extend(bpe(piece.encode("utf-8"), ranks))
        if m:
            ids.append(specials[m.group(0)])
            pos = m.end()
    return ids


def main():
    if len(sys.argv) not in (2, 3):
        sys.exit(__doc__)
    model = os.path.join(sys.argv[1], "tiktoken.model")
    here = os.path.dirname(os.path.abspath(__file__))
    out = sys.argv[2] if len(sys.argv) == 3 else os.path.join(here, "golden_ids.json")
    ranks = load_ranks(model)
    n = len(ranks)
    specials = {text: n + off for text, off in K3_SPECIAL.items()}
    for off in range(256):
        if off not in K3_SPECIAL.values():
            specials["<|reserved_token_%d|>" % (n + off)] = n + off
    pattern = regex.compile(KIMI_PATTERN, regex.V1)
    cases = {}
    for path in sorted(glob.glob(os.path.join(here, "golden", "*.json"))):
        with open(path, encoding="utf-8") as f:
            case = json.load(f)
        if "expected" not in case:
            continue
        text = case["expected"]
        ids = encode(text, ranks, specials, pattern)
        stub = next((s for s in STUBS if text.endswith(s)), "")
        stub_ids = encode(stub, ranks, specials, pattern) if stub else []
        cases[os.path.basename(path)[:-5]] = {"prompt_tokens": len(ids) - len(stub_ids), "ids": ids}
    with open(model, "rb") as f:
        digest = hashlib.sha256(f.read()).hexdigest()
    with open(out, "w", encoding="utf-8") as f:
        f.write('{\n "ranks_sha256": "%s",\n "cases": {\n' % digest)
        f.write(",\n".join('  %s: {"prompt_tokens": %d, "ids": %s}' % (json.dumps(k), v["prompt_tokens"],
                                                                         json.dumps(v["ids"], separators=(",", ":")))
                           for k, v in cases.items()))
        f.write("\n }\n}\n")
    print("wrote %s: %d cases" % (out, len(cases)))


if __name__ == "__main__":
    main()
