#!/usr/bin/env bash
# Builds the offline installation medium: an ISO 9660 image holding a signed local apt
# repository (the kimi packages and every Debian package they need that a minimal Debian 12
# lacks), the installer, the distribution public key, optionally a signed model directory
# with the public keys of its signers, and SHA256SUMS over every file, signed with the
# distribution key. Nothing on it is unsigned: each file is covered by SHA256SUMS, whose
# detached signature the installer checks first; the model also carries its own signature.
#
# usage: packaging/iso/build-iso.sh --build-dir DIR --out FILE.iso [--key-dir DIR]
#                                   [--model DIR --model-trust PUB.pem | --demo-model]
#   --key-dir      a GnuPG home holding the distribution signing key; created (ed25519, no
#                  passphrase, for development and CI) when it does not exist. Production
#                  builds pass the organisation's release key here.
#   --model        a model directory with its model.sig, copied to /model on the medium;
#   --model-trust  the public key (PEM) that signed it, copied to /model-trust/ (repeatable).
#   --demo-model   a random-weight k3-nano model synthesised now with the build's kimi-engine,
#                  signed with the distribution model key (KEY_DIR/model-signing.pem, made
#                  with kimictl keygen when absent); its public key goes to /model-trust/.
#   --deb-cache    a folder of Debian packages (name_version_arch.deb): each package the medium
#                  needs is taken from there, and fetched into it first when it is not there;
#   --offline      with --deb-cache: fetch nothing; a package missing from the cache fails;
#   --fetch-only   with --deb-cache: fill the cache and stop (no --out needed). packaging/
#                  test-deps.sh does this before `make test`, whose tests fetch nothing.
# Needs: cpack (the build tree), apt-get (to fetch dependencies), dpkg-scanpackages,
# apt-ftparchive, gpg, xorriso.
set -euo pipefail

die() { echo "build-iso: $*" >&2; exit 1; }
build_dir="" out="" key_dir="" model="" demo_model=no deb_cache="" offline=no fetch_only=no
model_trust=()
while [ $# -gt 0 ]; do
  case "$1" in
    --build-dir) build_dir=${2:?}; shift 2 ;;
    --out) out=${2:?}; shift 2 ;;
    --key-dir) key_dir=${2:?}; shift 2 ;;
    --model) model=${2:?}; shift 2 ;;
    --model-trust) model_trust+=("${2:?}"); shift 2 ;;
    --demo-model) demo_model=yes; shift ;;
    --deb-cache) deb_cache=${2:?}; shift 2 ;;
    --offline) offline=yes; shift ;;
    --fetch-only) fetch_only=yes; shift ;;
    -h|--help) sed -n '2,27p' "$0"; exit 0 ;;
    *) die "unknown argument $1 (see --help)" ;;
  esac
done
[ -n "$build_dir" ] || die "--build-dir is required (see --help)"
[ -n "$out" ] || [ "$fetch_only" = yes ] || die "--out is required (see --help)"
[ -n "$deb_cache" ] || [ "$offline$fetch_only" = nono ] || die "--offline and --fetch-only need --deb-cache"
[ -f "$build_dir/CPackConfig.cmake" ] || die "$build_dir is not a configured build tree"
if [ -n "$model" ] && [ "$demo_model" = yes ]; then die "--model and --demo-model exclude each other"; fi
if [ -n "$model" ] && [ ${#model_trust[@]} -eq 0 ]; then
  die "--model needs --model-trust PUB.pem: the installer trusts only the signers the medium names"
fi
for tool in python3 cpack apt-get dpkg-scanpackages apt-ftparchive gpg xorriso; do
  command -v "$tool" >/dev/null || die "$tool is missing (packaging/build-deps.sh installs it)"
done
src_dir=$(cd "$(dirname "$0")/../.." && pwd)
key_dir=${key_dir:-$build_dir/distribution-key}
suite=bookworm
arch=$(dpkg --print-architecture)

stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
medium="$stage/medium"
pool="$medium/pool/main"
mkdir -p "$pool" "$medium/dists/$suite/main/binary-$arch"

echo "build-iso: building the kimi packages"
cpack --config "$build_dir/CPackConfig.cmake" -B "$stage/packages" >"$stage/cpack.log" 2>&1 ||
  { cat "$stage/cpack.log" >&2; die "cpack failed"; }
cp "$stage"/packages/*.deb "$pool/"

# Dependencies: what the kimi packages need that a minimal Debian 12 lacks (offline_closure.py).
mapfile -t needed < <(apt-cache dumpavail | python3 "$src_dir/packaging/iso/offline_closure.py" "$pool"/*.deb) ||
  die "could not resolve the packages' dependencies"
if [ -z "$deb_cache" ]; then
  echo "build-iso: fetching ${#needed[@]} Debian packages a minimal system lacks: ${needed[*]}"
  (cd "$pool" && apt-get download -qq "${needed[@]}") || die "apt-get download failed"
else
  mkdir -p "$deb_cache"
  missing=()
  for name in "${needed[@]}"; do
    compgen -G "$deb_cache/${name}_*.deb" >/dev/null || missing+=("$name")
  done
  if [ ${#missing[@]} -gt 0 ]; then
    [ "$offline" = no ] || die "not in the package cache $deb_cache: ${missing[*]} (packaging/test-deps.sh fills it)"
    echo "build-iso: fetching ${#missing[@]} Debian packages into $deb_cache: ${missing[*]}"
    (cd "$deb_cache" && apt-get download -qq "${missing[@]}") || die "apt-get download failed"
  fi
  [ "$fetch_only" = no ] || { echo "build-iso: the package cache $deb_cache holds all ${#needed[@]} packages"; exit 0; }
  for name in "${needed[@]}"; do
    newest=$(ls -1 "$deb_cache/${name}"_*.deb | sort -V | tail -1)
    cp "$newest" "$pool/"
  done
fi

echo "build-iso: writing the apt repository"
(cd "$medium" && dpkg-scanpackages --multiversion pool/main /dev/null >"dists/$suite/main/binary-$arch/Packages" 2>/dev/null)
gzip -9nk "$medium/dists/$suite/main/binary-$arch/Packages"
apt-ftparchive \
  -o APT::FTPArchive::Release::Origin=kimi-appliance -o APT::FTPArchive::Release::Label=kimi-appliance \
  -o APT::FTPArchive::Release::Suite=$suite -o APT::FTPArchive::Release::Codename=$suite \
  -o APT::FTPArchive::Release::Architectures=$arch -o APT::FTPArchive::Release::Components=main \
  release "$medium/dists/$suite" >"$stage/Release"
mv "$stage/Release" "$medium/dists/$suite/Release"

# The distribution key.
export GNUPGHOME="$key_dir"
if [ ! -d "$key_dir" ]; then
  mkdir -p "$key_dir" && chmod 700 "$key_dir"
  echo "build-iso: creating a distribution key in $key_dir (development; pass --key-dir for releases)"
  gpg --batch --quiet --pinentry-mode loopback --passphrase '' \
    --quick-gen-key "Kimi appliance distribution (development) <dist@kimi-appliance.local>" ed25519 sign never
fi
fingerprint=$(gpg --batch --with-colons --list-secret-keys | awk -F: '$1 == "fpr" { print $10; exit }')
[ -n "$fingerprint" ] || die "no secret key in $key_dir"
sign() { gpg --batch --yes --quiet --local-user "$fingerprint" "$@"; }
sign --clearsign -o "$medium/dists/$suite/InRelease" "$medium/dists/$suite/Release"
sign --detach-sign --armor -o "$medium/dists/$suite/Release.gpg" "$medium/dists/$suite/Release"
gpg --batch --armor --export "$fingerprint" >"$medium/distribution-key.asc"

install -m 0755 "$src_dir/installer/install.sh" "$medium/install.sh"
cp "$src_dir/installer/README.medium" "$medium/README.txt"
if [ "$demo_model" = yes ]; then
  kimi_engine="$build_dir/engine/kimi-engine" kimictl="$build_dir/appliance/kimictl"
  [ -x "$kimi_engine" ] && [ -x "$kimictl" ] || die "--demo-model needs kimi-engine and kimictl built in $build_dir"
  model_key="$key_dir/model-signing"
  if [ ! -f "$model_key.pem" ]; then
    echo "build-iso: creating the distribution model key $model_key.pem (development)"
    "$kimictl" keygen --out "$model_key" >"$stage/keygen.log" 2>&1 || { cat "$stage/keygen.log" >&2; die "kimictl keygen failed"; }
  fi
  model="$stage/demo-model"
  echo "build-iso: synthesising and signing the demo model (k3-nano, random weights)"
  { "$kimi_engine" synth --preset k3-nano --out "$model" --tokenizer "$src_dir/data/kimi-k3" &&
    "$kimictl" model sign --key "$model_key.pem" --quiet "$model"; } >"$stage/demo-model.log" 2>&1 ||
    { cat "$stage/demo-model.log" >&2; die "could not make the demo model"; }
  model_trust=("$model_key.pub.pem")
fi
if [ -n "$model" ]; then
  [ -f "$model/model.sig" ] || die "$model has no model.sig: only signed models go on the medium"
  cp -r "$model" "$medium/model"
  mkdir -p "$medium/model-trust"
  for pem in "${model_trust[@]}"; do
    [ -f "$pem" ] || die "$pem does not exist"
    cp "$pem" "$medium/model-trust/$(basename "$pem" .pem).pem"
  done
fi

# SHA256SUMS over every file, signed; then the image. The installer refuses a medium holding a
# link, FIFO or device, or a name with a control character (they could make a signed name stand
# for other bytes): better here than at the site. Names travel NUL-separated, never split.
odd=$(cd "$medium" && LC_ALL=C find . ! -type d \( ! -type f -o -path '*[[:cntrl:]]*' \) -printf '%P ')
[ -z "$odd" ] || die "not a plain file, or a name with a control character, in the medium: $odd(the installer would refuse it)"
(cd "$medium" && find . -type f ! -path ./SHA256SUMS ! -path ./SHA256SUMS.sig -printf '%P\0' | LC_ALL=C sort -z |
  xargs -0 sha256sum >SHA256SUMS)
sign --detach-sign -o "$medium/SHA256SUMS.sig" "$medium/SHA256SUMS"

mkdir -p "$(dirname "$out")"
xorriso -as mkisofs -quiet -o "$out.tmp" -V KIMI_APPLIANCE -J -R -iso-level 3 "$medium"
mv "$out.tmp" "$out"
echo "build-iso: wrote $out ($(du -h "$out" | cut -f1)); distribution key fingerprint:"
echo "  $fingerprint"
