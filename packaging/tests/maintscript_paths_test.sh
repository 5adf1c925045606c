#!/usr/bin/env bash
# The postinst's path handling (packaging/debian/kimi-appliance/maintscript-paths.sh), run on
# a staged root in a temporary directory: a clean root gets every directory with its owner
# and mode; a symbolic or hard link planted where the package keeps a directory or the
# configuration (what a compromised service account can do in /var/lib/kimi-appliance) is
# refused with a message and a non-zero status, and whatever it points to keeps its owner,
# mode and contents. As root the owners are nobody/nogroup; otherwise the caller's own user
# and group, so the checks of links and modes run without root too.
#
# usage: packaging/tests/maintscript_paths_test.sh
set -uo pipefail

here=$(cd "$(dirname "$0")" && pwd)
lib="$here/../debian/kimi-appliance/maintscript-paths.sh"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
failures=0
fail() { echo "FAIL: $*" >&2; failures=$((failures + 1)); }
pass() { echo "ok: $*"; }

if [ "$(id -u)" -eq 0 ]; then
  export KIMI_ADMIN_USER=root KIMI_USER=nobody KIMI_GROUP=nogroup KIMI_LOG_GROUP=nogroup
else
  export KIMI_ADMIN_USER=$(id -un) KIMI_USER=$(id -un) KIMI_GROUP=$(id -gn) KIMI_LOG_GROUP=$(id -gn)
fi

# A root as dpkg leaves it before the postinst: the configuration unpacked, nothing else.
stage() {
  mkdir -p "$1/etc/kimi-appliance" "$1/var/lib" "$1/var/log"
  echo '{}' >"$1/etc/kimi-appliance/appliance.json"
}
# The postinst's call, in a subshell as the postinst runs it (set -e, the library sourced).
prepare() { (set -e; . "$lib"; kimi_prepare_paths "$1") 2>"$work/stderr"; }
state() { stat -c '%U:%G %a' "$1"; }
# A directory the service account must not get: another owner's (root's when run as root).
victim() {
  mkdir -p "$1" && echo secret >"$1/file" && chmod 0755 "$1" && chmod 0644 "$1/file"
  [ "$(id -u)" -ne 0 ] || chown root:root "$1" "$1/file"
}
expect_refused() {  # NAME LINK VICTIM WORDS: the run failed, named the link, left the victim alone
  local name=$1 link=$2 victim=$3 words=$4 before=$5
  if [ "$rc" -ne 0 ]; then pass "$name: refused (exit $rc)"; else fail "$name: the postinst logic went on through the link"; fi
  grep -q -- "$words" "$work/stderr" && pass "$name: the message says why: $(head -1 "$work/stderr")" ||
    fail "$name: message: $(cat "$work/stderr")"
  [ -L "$link" ] && pass "$name: the link is left as it was, not followed" || fail "$name: $link is no longer the link"
  [ "$(state "$victim")" = "$before" ] && pass "$name: its target keeps owner and mode ($before)" ||
    fail "$name: its target changed from $before to $(state "$victim")"
}

# 1. A clean root: every directory, parents first, with its owner and mode.
root="$work/clean"
stage "$root"
if prepare "$root"; then pass "clean root prepared"; else fail "clean root: $(cat "$work/stderr")"; fi
for spec in "etc/kimi-appliance $KIMI_ADMIN_USER:$KIMI_GROUP 750" "etc/kimi-appliance/trust $KIMI_ADMIN_USER:$KIMI_GROUP 750" \
            "var/lib/kimi-appliance $KIMI_USER:$KIMI_GROUP 700" "var/lib/kimi-appliance/tls $KIMI_USER:$KIMI_GROUP 700" \
            "var/log/kimi-appliance $KIMI_USER:$KIMI_LOG_GROUP 750" \
            "etc/kimi-appliance/appliance.json $KIMI_ADMIN_USER:$KIMI_GROUP 640"; do
  read -r path want_owner want_mode <<<"$spec"
  got=$(state "$root/$path")
  [ "$got" = "$want_owner $want_mode" ] && pass "/$path is $got" || fail "/$path is $got, want $want_owner $want_mode"
done
# Running it again (an upgrade) changes nothing and succeeds.
prepare "$root" && pass "a second run succeeds" || fail "second run: $(cat "$work/stderr")"

# 2. The finding: tls -> a directory of the attacker's choice, in the account's data directory.
root="$work/tls-link"
stage "$root"
prepare "$root" || fail "staging: $(cat "$work/stderr")"
victim "$work/victim-dir"
before=$(state "$work/victim-dir")
rmdir "$root/var/lib/kimi-appliance/tls"
ln -s "$work/victim-dir" "$root/var/lib/kimi-appliance/tls"
prepare "$root"; rc=$?
expect_refused "tls -> victim" "$root/var/lib/kimi-appliance/tls" "$work/victim-dir" "tls is a symbolic link" "$before"
[ "$(state "$work/victim-dir/file")" = "$(id -un):$(id -gn) 644" ] || [ "$(id -u)" -eq 0 ] ||
  fail "the victim's file changed: $(state "$work/victim-dir/file")"
[ "$(cat "$work/victim-dir/file")" = secret ] && pass "the victim's file is untouched" || fail "the victim's file changed"

# 3. The same for every other directory the package makes, and for a dangling link (mkdir
# through it would create the target).
for path in var/lib/kimi-appliance var/log/kimi-appliance etc/kimi-appliance/trust; do
  root="$work/link-$(echo "$path" | tr / -)"
  stage "$root"
  mkdir -p "$(dirname "$root/$path")"
  victim "$work/victim-${path//\//-}"
  before=$(state "$work/victim-${path//\//-}")
  ln -s "$work/victim-${path//\//-}" "$root/$path"
  prepare "$root"; rc=$?
  expect_refused "/$path -> victim" "$root/$path" "$work/victim-${path//\//-}" "is a symbolic link" "$before"
done
root="$work/dangling"
stage "$root"
prepare "$root" || fail "staging: $(cat "$work/stderr")"
rmdir "$root/var/lib/kimi-appliance/tls"
ln -s "$work/not-yet" "$root/var/lib/kimi-appliance/tls"
prepare "$root"; rc=$?
[ "$rc" -ne 0 ] && [ ! -e "$work/not-yet" ] && pass "a dangling tls link is refused and its target not created" ||
  fail "dangling link: exit $rc, target exists: $([ -e "$work/not-yet" ] && echo yes || echo no)"

# 4. The configuration as a symbolic link, and as a hard link to another file.
root="$work/config-link"
stage "$root"
victim "$work/victim-config"
before=$(state "$work/victim-config/file")
rm "$root/etc/kimi-appliance/appliance.json"
ln -s "$work/victim-config/file" "$root/etc/kimi-appliance/appliance.json"
prepare "$root"; rc=$?
expect_refused "appliance.json -> victim" "$root/etc/kimi-appliance/appliance.json" "$work/victim-config/file" \
  "not a regular file" "$before"
root="$work/config-hardlink"
stage "$root"
victim "$work/victim-hard"
rm "$root/etc/kimi-appliance/appliance.json"
if ln "$work/victim-hard/file" "$root/etc/kimi-appliance/appliance.json" 2>/dev/null; then
  before=$(state "$work/victim-hard/file")
  prepare "$root"; rc=$?
  [ "$rc" -ne 0 ] && grep -q "hard links" "$work/stderr" && [ "$(state "$work/victim-hard/file")" = "$before" ] &&
    pass "a hard-linked configuration is refused and the other file keeps $before" ||
    fail "hard link: exit $rc, $(cat "$work/stderr"), victim now $(state "$work/victim-hard/file")"
else
  echo "skip: this filesystem refuses the hard link (fs.protected_hardlinks)"
fi

# 5. The package's scripts use the library and nothing else on these paths: no install -d,
# chown or chmod of their own, the service stopped around the postinst and by the prerm on
# an upgrade, and kimictl run as the service account in its own directory.
scripts="$here/../debian/kimi-appliance"
grep -q 'kimi_prepare_paths' "$scripts/postinst" && pass "postinst prepares its paths with the library" ||
  fail "postinst does not call kimi_prepare_paths"
if grep -nE '^\s*[^#]*\b(install -d|chown|chmod|mkdir)\b' "$scripts/postinst" "$scripts/prerm" "$scripts/postrm"; then
  fail "a maintainer script changes paths itself (above)"
else
  pass "no maintainer script runs install -d, chown, chmod or mkdir itself"
fi
grep -q 'deb-systemd-invoke stop kimi-appliance.service' "$scripts/postinst" && pass "postinst stops a running service first" ||
  fail "postinst does not stop the service"
grep -q 'remove|upgrade|deconfigure)' "$scripts/prerm" && pass "prerm stops the service for an upgrade too" ||
  fail "prerm does not stop the service on upgrade"
if grep -n 'kimictl tls selfsigned' "$scripts/postinst" | grep -v 'runuser -u kimi --'; then
  fail "postinst runs kimictl as root in the service account's directory (above)"
else
  pass "postinst makes the TLS files as the service account"
fi
for script in postinst prerm postrm; do sh -n "$scripts/$script" || fail "$script is not valid sh"; done
sh -n "$lib" && pass "the library is valid sh" || fail "the library is not valid sh"

[ "$failures" -eq 0 ] || { echo "$failures failure(s)" >&2; exit 1; }
echo "all maintainer path checks passed"
