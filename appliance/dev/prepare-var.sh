#!/usr/bin/env bash
# Prepares var/ for `make run`: a development configuration that serves plain HTTP on
# 127.0.0.1:8080, var/data for the database, and a signed demo model for the embedded engine:
#   var/model/k3-nano    the k3-nano preset (random weights) with Kimi's own tokenizer from
#                        data/kimi-k3 and so K3's 163,840-id vocabulary (kimi-engine synth), signed
#   var/keys/            a development signing key (kimictl keygen); never leaves this machine
#   var/trust/           the trust store: the development public key
#   and (once) the first console admin, whose one-time password it prints.
#
# Idempotent and respectful of the operator: an existing var/appliance.json is never
# overwritten (it is checked with kimictl instead, so a broken edit is reported before the
# daemon starts); an existing model, key or signature is kept (a model that no longer matches
# its signature stays refused by the daemon, as it should be). Prints the URL the daemon
# will serve.
#
# usage: appliance/dev/prepare-var.sh [BUILD_DIR] [VAR_DIR]
set -euo pipefail

build_dir=${1:-build}
var_dir=${2:-var}
config="$var_dir/appliance.json"
kimictl="$build_dir/appliance/kimictl"
engine="$build_dir/engine/kimi-engine"
# Kimi's ranks, shipped with the source: prompt_tokens then count as Moonshot counts them.
tokenizer="$(cd "$(dirname "$0")/../.." && pwd)/data/kimi-k3"

for tool in "$kimictl" "$engine"; do
  if [ ! -x "$tool" ]; then
    echo "prepare-var: $tool is missing; build first (make build)" >&2
    exit 1
  fi
done

mkdir -p "$var_dir/data"
chmod 700 "$var_dir/data"

# The demo model, written to a scratch directory and moved into place whole.
model="$var_dir/model/k3-nano"
if [ -e "$model/config.json" ]; then
  echo "prepare-var: keeping existing $model"
  if ! cmp -s "$model/tiktoken.model" "$tokenizer/tiktoken.model"; then
    echo "prepare-var: $model does not have Kimi's tokenizer, so prompt_tokens will not count as" \
         "Moonshot's do; delete $model to get a demo model that has it"
  fi
else
  mkdir -p "$var_dir/model"
  rm -rf "$model.partial"
  "$engine" synth --preset k3-nano --tokenizer "$tokenizer" --out "$model.partial" >/dev/null
  rm -rf "$model"
  mv "$model.partial" "$model"
  echo "prepare-var: synthesised the k3-nano demo model (random weights, Kimi's tokenizer) in $model"
fi

key="$var_dir/keys/dev-signing-key"
if [ -e "$key.pem" ]; then
  echo "prepare-var: keeping existing signing key $key.pem"
else
  mkdir -p "$var_dir/keys"
  chmod 700 "$var_dir/keys"
  "$kimictl" keygen --out "$key" >/dev/null
  echo "prepare-var: made a development signing key $key.pem"
fi

mkdir -p "$var_dir/trust"
if [ ! -e "$var_dir/trust/dev-signing-key.pub.pem" ]; then
  cp "$key.pub.pem" "$var_dir/trust/dev-signing-key.pub.pem"
  echo "prepare-var: trusting $key.pub.pem (in $var_dir/trust)"
fi

if [ -e "$model/model.sig" ]; then
  echo "prepare-var: keeping existing signature $model/model.sig"
else
  "$kimictl" model sign --key "$key.pem" --quiet "$model" >/dev/null
  echo "prepare-var: signed $model"
fi

if [ -e "$config" ]; then
  echo "prepare-var: keeping existing $config"
else
  tmp=$(mktemp "$var_dir/.appliance.json.XXXXXX")
  cat >"$tmp" <<'JSON'
{
  "server": { "listen": "127.0.0.1:8080", "allow_plain_http_on_loopback": true },
  "storage": { "data_dir": "data" },
  "log": { "level": "info", "format": "auto" },
  "model": { "dir": "model/k3-nano", "trust_store": "trust", "served_id": "kimi-k3" }
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

if ! grep -q '"model"' "$config"; then
  echo "prepare-var: $config has no \"model\" section, so the API will answer 503; add" \
       "\"model\": {\"dir\": \"model/k3-nano\", \"trust_store\": \"trust\"} to serve the demo model"
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
  *) echo "prepare-var: kimi-appliance will serve http://$listen/  (/v1/chat/completions, /v1/models, /readyz, /metrics; Ctrl-C stops it)"
     echo "prepare-var: the console: http://$listen/console/  (sign in as admin)" ;;
esac
