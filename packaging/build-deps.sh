#!/usr/bin/env bash
# Installs the Debian packages that building and testing the project needs, and nothing else.
# With --fuzz, also those of `make fuzz`. Idempotent: packages already installed are skipped,
# and apt is not touched when none is missing.
set -euo pipefail

packages=(
  build-essential cmake pkg-config ccache git
  libcpp-httplib-dev libsqlite3-dev libssl-dev libsodium-dev nlohmann-json3-dev libicu-dev
  libgtest-dev libgmock-dev libbenchmark-dev
  openssl sqlite3 curl procps strace
  python3 python3-numpy python3-jinja2 python3-jsonschema python3-regex
  dpkg-dev lintian systemd xorriso apt-utils debootstrap gnupg
  chromium
)
# make fuzz (tests/fuzz/run_fuzz.sh) also needs clang and libFuzzer's runtime; make test does not.
if [ "${1:-}" = "--fuzz" ]; then
  packages+=(clang libclang-rt-14-dev)
fi

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done

if [ ${#missing[@]} -eq 0 ]; then
  exit 0
fi

if [ "$(id -u)" -ne 0 ]; then
  echo "error: missing Debian packages: ${missing[*]}" >&2
  echo "       run as root, or: sudo apt-get install ${missing[*]}" >&2
  exit 1
fi

echo "installing Debian packages: ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends "${missing[@]}"
