#!/usr/bin/env bash
# What the test suite needs from a package registry, fetched before it runs (`make test` calls
# this after the build): the tests themselves send no packet off the machine (docs/testing.md).
#   - the npm packages of the browser and npm-client tests (tests/integration/npm_packages.py);
#   - as root, for the offline install test: a minimal Debian 12 (debootstrap --make-tarball)
#     and the Debian packages the offline medium carries (build-iso.sh --fetch-only).
# Idempotent: what is already in BUILD_DIR is not fetched again. A registry that cannot be
# reached is reported and not fatal: the tests that need what is missing skip and say why.
#
# usage: packaging/test-deps.sh BUILD_DIR
set -uo pipefail

build_dir=$(cd "${1:?usage: test-deps.sh BUILD_DIR}" && pwd)
src_dir=$(cd "$(dirname "$0")/.." && pwd)
warn() { echo "test-deps: $*" >&2; }

python3 "$src_dir/tests/integration/npm_packages.py" install "$build_dir"

if [ "$(id -u)" -ne 0 ] || ! command -v debootstrap >/dev/null; then
  warn "not root or no debootstrap: the offline install test will skip"
  exit 0
fi
tarball="$build_dir/debootstrap/bookworm-minbase.tgz"
if [ ! -f "$tarball" ]; then
  echo "test-deps: caching a minimal Debian 12 for the offline install test (debootstrap --make-tarball)"
  mkdir -p "$(dirname "$tarball")"
  scratch=$(mktemp -d)
  if debootstrap --variant=minbase --make-tarball="$tarball.tmp" bookworm "$scratch/root" >"$scratch/log" 2>&1; then
    mv "$tarball.tmp" "$tarball"
  else
    tail -20 "$scratch/log" >&2
    warn "no Debian mirror reachable for debootstrap: the offline install test will skip"
  fi
  rm -rf "$scratch" "$tarball.tmp"
fi
"$src_dir/packaging/iso/build-iso.sh" --build-dir "$build_dir" --deb-cache "$build_dir/deb-cache" --fetch-only ||
  warn "the offline medium's Debian packages could not be fetched: the offline install test will skip"
exit 0
