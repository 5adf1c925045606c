#!/usr/bin/env bash
# End-to-end offline install (make test-install): builds the ISO, makes a minimal Debian 12
# root with debootstrap (minbase; its packages are cached under BUILD_DIR/debootstrap so later
# runs need no mirror), puts the medium in it as the operator's mount would, and runs the
# installer in a network namespace that has only loopback. Then the installed daemon must start
# there and answer, and `kimictl audit verify` must pass. Finally a medium with one byte changed
# in one package must be refused before anything is installed.
#
# usage: packaging/tests/install_test.sh BUILD_DIR     (as root)
set -euo pipefail

build_dir=$(cd "${1:?usage: install_test.sh BUILD_DIR}" && pwd)
src_dir=$(cd "$(dirname "$0")/../.." && pwd)
[ "$(id -u)" -eq 0 ] || { echo "install_test: needs root (debootstrap, chroot, namespaces)" >&2; exit 1; }
for tool in debootstrap xorriso unshare chroot curl; do
  command -v "$tool" >/dev/null || { echo "install_test: $tool is missing (packaging/build-deps.sh)" >&2; exit 1; }
done

work=$(mktemp -d)
cleanup() {
  for root in "$work"/root-*; do
    [ -d "$root" ] && umount -R "$root/proc" 2>/dev/null || true
  done
  rm -rf "$work"
}
trap cleanup EXIT
step() { echo "== $*"; }

step "building the ISO"
"$src_dir/packaging/iso/build-iso.sh" --build-dir "$build_dir" --out "$work/kimi.iso" >"$work/iso.log" 2>&1 ||
  { cat "$work/iso.log"; exit 1; }
gpg_home="$build_dir/distribution-key"
GNUPGHOME="$gpg_home" gpg --batch --armor --export >"$work/distribution-key.asc"

tarball="$build_dir/debootstrap/bookworm-minbase.tgz"
if [ ! -f "$tarball" ]; then
  step "caching a minimal Debian 12 (debootstrap --make-tarball; the only step that needs the mirror)"
  mkdir -p "$(dirname "$tarball")"
  debootstrap --variant=minbase --make-tarball="$tarball.tmp" bookworm "$work/tarball-root" >"$work/debootstrap.log" 2>&1 ||
    { tail -20 "$work/debootstrap.log"; exit 1; }
  mv "$tarball.tmp" "$tarball"
fi

new_root() {  # a fresh minimal Debian 12 under $1, from the cached packages only
  debootstrap --variant=minbase --unpack-tarball="$tarball" bookworm "$1" >"$work/debootstrap-$(basename "$1").log" 2>&1 ||
    { tail -20 "$work/debootstrap-$(basename "$1").log"; return 1; }
  mkdir -p "$1/media/kimi"
  xorriso -osirrox on -indev "$work/kimi.iso" -extract / "$1/media/kimi" >/dev/null 2>&1
  cp "$work/distribution-key.asc" "$1/root/distribution-key.asc"
}
# Runs a command inside the root with no network but loopback.
in_root() {
  local root=$1; shift
  unshare --net --mount --fork sh -c 'ip link set lo up && mount -t proc proc "$0/proc" && exec chroot "$0" "$@"' "$root" "$@"
}

step "installing into a minimal root with no network"
root="$work/root-good"
new_root "$root"
in_root "$root" /media/kimi/install.sh --key /root/distribution-key.asc
in_root "$root" dpkg-query -W kimi-appliance kimi-engine
grep -q "medium verified" "$root/var/log/kimi-appliance/install.log" || { echo "FAIL: install.log lacks the verification step"; exit 1; }

step "starting the installed daemon there and asking it over HTTPS"
tls_dir="$root/var/lib/kimi-appliance/tls"
kimi_uid=$(awk -F: '$1 == "kimi" { print $3 }' "$root/etc/passwd")
if [ ! -f "$tls_dir/cert.pem" ] || [ "$(stat -c '%a %u' "$tls_dir/key.pem")" != "600 $kimi_uid" ]; then
  ls -ln "$tls_dir" || true; echo "FAIL: the install made no certificate, or a key not 0600 kimi"; exit 1
fi
# The daemon runs in the root; curl (the host's: a minimal Debian has none) runs in the same
# network namespace, trusting only the certificate the postinst made.
unshare --net --mount --fork bash -c '
  root=$0
  ip link set lo up && mount -t proc proc "$root/proc"
  chroot "$root" runuser -u kimi -- kimi-appliance --config /etc/kimi-appliance/appliance.json --log-format text \
    2>"$root/var/log/kimi-appliance/daemon.log" &
  pid=$!
  healthy=no
  for _ in $(seq 100); do
    if curl -sS --fail --max-time 5 --noproxy "*" --cacert "$root/var/lib/kimi-appliance/tls/cert.pem" \
        https://127.0.0.1:8443/healthz >/dev/null 2>/dev/null; then healthy=yes; break; fi
    sleep 0.2
  done
  plain=$(curl -s -o /dev/null -w "%{http_code}" --max-time 5 --noproxy "*" http://127.0.0.1:8443/healthz || true)
  kill -TERM $pid; wait $pid || true
  [ "$healthy" = yes ] || { echo "FAIL: no 200 from https://127.0.0.1:8443/healthz"; cat "$root/var/log/kimi-appliance/daemon.log"; exit 1; }
  echo "healthz over https: 200 (plain http to the port: $plain)"
  [ "$plain" != 200 ] || { echo "FAIL: plain HTTP answered 200"; exit 1; }' "$root"
in_root "$root" runuser -u kimi -- kimictl audit verify --data-dir /var/lib/kimi-appliance

step "a medium with one byte changed in a package is refused before anything is installed"
root="$work/root-tampered"
new_root "$root"
deb=$(ls "$root"/media/kimi/pool/main/kimi-appliance_*.deb)
chmod u+w "$deb"
printf 'X' | dd of="$deb" bs=1 seek=2000 conv=notrunc status=none
if in_root "$root" /media/kimi/install.sh --key /root/distribution-key.asc >"$work/tampered.log" 2>&1; then
  cat "$work/tampered.log"; echo "FAIL: the installer accepted a modified medium"; exit 1
fi
grep -q "refusing a modified medium" "$work/tampered.log" || { cat "$work/tampered.log"; echo "FAIL: refusal without its reason"; exit 1; }
if in_root "$root" dpkg-query -W kimi-appliance >/dev/null 2>&1; then
  echo "FAIL: kimi-appliance got installed from a modified medium"; exit 1
fi
echo "refused: $(grep FAILED "$work/tampered.log")"
echo "install test passed"
