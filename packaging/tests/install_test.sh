#!/usr/bin/env bash
# End-to-end offline install (make test-install): builds the ISO with the signed demo model,
# makes a minimal Debian 12 root with debootstrap (minbase), puts the medium in it as the operator's
# mount would, and runs the installer in a network namespace that has only loopback. Then:
#   - the one-time password of the first administrator is printed but not logged, the audit
#     key exists, the model is imported and active; a re-run and an --upgrade create nothing;
#   - the installed daemon, in the same kind of namespace, answers over HTTPS: the admin signs
#     in with the one-time password, changes it, creates an API key, and a chat completion
#     with that key passes (installed_session.sh); then `kimictl audit verify` passes;
#   - refusals: a medium whose model was changed and whose SHA256SUMS was signed again
#     (the distributor's own mistake) is refused by the model's signature; a medium with one
#     byte changed in the model, or in a package, is refused by SHA256SUMS before anything
#     is installed; a medium given, after signing, a second SHA256SUMS holding a key and a
#     model-trust/ link to it is refused, the trust store unchanged.
# First, before anything that needs the build, a small medium signed with a key of the test's
# own, changed in each way a hostile medium could be (a link, a FIFO, a device, a line break in
# a name, a file the signed list does not name or lacks), must be refused by the medium check.
# The test sends no packet off the machine: the medium's Debian packages and debootstrap's come
# from caches in BUILD_DIR (deb-cache/, debootstrap/) that packaging/test-deps.sh fills before
# `make test`; without them the test skips (77) and says so.
#
# usage: packaging/tests/install_test.sh BUILD_DIR     (as root; CTest packaging_install)
set -euo pipefail

build_dir=$(cd "${1:?usage: install_test.sh BUILD_DIR}" && pwd)
src_dir=$(cd "$(dirname "$0")/../.." && pwd)
# Exit 77 (CTest's skip) where it cannot run at all; every other failure is a failure.
[ "$(id -u)" -eq 0 ] || { echo "skip: install_test needs root (debootstrap, chroot, namespaces)"; exit 77; }
need_tools() {
  for tool in "$@"; do
    command -v "$tool" >/dev/null || { echo "skip: install_test needs $tool (packaging/build-deps.sh)"; exit 77; }
  done
}
need_tools unshare gpg gpgv
unshare --net true 2>/dev/null || { echo "skip: install_test cannot make a network namespace here"; exit 77; }

work=$(mktemp -d)
cleanup() {
  for root in "$work"/root-*; do
    [ -d "$root" ] && umount -R "$root/proc" 2>/dev/null || true
  done
  gpgconf --homedir "$work/gnupg" --kill gpg-agent 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT
step() { echo "== $*"; }
fail() { echo "FAIL: $*"; exit 1; }
sign_medium() {  # $1: a medium directory; $2: the GnuPG home whose key signs. As build-iso.sh does.
  (cd "$1" && find . -type f ! -path ./SHA256SUMS ! -path ./SHA256SUMS.sig -printf '%P\0' | LC_ALL=C sort -z |
    xargs -0 sha256sum >SHA256SUMS)
  GNUPGHOME="$2" gpg --batch --yes --quiet --detach-sign -o "$1/SHA256SUMS.sig" "$1/SHA256SUMS"
}

step "a small medium changed after signing is refused by the medium check, whatever the change"
mkdir -m 0700 "$work/gnupg"
GNUPGHOME="$work/gnupg" gpg --batch --quiet --pinentry-mode loopback --passphrase '' \
  --quick-gen-key "install test <test@kimi-appliance.local>" ed25519 sign never
GNUPGHOME="$work/gnupg" gpg --batch --armor --export >"$work/test-key.asc"
# The installer runs on this host, so it gets no network, its log on a tmpfs, and an apt-get
# that only says the medium check was passed: nothing of the host is changed even where the
# check fails to refuse.
mkdir "$work/no-apt"
printf '#!/bin/sh\necho "apt-get: the installer passed the medium check" >&2\nexit 1\n' >"$work/no-apt/apt-get"
chmod 0755 "$work/no-apt/apt-get"
small_medium() {  # a fresh signed $work/medium: the installer, its README, one model signer's key
  rm -rf "$work/medium"
  mkdir -p "$work/medium/model-trust"
  cp "$src_dir/installer/install.sh" "$work/medium/"
  cp "$src_dir/installer/README.medium" "$work/medium/README.txt"
  printf '%s\n' '-----BEGIN PUBLIC KEY-----' signer '-----END PUBLIC KEY-----' >"$work/medium/model-trust/signer.pem"
  sign_medium "$work/medium" "$work/gnupg"
}
check_small_medium() {  # the installer on $work/medium, its output in $work/medium.log; 124 where it hung
  # A new PID namespace: whatever the installer left blocked (on a FIFO) dies with it.
  timeout 60 unshare --net --mount --pid --fork --kill-child \
    sh -c 'mount -t tmpfs tmpfs /var/log && PATH="$0:$PATH" exec "$@"' "$work/no-apt" \
    "$work/medium/install.sh" --key "$work/test-key.asc" >"$work/medium.log" 2>&1
}
small_medium
check_small_medium || true
grep -q "medium verified" "$work/medium.log" && grep -q "passed the medium check" "$work/medium.log" ||
  { cat "$work/medium.log"; fail "the unchanged small medium did not pass the medium check"; }
echo "the unchanged small medium passes the medium check"
# Pairs: what the medium is given after signing, and the commands that give it, run in it.
changes=(
  "a second SHA256SUMS holding a key, and model-trust/evil.pem a link to it"
  'mkdir docs && cp model-trust/signer.pem docs/SHA256SUMS && ln -s ../docs/SHA256SUMS model-trust/evil.pem'
  "a file named SHA256SUMS below the top" 'mkdir docs && printf x >docs/SHA256SUMS'
  "a link to a signed file" 'ln -s README.txt README.link'
  "a FIFO in place of a signed file" 'rm README.txt && mkfifo README.txt'
  "a device" 'mknod model-trust/null.pem c 1 3'
  "a file name with a line break" 'printf x >"$(printf "README.txt\ninstall.sh")"'
  "a file the signed list does not name" 'printf x >model-trust/extra.pem'
  "no longer a file the signed list names" 'rm README.txt'
)
not_refused=()
for ((i = 0; i < ${#changes[@]}; i += 2)); do
  what=${changes[i]}
  small_medium
  (cd "$work/medium" && sh -c "${changes[i + 1]}")
  status=0
  check_small_medium || status=$?
  if [ "$status" = 124 ]; then why="the installer hung"
  elif grep -q "passed the medium check" "$work/medium.log"; then why="it passed the medium check"
  elif ! grep -q "refusing a modified medium" "$work/medium.log"; then why="refused, but not as a modified medium"
  else
    echo "refused, $what: $(grep FAILED "$work/medium.log")"
    continue
  fi
  cat "$work/medium.log"
  echo "NOT REFUSED, $what: $why"
  not_refused+=("$what")
done
[ ${#not_refused[@]} -eq 0 ] || fail "small media not refused as modified: $(printf '%s; ' "${not_refused[@]}")"

need_tools debootstrap xorriso chroot curl python3
step "building the ISO"
tarball="$build_dir/debootstrap/bookworm-minbase.tgz"
[ -f "$tarball" ] || { echo "skip: no cached Debian 12 at $tarball (packaging/test-deps.sh $build_dir makes it)"; exit 77; }
if ! "$src_dir/packaging/iso/build-iso.sh" --build-dir "$build_dir" --out "$work/kimi.iso" --demo-model \
    --deb-cache "$build_dir/deb-cache" --offline >"$work/iso.log" 2>&1; then
  cat "$work/iso.log"
  # The medium carries the Debian packages ours need, from the cache test-deps.sh fills.
  grep -q "not in the package cache" "$work/iso.log" && { echo "skip: packaging/test-deps.sh $build_dir fills the cache"; exit 77; }
  exit 1
fi
gpg_home="$build_dir/distribution-key"
GNUPGHOME="$gpg_home" gpg --batch --armor --export >"$work/distribution-key.asc"


new_root() {  # a fresh minimal Debian 12 under $1, from the cached packages only
  debootstrap --variant=minbase --unpack-tarball="$tarball" bookworm "$1" >"$work/debootstrap-$(basename "$1").log" 2>&1 ||
    { tail -20 "$work/debootstrap-$(basename "$1").log"; return 1; }
  mkdir -p "$1/media/kimi"
  xorriso -osirrox on -indev "$work/kimi.iso" -extract / "$1/media/kimi" >/dev/null 2>&1
  cp "$work/distribution-key.asc" "$1/root/distribution-key.asc"
}
# Runs a command inside the root with no network but loopback (without the test suite's network
# guard, whose library is not in the root: nothing there reaches off the machine anyway).
in_root() {
  local root=$1; shift
  env -u LD_PRELOAD unshare --net --mount --fork sh -c 'ip link set lo up && mount -t proc proc "$0/proc" && exec chroot "$0" "$@"' "$root" "$@"
}

kimictl_in() { local root=$1; shift; in_root "$root" runuser -u kimi -- kimictl "$@"; }

step "installing into a minimal root with no network"
root="$work/root-good"
new_root "$root"
in_root "$root" /media/kimi/install.sh --key /root/distribution-key.asc | tee "$work/install.out"
in_root "$root" dpkg-query -W kimi-appliance kimi-engine
install_log="$root/var/log/kimi-appliance/install.log"
grep -q "medium verified" "$install_log" || fail "install.log lacks the verification step"
otp=$(sed -n 's/^  one-time password: *//p' "$work/install.out")
[ -n "$otp" ] || fail "the installer printed no one-time password"
! grep -qF -- "$otp" "$install_log" || fail "the one-time password is in install.log"
grep -q "first administrator 'admin' created" "$install_log" || fail "install.log lacks the first administrator"
kimi_uid=$(awk -F: '$1 == "kimi" { print $3 }' "$root/etc/passwd")
audit_key="$root/var/lib/kimi-appliance/audit-ed25519.key"
[ "$(stat -c '%a %u %s' "$audit_key")" = "600 $kimi_uid 32" ] || fail "audit key: $(ls -ln "$audit_key")"
audit_key_sum=$(sha256sum <"$audit_key")
grep -Eq "audit log public key: key_id [0-9a-f]{64}" "$install_log" || fail "install.log does not name the audit public key"
ls "$root/etc/kimi-appliance/trust/"*.pem >/dev/null || fail "no model signer in the trust store"
kimictl_in "$root" model list | tee "$work/models.txt"
grep -Eq '^k3 +1 +active ' "$work/models.txt" || fail "the medium's model is not the active version"

step "running the installer again, then with --upgrade: no new administrator, key or model version"
tls_dir="$root/var/lib/kimi-appliance/tls"
cert_sum=$(sha256sum <"$tls_dir/cert.pem")
for args in "" "--upgrade"; do
  # shellcheck disable=SC2086  # $args is one word or none
  in_root "$root" /media/kimi/install.sh --key /root/distribution-key.asc $args >"$work/rerun.out" 2>&1 ||
    { cat "$work/rerun.out"; fail "install.sh $args failed on an installed system"; }
  ! grep -q "one-time password:" "$work/rerun.out" || fail "install.sh $args printed a new password"
  grep -Eq "console users exist already|upgrade: console users kept" "$work/rerun.out" || { cat "$work/rerun.out"; fail "no word on the users"; }
  grep -q "is installed already" "$work/rerun.out" || { cat "$work/rerun.out"; fail "the model was imported again"; }
done
[ "$(sha256sum <"$audit_key")" = "$audit_key_sum" ] || fail "the audit key changed"
[ "$(sha256sum <"$tls_dir/cert.pem")" = "$cert_sum" ] || fail "the certificate changed"
[ "$(kimictl_in "$root" user list | grep -c admin)" = 1 ] || fail "users: $(kimictl_in "$root" user list)"
echo "re-run and --upgrade kept the administrator, the audit key, the certificate and the model"

step "links the service account plants in its directories are not followed by the next configure or install"
mkdir -m 0755 "$root/etc/victim"
victim_state=$(stat -c '%a %u %g' "$root/etc/victim")
in_root "$root" runuser -u kimi -- sh -c \
  'mv /var/lib/kimi-appliance/tls /var/lib/kimi-appliance/tls.kept && ln -s /etc/victim /var/lib/kimi-appliance/tls &&
   ln -s /etc/victim/log /var/log/kimi-appliance/install.log.planted'
version=$(in_root "$root" dpkg-query -W -f='${Version}' kimi-appliance)
if in_root "$root" /var/lib/dpkg/info/kimi-appliance.postinst configure "$version" >"$work/postinst.log" 2>&1; then
  cat "$work/postinst.log"; fail "the postinst configured through a planted tls link"
fi
grep -q "tls is a symbolic link" "$work/postinst.log" || { cat "$work/postinst.log"; fail "postinst refusal without its reason"; }
[ "$(stat -c '%a %u %g' "$root/etc/victim")" = "$victim_state" ] || fail "the postinst changed the link's target: $(ls -ldn "$root/etc/victim")"
[ -z "$(ls -A "$root/etc/victim")" ] || fail "the postinst wrote into the link's target: $(ls -A "$root/etc/victim")"
in_root "$root" runuser -u kimi -- sh -c 'rm /var/lib/kimi-appliance/tls && mv /var/lib/kimi-appliance/tls.kept /var/lib/kimi-appliance/tls'
in_root "$root" /var/lib/dpkg/info/kimi-appliance.postinst configure "$version" >"$work/postinst.log" 2>&1 ||
  { cat "$work/postinst.log"; fail "the postinst failed once the link was gone"; }
# install.log, in the account's log directory, replaced by a link: the installer refuses it.
in_root "$root" runuser -u kimi -- sh -c \
  'mv /var/log/kimi-appliance/install.log /var/log/kimi-appliance/install.log.kept &&
   mv /var/log/kimi-appliance/install.log.planted /var/log/kimi-appliance/install.log'
if in_root "$root" /media/kimi/install.sh --key /root/distribution-key.asc >"$work/linked-log.out" 2>&1; then
  cat "$work/linked-log.out"; fail "install.sh wrote its log through a planted link"
fi
grep -q "is a link or not a plain file" "$work/linked-log.out" || { cat "$work/linked-log.out"; fail "install.sh refusal without its reason"; }
[ ! -e "$root/etc/victim/log" ] || fail "install.sh created the link's target"
in_root "$root" runuser -u kimi -- sh -c \
  'rm /var/log/kimi-appliance/install.log && mv /var/log/kimi-appliance/install.log.kept /var/log/kimi-appliance/install.log'
rmdir "$root/etc/victim"
echo "planted links refused by the postinst and the installer; their targets untouched"

step "serving from the installed root with no network: admin sign-in, API key, chat completion over HTTPS"
if [ ! -f "$tls_dir/cert.pem" ] || [ "$(stat -c '%a %u' "$tls_dir/key.pem")" != "600 $kimi_uid" ]; then
  ls -ln "$tls_dir" || true; fail "the install made no certificate, or a key not 0600 kimi"
fi
# The daemon runs in the root; curl (the host's: a minimal Debian has none) runs in the same
# network namespace, trusting only the certificate the postinst made.
env -u LD_PRELOAD unshare --net --mount --fork "$src_dir/packaging/tests/installed_session.sh" "$root" "$otp"
kimictl_in "$root" audit verify --data-dir /var/lib/kimi-appliance

step "a medium whose model changed after signing, with SHA256SUMS signed again, is refused by the model's signature"
signed_again=/media/kimi-signed-again
cp -a "$root/media/kimi" "$root$signed_again"
shard=$(ls "$root$signed_again"/model/*.safetensors | head -1)
chmod u+w "$shard" "$root$signed_again/SHA256SUMS" "$root$signed_again/SHA256SUMS.sig"
printf 'X' | dd of="$shard" bs=1 seek=4000 conv=notrunc status=none
sign_medium "$root$signed_again" "$gpg_home"
if in_root "$root" "$signed_again/install.sh" --key /root/distribution-key.asc >"$work/resigned.log" 2>&1; then
  cat "$work/resigned.log"; fail "the installer accepted a model that does not match its signature"
fi
grep -q "medium verified" "$work/resigned.log" || { cat "$work/resigned.log"; fail "the re-signed medium did not pass its own check"; }
grep -q "does not verify against the trust store: refusing it" "$work/resigned.log" || { cat "$work/resigned.log"; fail "refusal without its reason"; }
kimictl_in "$root" model list >"$work/models-after.txt"
cmp -s "$work/models.txt" "$work/models-after.txt" || { cat "$work/models-after.txt"; fail "the model store changed"; }
echo "refused: $(grep FAILED "$work/resigned.log")"

step "a medium given, after signing, a second SHA256SUMS holding a key and a model-trust/ link to it is refused, the trust store unchanged"
hostile=/media/kimi-hostile
cp -a "$root/media/kimi" "$root$hostile"
"$build_dir/appliance/kimictl" keygen --out "$work/attacker" >/dev/null
mkdir "$root$hostile/docs"
cp "$work/attacker.pub.pem" "$root$hostile/docs/SHA256SUMS"
ln -s ../docs/SHA256SUMS "$root$hostile/model-trust/evil.pem"
trust_store() { (cd "$root/etc/kimi-appliance/trust" && ls -lAn --time-style=+%s && sha256sum -- *); }
trust_before=$(trust_store)
if in_root "$root" "$hostile/install.sh" --key /root/distribution-key.asc >"$work/hostile.log" 2>&1; then
  cat "$work/hostile.log"; fail "the installer accepted a medium with a key added after signing"
fi
grep -q "refusing a modified medium" "$work/hostile.log" || { cat "$work/hostile.log"; fail "refusal without its reason"; }
[ "$(trust_store)" = "$trust_before" ] || { trust_store; fail "the trust store changed"; }
echo "refused: $(grep FAILED "$work/hostile.log")"

step "a medium with one byte changed in the model, then in a package, is refused before anything is installed"
root="$work/root-tampered"
new_root "$root"
tamper() {  # changes one byte of $1 at offset $2, keeping the original beside the test's files
  cp "$1" "$work/original"
  chmod u+w "$1"
  # The byte's complement: a fixed byte would change nothing where the file already holds it
  # (one build in 256), and the installer would rightly accept the medium.
  local byte
  byte=$(od -An -tu1 -j "$2" -N1 "$1" | tr -d ' ')
  printf "\\$(printf '%03o' $((255 - byte)))" | dd of="$1" bs=1 seek="$2" conv=notrunc status=none
  ! cmp -s "$1" "$work/original" || fail "tamper changed nothing in $1"
}
expect_refused() {  # $1: what was changed
  if in_root "$root" /media/kimi/install.sh --key /root/distribution-key.asc >"$work/tampered.log" 2>&1; then
    cat "$work/tampered.log"; fail "the installer accepted a medium with a changed $1"
  fi
  grep -q "refusing a modified medium" "$work/tampered.log" || { cat "$work/tampered.log"; fail "refusal without its reason"; }
  ! in_root "$root" dpkg-query -W kimi-appliance >/dev/null 2>&1 || fail "kimi-appliance got installed from a medium with a changed $1"
  echo "changed $1 refused: $(grep FAILED "$work/tampered.log")"
}
shard=$(ls "$root"/media/kimi/model/*.safetensors | head -1)
tamper "$shard" 4000
expect_refused model
cp "$work/original" "$shard"
tamper "$(ls "$root"/media/kimi/pool/main/kimi-appliance_*.deb)" 2000
expect_refused package
echo "install test passed"
