#!/usr/bin/env bash
# Compile-checks every .cu file of engine/gpu/ with one GPU compiler, object code only (-c),
# one target architecture, nothing linked or run: the cheap proof on a machine without a GPU
# that the sources still build for that vendor.
#   compile_check.sh cuda <nvcc>  <engine-dir>    (sm_90)
#   compile_check.sh hip  <hipcc> <engine-dir>    (gfx90a, a CDNA 2 target)
# Exits 77 (CTest's skip code) when the compiler is absent.
set -euo pipefail

kind=${1:?usage: compile_check.sh cuda|hip COMPILER ENGINE_DIR}
compiler=${2:-}
engine=${3:?engine directory}

if [[ -z "$compiler" || "$compiler" == *NOTFOUND* || ! -x "$compiler" ]]; then
  echo "skip: no $kind compiler on this machine (${compiler:-none given})"
  exit 77
fi

case "$kind" in
  cuda) flags=(-std=c++20 -arch=sm_90 -Xcompiler=-Wall,-Wextra,-Werror -Werror all-warnings) ;;
  hip) flags=(-std=c++20 -x hip --offload-arch=gfx90a -Wall -Wextra -Werror) ;;
  *) echo "unknown kind: $kind" >&2; exit 2 ;;
esac

out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
start=$(date +%s)
status=0
# Two at a time: the build machines have two cores.
printf '%s\n' "$engine"/gpu/*.cu | xargs -P 2 -I{} sh -c '
  f="$1"; shift; out="$1"; shift; engine="$1"; shift
  if "$@" -I"$engine" -I"$engine/include" -c "$f" -o "$out/$(basename "$f").o" 2>"$out/$(basename "$f").log"; then
    echo "ok   $(basename "$f")"
  else
    echo "FAIL $(basename "$f")"; cat "$out/$(basename "$f").log"; exit 1
  fi' _ {} "$out" "$engine" "$compiler" "${flags[@]}" || status=1
echo "$kind compile check: $(ls "$engine"/gpu/*.cu | wc -l) files in $(( $(date +%s) - start )) s"
exit $status
