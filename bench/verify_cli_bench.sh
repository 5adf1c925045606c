#!/bin/bash
# `kimictl model verify` end to end (process start, key, signature, hashing) against
# `openssl dgst -sha256` over the same files, interleaved, best wall time of N rounds each:
# openssl on one core; verify with a whole-file signature (--files) and with the default
# sharded one, at 2 threads and at 1. Prints the wall times and openssl/verify ratios.
#
# Usage: bench/verify_cli_bench.sh MODEL_DIR [ROUNDS]   (KIMICTL=path overrides build/appliance/kimictl)
set -euo pipefail
model=${1:?usage: bench/verify_cli_bench.sh MODEL_DIR [ROUNDS]}
rounds=${2:-10}
kimictl=${KIMICTL:-$(dirname "$0")/../build/appliance/kimictl}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
"$kimictl" keygen --out "$work/key" >/dev/null
"$kimictl" model sign --key "$work/key.pem" --files --signature "$work/files.sig" --quiet "$model" >/dev/null
"$kimictl" model sign --key "$work/key.pem" --signature "$work/shards.sig" --quiet "$model" >/dev/null
mapfile -t files < <(cd "$model" && find . -type f ! -name model.sig | sort)

micros() {  # wall µs of one run of "$@"; a failing run aborts the benchmark
  local start
  start=$(date +%s%N)
  "$@" >/dev/null 2>&1 || { echo "failed: $*" >&2; exit 1; }
  echo $((($(date +%s%N) - start) / 1000))
}
verify() { "$kimictl" model verify --key "$work/key.pub.pem" --signature "$work/$1.sig" --threads "$2" --quiet "$model"; }
best_openssl=0 best_files=0 best_shards=0 best_one=0
keep_min() { local v=$2; if [ "${!1}" -eq 0 ] || [ "$v" -lt "${!1}" ]; then printf -v "$1" %s "$v"; fi; }
for _ in $(seq "$rounds"); do
  keep_min best_openssl "$(cd "$model" && micros openssl dgst -sha256 "${files[@]}")"
  keep_min best_files "$(micros verify files 2)"
  keep_min best_shards "$(micros verify shards 2)"
  keep_min best_one "$(micros verify shards 1)"
done
echo "best of $rounds, wall µs: openssl (1 core) $best_openssl; verify whole files, 2 threads $best_files;" \
     "verify shards, 2 threads $best_shards; verify shards, 1 thread $best_one"
awk -v o="$best_openssl" -v f="$best_files" -v s="$best_shards" -v one="$best_one" 'BEGIN {
  printf "openssl / kimictl model verify (wall): whole files 2 threads %.2fx, shards 2 threads %.2fx, shards 1 thread %.2fx\n", o / f, o / s, o / one }'
