#!/usr/bin/env bash
# engine/gpu/check.sh — the whole GPU check in one call, for a machine with an NVIDIA card:
#   1. build the GPU backend, its comparison test and its benchmark;
#   2. run the comparison tests: every op against the CPU scalar reference, and the whole
#      forward pass (GpuModel) against the CPU engine on a synthetic k3-nano (logits of every
#      position, prefill and decode, greedy tokens);
#   3. run the benchmarks: the ops (copy bandwidth, BF16 peak, decode GEMV bandwidth, prefill
#      GEMM, a 40 GB decode sweep, each op) and the whole forward pass on a synthetic k3-mini
#      and on k3-h200-40g (the published widths, 8 layers, 192 experts: 38.6 GB of weights
#      generated on the device) — prefill TFLOP/s and batch-1 decode bandwidth, as ratios to
#      the measured peaks;
#   4. print a short table; with $OUT set, write every log and the table there.
# Designed to finish in under 8 minutes on a 16-core H200 machine (docs/gpu.md).
#
# Build: the project's CMake with -DKIMI_CUDA=ON when the project's Debian build dependencies
# are installed; otherwise (a bare CUDA image) a direct nvcc/g++ build of only what the GPU
# targets need. GoogleTest comes from the system, or from sources at $KIMI_GTEST_SRC (default
# <repo>/.gtest, e.g. a copy of Debian's /usr/src/googletest). The model comparison needs the
# nlohmann/json headers (Debian's nlohmann-json3-dev) for the engine's config reader: from the
# system, or from $KIMI_JSON_INC (default <repo>/.gpu-deps/include, holding nlohmann/json.hpp);
# without them the direct build leaves the model comparison out and says so.
#
# Environment: OUT (results folder), KIMI_GPU_DIRECT=1 (skip CMake, build directly), KIMI_CUDA_ARCH (default 90), KIMI_GPU_SWEEP_GB (default 40,
# the size of the decode sweep's weight set), KIMI_GPU_BUILD (build folder, default
# <repo>/build-gpu-check).
# Exit status: 0 all passed; 1 a step failed; 3 no GPU visible (nothing to check).
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
arch=${KIMI_CUDA_ARCH:-90}
sweep_gb=${KIMI_GPU_SWEEP_GB:-40}
build=${KIMI_GPU_BUILD:-$root/build-gpu-check}
out=${OUT:-$build/results}
jobs=$(nproc 2>/dev/null || echo 4)
mkdir -p "$build" "$out"
t0=$(date +%s)

say() { printf '[check %4ds] %s\n' "$(( $(date +%s) - t0 ))" "$*"; }
die() { say "FAILED: $*"; exit 1; }

export PATH="$PATH:/usr/local/cuda/bin"
command -v nvcc >/dev/null || die "nvcc not found (PATH or /usr/local/cuda/bin)"
say "repo $root, build $build, results $out, $jobs cores, sm_$arch"
say "nvcc: $(nvcc --version | tail -1)"
if command -v nvidia-smi >/dev/null; then
  nvidia-smi --query-gpu=name,memory.total,driver_version,clocks.max.sm,clocks.max.mem --format=csv,noheader \
    | tee "$out/gpu.txt" | sed 's/^/[check] gpu: /'
fi

# ---- 1. build ----
test_bin= bench_bin= model_test_bin= model_bench_bin=
build_with_cmake() {
  command -v cmake >/dev/null || return 1
  cmake -S "$root" -B "$build/cmake" -DCMAKE_BUILD_TYPE=Release -DKIMI_CUDA=ON \
    -DCMAKE_CUDA_ARCHITECTURES="$arch" >"$out/configure.log" 2>&1 || return 1
  say "configured with CMake; building"
  cmake --build "$build/cmake" -j"$jobs" --target kimi_gpu_ops_test kimi_gpu_model_test kimi-gpu-bench kimi-gpu-model-bench >"$out/build.log" 2>&1 \
    || { tail -40 "$out/build.log"; die "CMake build (log: $out/build.log)"; }
  test_bin=$build/cmake/engine/gpu/kimi_gpu_ops_test
  model_test_bin=$build/cmake/engine/gpu/kimi_gpu_model_test
  model_bench_bin=$build/cmake/engine/gpu/kimi-gpu-model-bench
  bench_bin=$build/cmake/engine/gpu/kimi-gpu-bench
}

build_direct() {
  local d=$build/direct objs=$build/direct/obj
  mkdir -p "$objs"
  local inc=(-I"$root/engine" -I"$root/engine/include")
  local json_inc=${KIMI_JSON_INC:-$root/.gpu-deps/include} with_model=
  if [[ -f /usr/include/nlohmann/json.hpp ]]; then
    with_model=1
  elif [[ -f "$json_inc/nlohmann/json.hpp" ]]; then
    with_model=1
    inc+=(-I"$json_inc")
  else
    say "no nlohmann/json.hpp (system or $json_inc): the model comparison is left out of the direct build"
  fi
  local cxx=${CXX:-g++}
  local gtest_inc=() gtest_libs=()
  if [[ -z "${KIMI_GTEST_SRC:-}" && -f /usr/include/gtest/gtest.h ]] && ls /usr/lib/*/libgtest.* >/dev/null 2>&1; then
    gtest_libs=(-lgtest -lgtest_main)
  else
    local src=${KIMI_GTEST_SRC:-$root/.gtest}
    [[ -d "$src/googletest" ]] && src=$src/googletest
    [[ -f "$src/src/gtest-all.cc" ]] || die "no GoogleTest: install libgtest-dev or set KIMI_GTEST_SRC (a copy of /usr/src/googletest)"
    gtest_inc=(-I"$src/include" -I"$src")
    echo "$src/src/gtest-all.cc" >"$d/gtest.list"
    echo "$src/src/gtest_main.cc" >>"$d/gtest.list"
  fi
  # What the GPU targets link: the CPU kernels (reference and AVX2 tables), Status, the pool.
  local cpu=("$root"/engine/core/status.cc "$root"/engine/core/thread_pool.cc "$root"/engine/kernels/cpu/kernels.cc
    "$root"/engine/kernels/cpu/scratch.cc "$root"/engine/kernels/cpu/ref/*.cc)
  local avx2=("$root"/engine/kernels/cpu/avx2/*.cc)
  local cu=("$root"/engine/gpu/*.cu)
  cpu+=("$root"/engine/gpu/forward_plan.cc)
  if [[ -n "$with_model" ]]; then
    # The forward pass and what it links: the CPU engine's config, model directories and binding.
    local f
    for f in "$root"/engine/core/{log,hex,utc_time,machine_limits}.cc "$root"/engine/io/*.cc "$root"/engine/model/*.cc; do
      [[ $f == *_test.cc || $f == */test_util.cc ]] || cpu+=("$f")
    done
    cpu+=("$root"/engine/gpu/gpu_model.cc "$root"/engine/gpu/bench_presets.cc)
  fi
  local tests=("$root"/engine/gpu/gpu_ops_test.cc "$root"/engine/gpu/gpu_device_test.cc
    "$root"/engine/kernels/cpu/kernel_test_util.cc)
  {
    for f in "${cu[@]}"; do echo "cu $f"; done
    for f in "${cpu[@]}"; do echo "cc $f"; done
    for f in "${avx2[@]}"; do [[ $f == *avx2_table.cc ]] && echo "cc $f" || echo "avx2 $f"; done
    for f in "${tests[@]}" "$root"/engine/gpu/gpu_bench.cc; do echo "test $f"; done
    [[ -n "$with_model" ]] && echo "test $root/engine/gpu/gpu_model_test.cc" && echo "test $root/engine/gpu/gpu_model_bench.cc"
    [[ -f "$d/gtest.list" ]] && while read -r f; do echo "gtest $f"; done <"$d/gtest.list"
    true
  } >"$d/sources"
  say "direct build: $(wc -l <"$d/sources") files"
  export KIMI_ARCH=$arch KIMI_CXX=$cxx KIMI_OBJS=$objs KIMI_INC="${inc[*]}" KIMI_GTEST_INC="${gtest_inc[*]:-}"
  # shellcheck disable=SC2016
  xargs -P "$jobs" -L 1 bash -c '
    kind=$0 f=$1 o=$KIMI_OBJS/$(echo "$1" | tr / _).o
    case $kind in
      cu) nvcc -std=c++20 -O3 -arch=sm_$KIMI_ARCH -lineinfo $KIMI_INC -c "$f" -o "$o" ;;
      cc) $KIMI_CXX -std=c++20 -O3 $KIMI_INC -c "$f" -o "$o" ;;
      avx2) $KIMI_CXX -std=c++20 -O3 -mavx2 -mfma -mf16c $KIMI_INC -c "$f" -o "$o" ;;
      test) $KIMI_CXX -std=c++20 -O3 $KIMI_INC $KIMI_GTEST_INC -I/usr/local/cuda/include -c "$f" -o "$o" ;;
      gtest) $KIMI_CXX -std=c++20 -O2 $KIMI_GTEST_INC -c "$f" -o "$o" ;;
    esac || { echo "compile failed: $f" >&2; exit 255; }' <"$d/sources" >"$out/build.log" 2>&1 \
    || { tail -40 "$out/build.log"; die "direct build (log: $out/build.log)"; }
  local lib=(-L/usr/local/cuda/lib64 -Wl,-rpath,/usr/local/cuda/lib64 -lcudart -lpthread)
  local common=() o
  for o in "$objs"/*.o; do
    case $o in
      *gpu_ops_test.cc.o | *gpu_device_test.cc.o | *gpu_bench.cc.o | *peak_matmul.cu.o | *gpu_model_test.cc.o | *gpu_model_bench.cc.o) ;;
      *gtest-all.cc.o | *gtest_main.cc.o | *kernel_test_util.cc.o) ;;
      *) common+=("$o") ;;
    esac
  done
  local gt=("$objs"/*gtest-all.cc.o "$objs"/*gtest_main.cc.o)
  [[ -e "${gt[0]}" ]] || gt=()
  $cxx -o "$d/kimi_gpu_ops_test" "$objs"/*gpu_ops_test.cc.o "$objs"/*gpu_device_test.cc.o "$objs"/*kernel_test_util.cc.o \
    "${common[@]}" "${gt[@]}" "${gtest_libs[@]}" "${lib[@]}" >>"$out/build.log" 2>&1 || die "link kimi_gpu_ops_test"
  $cxx -o "$d/kimi-gpu-bench" "$objs"/*gpu_bench.cc.o "$objs"/*peak_matmul.cu.o "${common[@]}" "${lib[@]}" -lcublas >>"$out/build.log" 2>&1 \
    || die "link kimi-gpu-bench"
  test_bin=$d/kimi_gpu_ops_test
  if [[ -n "$with_model" ]]; then
    $cxx -o "$d/kimi_gpu_model_test" "$objs"/*gpu_model_test.cc.o "${common[@]}" "${gt[@]}" "${gtest_libs[@]}" "${lib[@]}" \
      >>"$out/build.log" 2>&1 || die "link kimi_gpu_model_test"
    model_test_bin=$d/kimi_gpu_model_test
    $cxx -o "$d/kimi-gpu-model-bench" "$objs"/*gpu_model_bench.cc.o "${common[@]}" "${lib[@]}" >>"$out/build.log" 2>&1 \
      || die "link kimi-gpu-model-bench"
    model_bench_bin=$d/kimi-gpu-model-bench
  fi
  bench_bin=$d/kimi-gpu-bench
}

if [[ -z "${KIMI_GPU_DIRECT:-}" ]] && build_with_cmake; then
  say "built with CMake (KIMI_CUDA=ON)"
else
  if [[ -n "${KIMI_GPU_DIRECT:-}" ]]; then
    say "KIMI_GPU_DIRECT set: direct nvcc/g++ build"
  else
    say "the project's CMake configure failed here (missing build dependencies? $out/configure.log): direct nvcc/g++ build"
  fi
  build_direct
fi
say "build done"

# ---- 2. comparison test ----
status=0
test_result="not run"
if "$test_bin" --gtest_brief=0 --gtest_output="xml:$out/ops_test.xml" >"$out/ops_test.txt" 2>&1; then
  test_result="passed"
else
  status=1
  test_result="FAILED"
fi
if grep -q "no GPU device visible" "$out/ops_test.txt"; then
  say "no GPU device visible: nothing to check"
  exit 3
fi
passed=$(grep -c '^\[       OK \]' "$out/ops_test.txt" || true)
failed=$(grep -c '^\[  FAILED  \].*ms)$' "$out/ops_test.txt" || true)
say "comparison test: $test_result ($passed passed, $failed failed; $out/ops_test.txt)"
[[ $status -eq 0 ]] || grep -A6 '^\[ RUN' "$out/ops_test.txt" | grep -B1 -A5 'Failure' | head -60 || true
# Per-op results: the failed cases by name (every case is one gtest; passed ones are counted).
failed_cases=$(grep '^\[  FAILED  \].*ms)$' "$out/ops_test.txt" | sed 's/^\[  FAILED  \] //; s/ (.*//' | tr '\n' ' ' || true)

# The whole model against the CPU engine on k3-nano.
model_result="not built"
if [[ -n "$model_test_bin" ]]; then
  if "$model_test_bin" --gtest_brief=0 --gtest_output="xml:$out/model_test.xml" >"$out/model_test.txt" 2>&1; then
    model_result="passed"
  else
    status=1
    model_result="FAILED"
    grep -B2 -A8 'Failure' "$out/model_test.txt" | head -60 || true
  fi
  model_result="$model_result ($(grep -c '^\[       OK \]' "$out/model_test.txt" || true) passed)"
fi
say "model comparison (k3-nano, GPU forward pass vs CPU engine): $model_result"

# ---- 3. benchmark ----
bench_result="passed"
if ! "$bench_bin" --sweep-gb "$sweep_gb" >"$out/bench.txt" 2>&1; then
  status=1
  bench_result="FAILED"
  tail -20 "$out/bench.txt"
fi

# The whole forward pass on k3-mini (written to disk) and on k3-h200-40g (38.6 GB of weights
# generated on the device: bench_presets.h), against the peaks just measured.
result() { awk -v k="$1" '$1 == "result" && $2 == k { print $3 }' "$out/bench.txt" 2>/dev/null | head -1; }
model_bench_result="not built"
run_model_bench() {  # preset, log file, bench arguments...
  local preset=$1 log=$2 dir=$build/$1
  shift 2
  rm -rf "$dir"
  if "$model_bench_bin" --preset "$preset" --dir "$dir" "$@" ${KIMI_GPU_MODEL_BENCH_ARGS:-} \
      --copy-gbs "$(result copy_bandwidth)" --peak-tflops "$(result bf16_peak)" >"$log" 2>&1; then
    say "model benchmark ($preset): passed"
  else
    status=1
    model_bench_result="FAILED"
    say "model benchmark ($preset): FAILED"
    tail -20 "$log"
  fi
  rm -rf "$dir"
}
if [[ -n "$model_bench_bin" ]]; then
  model_bench_result="passed"
  run_model_bench k3-mini "$out/model_bench.txt" --prefill 1024 --max-rows 512 --steps 64
  run_model_bench k3-h200-40g "$out/model_bench_40g.txt" --prefill 1024 --max-rows 512 --steps 32
fi

# ---- 4. summary ----
{
  echo "GPU check $(date -u +%Y-%m-%dT%H:%M:%SZ), $(head -1 "$out/gpu.txt" 2>/dev/null || echo 'unknown card')"
  echo "commit $(git -C "$root" rev-parse --short HEAD 2>/dev/null || echo unknown), sm_$arch, $(nvcc --version | tail -1)"
  echo "op comparison: $test_result ($passed passed, $failed failed)${failed_cases:+; failed: $failed_cases}"
  echo "model comparison (k3-nano logits, GPU vs CPU engine): $model_result"
  grep '^\[ compare  \]' "$out/model_test.txt" 2>/dev/null | sed 's/^\[ compare  \] /  /' || true
  echo "benchmark: $bench_result; model benchmark (k3-mini, k3-h200-40g forward pass): $model_bench_result"
  grep '^device:' "$out/bench.txt" || true
  grep '^|' "$out/bench.txt" || true
  grep -hE '^(\||synthesised|loaded)' "$out/model_bench.txt" "$out/model_bench_40g.txt" 2>/dev/null || true
  echo "total time: $(( $(date +%s) - t0 )) s"
} | tee "$out/summary.txt"
exit $status
