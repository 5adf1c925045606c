#!/usr/bin/env bash
# Runs Moonshot's vendor verifier (its pytest suites tests/params and tests/k3_features) against
# the appliance set up the way `make run` sets it up: the signed k3-nano demo model served as
# kimi-k3 from a var/ prepared by appliance/dev/prepare-var.sh, an API key, plain HTTP on a free
# loopback port. Each suite runs once per thinking mode (kimi, opensource); a summary follows.
#
# Not part of `make test`: the verifier and its Python client (the `openai` package) come from
# outside the project, and CI cannot fetch them. docs/api.md ("Moonshot's verifier") says how
# this was run last and which cases cannot apply to a random-weight model.
#
# usage: tests/verifier/run_moonshot_suites.sh VERIFIER_DIR [CLIENT_PYTHONPATH] [-- PYTEST_ARGS...]
#   VERIFIER_DIR        a checkout of Moonshot's Kimi-Vendor-Verifier
#   CLIENT_PYTHONPATH   prepended to PYTHONPATH: where the `openai` package (and anything else
#                       the verifier imports that the Python below lacks) can be found
# environment:
#   BUILD_DIR   the build tree with kimi-appliance, kimictl, kimi-engine (default: build)
#   PYTHON      the interpreter that has pytest and httpx (default: /usr/bin/python3)
#   SUITES      default "tests/params tests/k3_features"
#   MODES       default "kimi opensource"
#   OUT_DIR     where the daemon log and one pytest log per run go (default: a new temp dir)
#   PYTEST_PLUGINS is passed through to pytest as usual.
# Exit status: 0 when every run passed, 1 when any failed, 2 on a set-up error.
set -euo pipefail

usage() { sed -n '11,21p' "$0" | sed 's/^# \{0,1\}//' >&2; exit 2; }

[ $# -ge 1 ] || usage
verifier_dir=$(cd "$1" && pwd) || usage
shift
client_path=""
if [ $# -ge 1 ] && [ "$1" != "--" ]; then client_path=$1; shift; fi
if [ $# -ge 1 ] && [ "$1" = "--" ]; then shift; fi
pytest_args=("$@")

source_dir=$(cd "$(dirname "$0")/../.." && pwd)
build_dir=$(cd "${BUILD_DIR:-$source_dir/build}" && pwd)
python=${PYTHON:-/usr/bin/python3}
suites=${SUITES:-"tests/params tests/k3_features"}
modes=${MODES:-"kimi opensource"}
out_dir=${OUT_DIR:-$(mktemp -d /tmp/moonshot-verifier.XXXXXX)}
mkdir -p "$out_dir"

for suite in $suites; do
  [ -d "$verifier_dir/$suite" ] || { echo "run_moonshot_suites: $verifier_dir/$suite is missing" >&2; exit 2; }
done
for tool in appliance/kimi-appliance appliance/kimictl engine/kimi-engine; do
  [ -x "$build_dir/$tool" ] || { echo "run_moonshot_suites: $build_dir/$tool is missing; build first" >&2; exit 2; }
done

# The var/ of `make run`, in a scratch directory, on a free port (the daemon picks it).
var_dir="$out_dir/var"
"$source_dir/appliance/dev/prepare-var.sh" "$build_dir" "$var_dir" >"$out_dir/prepare-var.log"
sed -i 's/"listen": "127.0.0.1:8080"/"listen": "127.0.0.1:0"/' "$var_dir/appliance.json"
grep -q '"listen": "127.0.0.1:0"' "$var_dir/appliance.json" ||
  { echo "run_moonshot_suites: could not move $var_dir/appliance.json to a free port" >&2; exit 2; }
api_key=$("$build_dir/appliance/kimictl" key create --data-dir "$var_dir/data" --name moonshot-verifier \
            --role user 2>>"$out_dir/prepare-var.log")

daemon_log="$out_dir/daemon.log"
"$build_dir/appliance/kimi-appliance" --config "$var_dir/appliance.json" \
  --console-assets "$source_dir/admin-ui" >"$daemon_log" 2>&1 &
daemon_pid=$!
trap 'kill "$daemon_pid" 2>/dev/null; wait "$daemon_pid" 2>/dev/null || true' EXIT

# The port from the "listening" log line, then the model ready on /readyz.
base=""
for _ in $(seq 1 600); do
  kill -0 "$daemon_pid" 2>/dev/null || { echo "run_moonshot_suites: the daemon exited; see $daemon_log" >&2; exit 2; }
  if [ -z "$base" ]; then
    address=$(sed -n 's/.*"msg":"listening","address":"\([0-9.:]*\)".*/\1/p' "$daemon_log" | head -1)
    [ -n "$address" ] && base="http://$address"
  fi
  if [ -n "$base" ] && "$python" -c 'import sys, urllib.request
sys.exit(0 if urllib.request.urlopen(sys.argv[1] + "/readyz", timeout=5).status == 200 else 1)' "$base" 2>/dev/null; then
    break
  fi
  sleep 0.5
done
[ -n "$base" ] || { echo "run_moonshot_suites: no listening line in $daemon_log" >&2; exit 2; }
echo "run_moonshot_suites: appliance at $base (model kimi-k3), logs in $out_dir"

export PYTHONPATH="${client_path}${client_path:+${PYTHONPATH:+:}}${PYTHONPATH:-}"
summary=()
status=0
for suite in $suites; do
  for mode in $modes; do
    log="$out_dir/$(echo "$suite" | tr '/' '_')-$mode.log"
    echo "run_moonshot_suites: $suite --think-mode $mode"
    set +e
    (cd "$verifier_dir" && "$python" -m pytest "$suite" --base-url "$base/v1" --api-key "$api_key" \
       --smoke-model kimi-k3 --think-mode "$mode" -o addopts= -p no:cacheprovider -rfEs \
       "${pytest_args[@]}") >"$log" 2>&1
    code=$?
    set -e
    [ $code -eq 0 ] || status=1
    # pytest's closing line, e.g. "==== 2 failed, 83 passed, 18 skipped in 9.1s ====".
    result=$(grep -E '^=+ .*( passed| failed| error| skipped| no tests ran).* =+$' "$log" | tail -1 | sed 's/^=* //; s/ =*$//')
    summary+=("$(printf '%-20s %-11s exit %d  %s' "$suite" "$mode" "$code" "${result:-no pytest summary; see $log}")")
  done
done

echo "run_moonshot_suites: summary (logs in $out_dir)"
printf '  %s\n' "${summary[@]}"
exit $status
