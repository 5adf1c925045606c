#!/usr/bin/env bash
# The offline installer of the Kimi K3 appliance, run as root from the mounted medium:
#
#   /media/kimi/install.sh --key /path/to/distribution-key.asc            install (or repair)
#   /media/kimi/install.sh --key KEY --upgrade                           upgrade in place, data kept
#   /media/kimi/install.sh --uninstall [--purge]                          remove (purge: data too)
#   a medium that carries a model also needs --model-trust DIR (the public keys of its signers,
#   *.pem) and takes --model-id NAME (default kimi-k3)
#
# It trusts nothing on the medium until the medium's SHA256SUMS signature verifies against the
# distribution key the operator received out of band (--key; its fingerprint is printed to be
# compared with the one on the delivery note), and every file's digest matches. A modified
# medium is refused before anything is installed. Packages come from the medium's signed apt
# repository only, with no network. Every step is logged to /var/log/kimi-appliance/install.log.
# Running it again is safe: it verifies again, installs what is missing, keeps what exists.
set -euo pipefail

suite=bookworm
log_dir=/var/log/kimi-appliance
log=$log_dir/install.log
config=/etc/kimi-appliance/appliance.json
data_dir=/var/lib/kimi-appliance
packages=(kimi-appliance kimi-engine)

medium=$(cd "$(dirname "$0")" && pwd)
key="" mode=install purge=no model_id=kimi-k3 model_trust=""
usage() { sed -n '2,14p' "$0" | sed 's/^# \{0,1\}//'; }
while [ $# -gt 0 ]; do
  case "$1" in
    --key) key=${2:?--key needs a file}; shift 2 ;;
    --medium) medium=${2:?--medium needs a directory}; shift 2 ;;
    --upgrade) mode=upgrade; shift ;;
    --uninstall) mode=uninstall; shift ;;
    --purge) purge=yes; shift ;;
    --model-id) model_id=${2:?--model-id needs a name}; shift 2 ;;
    --model-trust) model_trust=${2:?--model-trust needs a directory}; shift 2 ;;
    -h|--help) usage; exit 0 ;;
    *) echo "install.sh: unknown argument $1" >&2; usage >&2; exit 2 ;;
  esac
done

if [ "$(id -u)" -ne 0 ]; then
  echo "install.sh: run as root" >&2
  exit 1
fi
mkdir -p "$log_dir"
chmod 0750 "$log_dir"
exec > >(tee -a "$log") 2>&1
step() { echo "[$(date -u +%Y-%m-%dT%H:%M:%SZ)] $*"; }
die() { step "FAILED: $*"; exit 1; }
step "install.sh $mode from $medium"

if [ "$mode" = uninstall ]; then
  if [ "$purge" = yes ]; then
    apt-get purge -y "${packages[@]}" || die "apt-get purge failed"
    step "removed the appliance, its configuration and its data"
  else
    apt-get remove -y "${packages[@]}" || die "apt-get remove failed"
    step "removed the appliance; configuration in /etc/kimi-appliance and data in $data_dir are kept"
  fi
  exit 0
fi

[ -n "$key" ] || die "--key is required: the distribution public key you received with the medium"
[ -f "$key" ] || die "$key does not exist"

# The v4 fingerprint of the first packet of a binary OpenPGP key file (RFC 4880 12.2: SHA-1
# over 0x99, the two-byte body length and the public-key packet body).
openpgp_v4_fingerprint() {
  local file=$1 b hdr len tag
  read -r -a b < <(od -An -tu1 -N6 -v "$file")
  [ "${#b[@]}" -ge 2 ] || return 1
  if (( b[0] & 0x40 )); then             # new packet format
    tag=$(( b[0] & 0x3f ))
    if (( b[1] < 192 )); then len=${b[1]}; hdr=2
    elif (( b[1] < 224 )); then len=$(( ((b[1] - 192) << 8) + b[2] + 192 )); hdr=3
    elif (( b[1] == 255 )); then len=$(( (b[2] << 24) | (b[3] << 16) | (b[4] << 8) | b[5] )); hdr=6
    else return 1; fi
  else                                    # old packet format
    tag=$(( (b[0] >> 2) & 0x0f ))
    case $(( b[0] & 3 )) in
      0) len=${b[1]}; hdr=2 ;;
      1) len=$(( (b[1] << 8) | b[2] )); hdr=3 ;;
      2) len=$(( (b[1] << 24) | (b[2] << 16) | (b[3] << 8) | b[4] )); hdr=5 ;;
      *) return 1 ;;
    esac
  fi
  [ "$tag" -eq 6 ] || return 1            # a public-key packet
  { printf '\x99'; printf "\\x$(printf %02x $(( len >> 8 )))"; printf "\\x$(printf %02x $(( len & 255 )))"
    tail -c +$(( hdr + 1 )) "$file" | head -c "$len"; } | sha1sum | cut -c1-40 | tr a-f A-F
}

# 1. The medium: signature of SHA256SUMS, then every file's digest, then no unlisted file.
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
chmod 0755 "$work"
# Only tools every Debian system has (coreutils, gpgv): gpg itself may be absent.
keyring="$work/distribution.gpg"
if grep -q -- '-----BEGIN PGP PUBLIC KEY BLOCK-----' "$key"; then
  # ASCII armour: the base64 lines between the header block and the "=" checksum line.
  sed -n '/^-----BEGIN PGP PUBLIC KEY BLOCK-----/,/^-----END/p' "$key" |
    sed '1,/^[[:space:]]*$/d; /^=/d; /^-----END/d' | base64 -d >"$keyring" 2>/dev/null ||
    die "$key is not a readable OpenPGP public key"
else
  cp "$key" "$keyring"
fi
chmod 0644 "$keyring"
fingerprint=$(openpgp_v4_fingerprint "$keyring") || die "$key is not an OpenPGP v4 public key"
step "distribution key fingerprint: $fingerprint (compare it with the one on the delivery note)"
gpgv --keyring "$keyring" "$medium/SHA256SUMS.sig" "$medium/SHA256SUMS" >"$work/gpgv.log" 2>&1 ||
  { cat "$work/gpgv.log"; die "the medium's SHA256SUMS is not signed by this key: refusing a modified or foreign medium"; }
(cd "$medium" && sha256sum --quiet --strict -c SHA256SUMS) >"$work/sums.log" 2>&1 ||
  { cat "$work/sums.log"; die "files on the medium do not match their signed digests: refusing a modified medium"; }
(cd "$medium" && find . -type f ! -name SHA256SUMS ! -name SHA256SUMS.sig -printf '%P\n' | LC_ALL=C sort) >"$work/present"
awk '{ sub(/^[^ ]+ [ *]?/, ""); print }' "$medium/SHA256SUMS" | LC_ALL=C sort >"$work/listed"
extra=$(comm -23 "$work/present" "$work/listed")
[ -z "$extra" ] || die "files on the medium that its signed list does not name: $extra"
step "medium verified: $(wc -l <"$work/listed") files match the signed SHA256SUMS"

# 2. Packages from the medium only: a private apt configuration whose one source is the
# medium, checked against the same key (apt verifies the repository's InRelease itself).
mkdir -p "$work/lists/partial" "$work/parts"
echo "deb [signed-by=$keyring] file:$medium $suite main" >"$work/sources.list"
apt_opts=(-o "Dir::Etc::SourceList=$work/sources.list" -o "Dir::Etc::SourceParts=$work/parts"
          -o "Dir::State::Lists=$work/lists" -o "Acquire::Languages=none" -o "APT::Get::List-Cleanup=0")
export DEBIAN_FRONTEND=noninteractive
apt-get "${apt_opts[@]}" update >"$work/update.log" 2>&1 || { cat "$work/update.log"; die "apt could not read the medium's repository"; }
if [ "$mode" = upgrade ]; then
  apt-get "${apt_opts[@]}" install -y --no-install-recommends --only-upgrade "${packages[@]}" || die "upgrade failed"
else
  apt-get "${apt_opts[@]}" install -y --no-install-recommends "${packages[@]}" || die "package installation failed"
fi
step "installed: $(dpkg-query -W -f='${Package} ${Version}\n' "${packages[@]}" | tr '\n' ' ')"

# 3. Configuration, checked with the installed kimictl, and the HTTPS certificate it names
# (the package's postinst makes a self-signed one on first install; see docs/packaging.md).
kimictl config check --config "$config" || die "$config is invalid; fix it and run the installer again"
config_value() { sed -n "s/.*\"$1\" *: *\"\([^\"]*\)\".*/\1/p" "$config" | head -1; }
listen=$(config_value listen)
cert_file=$(config_value cert_file)
case "$cert_file" in ""|/*) ;; *) cert_file="$(dirname "$config")/$cert_file" ;; esac
if [ -n "$cert_file" ]; then
  [ -f "$cert_file" ] || die "$cert_file (server.tls.cert_file) does not exist: make it with" \
    "runuser -u kimi -- kimictl tls selfsigned --dir $(dirname "$cert_file") or install your own"
  step "HTTPS certificate: $cert_file"
fi

run_as_kimi() { runuser -u kimi -- "$@"; }

# 4. The first administrator, once.
if run_as_kimi kimictl admin bootstrap --data-dir "$data_dir" >"$work/bootstrap.txt" 2>&1; then
  step "first administrator created; its one-time password (change it at first sign-in):"
  cat "$work/bootstrap.txt"
elif grep -qi "already" "$work/bootstrap.txt"; then
  step "an administrator exists already; kept"
else
  cat "$work/bootstrap.txt"
  die "could not create the first administrator"
fi

# 5. The model on the medium, if any: imported into the store and verified there.
if [ -d "$medium/model" ]; then
  [ -n "$model_trust" ] || die "the medium carries a model: name the directory of its signers' public keys with --model-trust"
  install -d -m 0750 -o root -g kimi /etc/kimi-appliance/trust
  install -m 0640 -o root -g kimi "$model_trust"/*.pem /etc/kimi-appliance/trust/ || die "no *.pem in $model_trust"
  run_as_kimi kimictl model import --id "$model_id" --data-dir "$data_dir" --trust-dir /etc/kimi-appliance/trust \
    "$medium/model" || die "the model on the medium did not import"
  step "model $model_id imported and verified"
fi

# 6. The service.
if [ -d /run/systemd/system ]; then
  systemctl enable kimi-appliance.service >/dev/null
  systemctl restart kimi-appliance.service || die "the service did not start: journalctl -u kimi-appliance"
  step "service kimi-appliance started"
else
  step "systemd is not running here: start the daemon with: runuser -u kimi -- kimi-appliance --config $config"
fi

# 7. The health check, over HTTPS with the configured certificate as the only trusted CA, so
# it also proves the certificate matches its key and names the address asked.
port=${listen##*:}
case "$listen" in
  0.0.0.0:*|"") check_host=127.0.0.1 ;;
  "[::]:"*) check_host="[::1]" ;;
  *) check_host=${listen%:*} ;;
esac
if [ -n "$cert_file" ]; then scheme=https; else scheme=http; fi
health_url="$scheme://$check_host:$port/healthz"
curl_tls=()
[ -n "$cert_file" ] && curl_tls=(--cacert "$cert_file")
if [ ! -d /run/systemd/system ]; then
  step "health check skipped (the service is not running); once started: curl ${curl_tls[*]} $health_url"
elif ! command -v curl >/dev/null; then
  step "health check skipped: curl is not installed; check with: curl ${curl_tls[*]} $health_url"
else
  healthy=no
  for _ in $(seq 60); do
    if curl -sS --fail --max-time 5 --noproxy "*" "${curl_tls[@]}" "$health_url" >/dev/null 2>"$work/health.log"; then
      healthy=yes; break
    fi
    sleep 0.5
  done
  [ "$healthy" = yes ] || { cat "$work/health.log"; die "no answer from $health_url: journalctl -u kimi-appliance"; }
  step "health check: $health_url answers"
fi
console_host=$check_host
case "$listen" in 0.0.0.0:*|"[::]:"*) console_host=$(uname -n) ;; esac
step "done. Console: $scheme://$console_host:$port/"
[ -z "$cert_file" ] || step "browsers and clients trust the appliance with $cert_file as their CA, or install a CA-issued certificate (docs/packaging.md)"
