#!/usr/bin/env bash
# make fuzz: runs every libFuzzer target of a -DKIMI_FUZZ=ON tree (ASan + UBSan) for SECONDS
# each, one after the other, on a copy of its corpus (new inputs go to BUILD/fuzz-work/, never
# into the source tree; corpus/<target>/known_defects/ is left out, CMakeLists.txt says why).
# Prints each target's executions, speed and coverage (libFuzzer's last status line); exits
# non-zero when any target crashed, leaked or hung, naming the input it saved.
#   tests/fuzz/run_fuzz.sh BUILD [SECONDS [TARGET...]]     (no TARGET: all of them)
set -uo pipefail
build=${1:?usage: run_fuzz.sh BUILD [SECONDS]}
seconds=${2:-600}
only=("${@:3}")
list=$build/tests/fuzz/fuzz_targets.txt
[[ -f $list ]] || { echo "run_fuzz.sh: no $list (configure $build with -DKIMI_FUZZ=ON)" >&2; exit 2; }
work=$build/fuzz-work
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}

failed=()
summary=()
while read -r name corpus dict; do
  [[ -n $name ]] || continue
  if [[ ${#only[@]} -gt 0 && " ${only[*]} " != *" $name "* ]]; then continue; fi
  dir=$work/$name
  rm -rf "$dir"
  mkdir -p "$dir/corpus" "$dir/artifacts"
  find "$corpus" -maxdepth 1 -type f -exec cp {} "$dir/corpus/" \;
  echo "== $name: ${seconds}s on $(ls "$dir/corpus" | wc -l) seeds (log: $dir/fuzz.log)"
  # -max_len: seeds past 64 KiB (the 7 MB username) are read truncated, mutants stay small.
  # -timeout: an input running 25 s is a hang.
  nice -n 10 "$build/tests/fuzz/${name}_fuzz" "$dir/corpus" -dict="$dict" -max_total_time="$seconds" \
    -max_len=65536 -timeout=25 -rss_limit_mb=4096 -print_final_stats=1 -artifact_prefix="$dir/artifacts/" \
    >"$dir/fuzz.log" 2>&1
  status=$?
  last=$(grep -E '^#[0-9]+' "$dir/fuzz.log" | tail -n 1)
  execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$dir/fuzz.log")
  speed=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$dir/fuzz.log")
  line="$name: ${execs:-?} executions, ${speed:-?} exec/s, last: ${last:-none}"
  summary+=("$line")
  if [[ $status -ne 0 ]]; then
    failed+=("$name")
    echo "!! $name failed (status $status); saved inputs: $(ls "$dir/artifacts" | tr '\n' ' ')"
    grep -E 'ERROR: |SUMMARY: |runtime error|#[0-9]+ 0x' "$dir/fuzz.log" | head -n 40
  fi
  echo "$line"
done <"$list"

echo
echo "== fuzzing summary (${seconds}s per target)"
printf '%s\n' "${summary[@]}"
if [[ ${#failed[@]} -gt 0 ]]; then
  echo "FAILED: ${failed[*]} (inputs under $work/<target>/artifacts/)"
  exit 1
fi
