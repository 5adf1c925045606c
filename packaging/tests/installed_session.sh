#!/usr/bin/env bash
# One session with an installed appliance, run by install_test.sh inside a network namespace
# that has only loopback: starts the daemon in the installed root as its service user, then,
# over HTTPS trusting only the certificate the package made, signs in as the first
# administrator with the one-time password the installer printed, changes it, creates an API
# key, waits for the model the installer activated, and passes a chat completion with that
# key. Stops the daemon with SIGTERM (it drains and exits 0). Under strace where it can trace,
# every IP address the daemon connected or sent to must be loopback.
#
# usage: installed_session.sh ROOT ONE_TIME_PASSWORD     (as root, in the namespace)
set -euo pipefail

root=${1:?usage: installed_session.sh ROOT ONE_TIME_PASSWORD}
otp=${2:?usage: installed_session.sh ROOT ONE_TIME_PASSWORD}
base=https://127.0.0.1:8443
cert="$root/var/lib/kimi-appliance/tls/cert.pem"
log="$root/var/log/kimi-appliance/daemon.log"
work=$(mktemp -d)
pid=
stopped=no
# Nothing outlives the session: a daemon still running when it ends, on a failure too, is killed.
trap '[ -z "$pid" ] || [ "$stopped" = yes ] || kill -KILL "$pid" 2>/dev/null || true; rm -rf "$work"' EXIT
fail() { echo "FAIL: $*"; echo "--- daemon log"; tail -40 "$log"; exit 1; }
# A JSON field of a file, by a Python expression on `j` (the test host's python3; the
# installed root is a minimal Debian without it).
field() { python3 -c 'import json, sys; j = json.load(open(sys.argv[1])); print(eval(sys.argv[2]))' "$1" "$2"; }
# curl over HTTPS with the installed certificate as the only CA; prints the status code and
# leaves the body in $work/body.
call() {
  curl -sS --noproxy "*" --max-time 120 --cacert "$cert" -o "$work/body" -w "%{http_code}" "$@"
}

ip link set lo up
mount -t proc proc "$root/proc"
# The daemon's connect and send calls are traced where strace can trace (docs/operations.md,
# No phone-home); strace -D keeps the daemon's pid for $!, so SIGTERM still reaches it.
trace="$work/daemon.trace"
tracer=()
if command -v strace >/dev/null && strace -o /dev/null -e trace=none true 2>/dev/null; then
  tracer=(strace -D -f -q -e signal=none -e trace=connect,sendto,sendmsg,sendmmsg -o "$trace")
fi
# chroot execs the daemon (no runuser in between), so $pid is the daemon and SIGTERM reaches it.
"${tracer[@]}" chroot --userspec=kimi:kimi "$root" kimi-appliance --config /etc/kimi-appliance/appliance.json \
  --log-format text 2>"$log" &
pid=$!

healthy=no
for _ in $(seq 100); do
  if [ "$(call "$base/healthz" 2>/dev/null)" = 200 ]; then healthy=yes; break; fi
  sleep 0.2
done
[ "$healthy" = yes ] || fail "no 200 from $base/healthz"
echo "healthz over https: 200"
plain=$(curl -s -o /dev/null -w "%{http_code}" --max-time 5 --noproxy "*" http://127.0.0.1:8443/healthz || true)
[ "$plain" != 200 ] || fail "plain HTTP answered 200"
echo "plain http to the port: $plain"

# The first administrator: the one-time password works once and must be changed first.
printf '{"username": "admin", "password": "%s"}' "$otp" >"$work/login.json"
status=$(call -D "$work/headers" -H "Content-Type: application/json" --data-binary @"$work/login.json" "$base/admin/v1/session")
[ "$status" = 200 ] || fail "sign-in with the one-time password: $status $(cat "$work/body")"
[ "$(field "$work/body" 'j["must_change_password"]')" = True ] || fail "the one-time password need not be changed"
csrf=$(field "$work/body" 'j["csrf_token"]')
session=$(sed -n 's/^[Ss]et-[Cc]ookie: kimi_session=\([^;]*\);.*/\1/p' "$work/headers")
[ -n "$session" ] || fail "no session cookie"
as_admin=(-H "Cookie: kimi_session=$session" -H "X-CSRF-Token: $csrf" -H "Content-Type: application/json")
printf '{"old_password": "%s", "new_password": "a-fresh-console-passphrase"}' "$otp" >"$work/change.json"
status=$(call -D "$work/headers" "${as_admin[@]}" --data-binary @"$work/change.json" "$base/admin/v1/session/password")
[ "$status" = 200 ] || fail "password change: $status $(cat "$work/body")"
# The change ends the session it was made with and answers a new one.
old_session=("${as_admin[@]}")
csrf=$(field "$work/body" 'j["csrf_token"]')
session=$(sed -n 's/^[Ss]et-[Cc]ookie: kimi_session=\([^;]*\);.*/\1/p' "$work/headers")
[ -n "$session" ] || fail "no new session cookie after the password change"
as_admin=(-H "Cookie: kimi_session=$session" -H "X-CSRF-Token: $csrf" -H "Content-Type: application/json")
status=$(call "${old_session[@]}" --data-binary '{"name": "stale", "role": "user"}' "$base/admin/v1/keys")
[ "$status" = 401 ] || fail "the session the password was changed with still answers $status"
echo "signed in as admin with the one-time password and changed it"

status=$(call "${as_admin[@]}" --data-binary '{"name": "install-test", "role": "user"}' "$base/admin/v1/keys")
[ "$status" = 201 ] || fail "API key creation: $status $(cat "$work/body")"
api_key=$(field "$work/body" 'j["key"]')
echo "created API key $(field "$work/body" 'j["id"]')"

# The model the installer imported and activated, then a chat completion with the new key.
ready=no
for _ in $(seq 300); do
  call "$base/readyz" >/dev/null 2>&1 || true
  if [ "$(field "$work/body" 'j["components"].get("model", {}).get("ready", False)' 2>/dev/null)" = True ]; then
    ready=yes; break
  fi
  sleep 0.2
done
[ "$ready" = yes ] || fail "the model did not become ready: $(cat "$work/body")"
status=$(call -H "Authorization: Bearer $api_key" "$base/v1/models")
[ "$status" = 200 ] || fail "/v1/models: $status $(cat "$work/body")"
echo "served: $(field "$work/body" '[(m["id"], m.get("version")) for m in j["data"]]')"
request='{"model": "kimi-k3", "messages": [{"role": "user", "content": "Say hello."}], "max_tokens": 8, "temperature": 0}'
status=$(call -H "Authorization: Bearer $api_key" -H "Content-Type: application/json" --data-binary "$request" \
  "$base/v1/chat/completions")
[ "$status" = 200 ] || fail "chat completion: $status $(cat "$work/body")"
# Structure only: the demo model has random weights, so what it says is not asserted.
shape='j["object"] == "chat.completion" and j["choices"][0]["message"]["role"] == "assistant" and j["usage"]["completion_tokens"] >= 1'
[ "$(field "$work/body" "$shape")" = True ] || fail "chat completion reply: $(cat "$work/body")"
echo "chat completion over https: 200, $(field "$work/body" 'j["usage"]["completion_tokens"]') tokens," \
  "finish_reason $(field "$work/body" 'j["choices"][0]["finish_reason"]')"
status=$(call -H "Content-Type: application/json" --data-binary "$request" "$base/v1/chat/completions")
[ "$status" = 401 ] || fail "a chat completion without a key: $status"

kill -TERM "$pid"
code=0
wait "$pid" || code=$?
stopped=yes
[ "$code" = 0 ] || fail "the daemon exited $code after SIGTERM"
echo "daemon stopped cleanly"

if [ ${#tracer[@]} -gt 0 ]; then
  for _ in $(seq 300); do
    grep -Eq "^$pid +\+\+\+ exited" "$trace" && break
    sleep 0.1
  done
  grep -Eq "^$pid +\+\+\+ exited" "$trace" || fail "strace did not finish its trace"
  addressed=$(grep -Ec 'sa_family=AF_INET6?,' "$trace" || true)
  outbound=$(grep -E 'sa_family=AF_INET6?,' "$trace" |
    grep -Ev 'inet_addr\("127\.|inet_pton\(AF_INET6, "(::1|::ffff:127\.[0-9.]+)"' || true)
  [ -z "$outbound" ] || fail "the installed daemon addressed a destination that is not loopback: $outbound"
  echo "no phone-home: $(wc -l <"$trace") traced connect/send calls, $addressed of them with an IP address, none but loopback"
else
  echo "skip: strace cannot trace here; the daemon's connections were not traced"
fi
