#!/usr/bin/env bash
# Prepares var/ for `make run`: a development configuration that serves plain HTTP on
# 127.0.0.1:8080, var/data for the database, and (once) the first console admin, whose
# one-time password it prints.
#
# Idempotent and respectful of the operator: an existing var/appliance.json is never
# overwritten (it is checked with kimictl instead, so a broken edit is reported before the
# daemon starts). Prints the URL the daemon will serve.
#
# usage: appliance/dev/prepare-var.sh [BUILD_DIR] [VAR_DIR]
set -euo pipefail

build_dir=${1:-build}
var_dir=${2:-var}
config="$var_dir/appliance.json"
kimictl="$build_dir/appliance/kimictl"

if [ ! -x "$kimictl" ]; then
  echo "prepare-var: $kimictl is missing; build first (make build)" >&2
  exit 1
fi

mkdir -p "$var_dir/data"
chmod 700 "$var_dir/data"

if [ -e "$config" ]; then
  echo "prepare-var: keeping existing $config"
else
  tmp=$(mktemp "$var_dir/.appliance.json.XXXXXX")
  cat >"$tmp" <<'JSON'
{
  "server": { "listen": "127.0.0.1:8080", "allow_plain_http_on_loopback": true },
  "storage": { "data_dir": "data" },
  "log": { "level": "info", "format": "auto" }
}
JSON
  chmod 644 "$tmp"
  # mv -n: should another process have created the file meanwhile, keep theirs.
  mv -n "$tmp" "$config"
  rm -f "$tmp"
  echo "prepare-var: wrote $config (data in $var_dir/data)"
fi

if ! "$kimictl" config check --config "$config" >/dev/null; then
  echo "prepare-var: fix $config (or delete it to get the development default)" >&2
  exit 1
fi

# The first console admin, once: its one-time password is printed here and never again.
if otp=$("$kimictl" admin bootstrap --config "$config" 2>"$var_dir/.bootstrap.err"); then
  echo "prepare-var: console admin 'admin' created; one-time password (change it at first login): $otp"
elif ! grep -q "already has users" "$var_dir/.bootstrap.err"; then
  cat "$var_dir/.bootstrap.err" >&2; rm -f "$var_dir/.bootstrap.err"; exit 1
fi
rm -f "$var_dir/.bootstrap.err"

listen=$(python3 -c '
import json, sys
with open(sys.argv[1]) as f:
    print(json.load(f).get("server", {}).get("listen", "127.0.0.1:8080"))
' "$config")
case "$listen" in
  *:0) echo "prepare-var: kimi-appliance will serve on a free port of ${listen%:0} (see its \"listening\" log line)" ;;
  *) echo "prepare-var: kimi-appliance will serve http://$listen/  (/healthz, /readyz, /metrics; Ctrl-C stops it)" ;;
esac
