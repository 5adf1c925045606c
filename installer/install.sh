#!/usr/bin/env bash
# The offline installer of the Kimi K3 appliance, run as root from the mounted medium:
#
#   /media/kimi/install.sh --key /path/to/distribution-key.asc            install (or repair)
#   /media/kimi/install.sh --key KEY --upgrade                           upgrade in place, data kept
#   /media/kimi/install.sh --uninstall [--purge]                          remove (purge: data too)
#   --model-trust DIR  more public keys (*.pem) of model signers, besides those the medium names
#
# It trusts nothing on the medium until the medium's SHA256SUMS signature verifies against the
# distribution key the operator received out of band (--key; its fingerprint is printed to be
# compared with the one on the delivery note), the medium holds exactly the plain files the list
# names, and each matches its digest. A modified medium is refused before anything is installed. Packages come from the medium's signed apt
# repository only, with no network. A model on the medium is imported into the model store
# only if its own signature verifies against the trust store. Every step is logged to
# /var/log/kimi-appliance/install.log (never the first administrator's one-time password).
# Running it again is safe: it verifies again, installs what is missing, keeps what exists.
set -euo pipefail

suite=bookworm
log_dir=/var/log/kimi-appliance
log=$log_dir/install.log
config=/etc/kimi-appliance/appliance.json
data_dir=/var/lib/kimi-appliance
packages=(kimi-appliance kimi-engine)

medium=$(cd "$(dirname "$0")" && pwd)
key="" mode=install purge=no model_trust=""
usage() { sed -n '2,16p' "$0" | sed 's/^# \{0,1\}//'; }
while [ $# -gt 0 ]; do
  case "$1" in
    --key) key=${2:?--key needs a file}; shift 2 ;;
    --medium) medium=${2:?--medium needs a directory}; shift 2 ;;
    --upgrade) mode=upgrade; shift ;;
    --uninstall) mode=uninstall; shift ;;
    --purge) purge=yes; shift ;;
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
# The log directory belongs to the service account, which could leave a link named install.log
# to make root append to a file of its choice: the log is opened without following a link
# (dd oflag=nofollow) and must be a plain file with no other name.
if ! dd if=/dev/null of="$log" oflag=append,nofollow conv=notrunc status=none 2>/dev/null ||
   [ ! -f "$log" ] || [ "$(stat -c %h "$log")" != 1 ]; then
  echo "install.sh: $log is a link or not a plain file: refusing to write through it; remove it and run again" >&2
  exit 1
fi
# fd 3 is the operator's terminal alone: what must not be logged (the one-time password) goes there.
exec 3>&1
exec > >(tee >(dd of="$log" oflag=append,nofollow conv=notrunc status=none)) 2>&1
step() { echo "[$(date -u +%Y-%m-%dT%H:%M:%SZ)] $*"; }
die() { step "FAILED: $*"; exit 1; }
step "install.sh $mode from $medium"

if [ "$mode" = uninstall ]; then
  for gpu_package in kimi-engine-cuda kimi-engine-hip; do
    dpkg-query -W -f='${Status}' "$gpu_package" 2>/dev/null | grep -q "install ok installed" && packages+=("$gpu_package")
  done
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

# 1. The medium: only plain files with plain names, the signature of SHA256SUMS, the same files
# as the signed list names, then every file's digest.
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
# Every name on the medium is looked at before any file on it is opened, read NUL-separated so
# that no name can pass for two: a link would make a signed name's digest (or a key copied in
# step 6) come from another file, a FIFO or device would hang or feed the digest check, and a
# line break or other control character in a name could split it into names the list holds.
(cd "$medium" && find . ! -type d -print0) >"$work/names" || die "could not list the files on $medium"
! LC_ALL=C grep -qz '[[:cntrl:]]' "$work/names" ||
  die "a file name on the medium holds a line break or other control character: refusing a modified medium"
: >"$work/present"
while IFS= read -r -d '' name; do
  [ ! -L "$medium/$name" ] && [ -f "$medium/$name" ] ||
    die "$name on the medium is a link, FIFO, device or other non-regular file: refusing a modified medium"
  # Only the list and its signature at the top are not in the list; the same name elsewhere is.
  case $name in ./SHA256SUMS|./SHA256SUMS.sig) ;; *) printf '%s\n' "${name#./}" >>"$work/present" ;; esac
done <"$work/names"
gpgv --keyring "$keyring" "$medium/SHA256SUMS.sig" "$medium/SHA256SUMS" >"$work/gpgv.log" 2>&1 ||
  { cat "$work/gpgv.log"; die "the medium's SHA256SUMS is not signed by this key: refusing a modified or foreign medium"; }
LC_ALL=C sort -o "$work/present" "$work/present"
awk '{ sub(/^[^ ]+ [ *]?/, ""); print }' "$medium/SHA256SUMS" | LC_ALL=C sort >"$work/listed"
extra=$(LC_ALL=C comm -23 "$work/present" "$work/listed" | paste -sd ' ')
[ -z "$extra" ] || die "files on the medium that its signed list does not name ($extra): refusing a modified medium"
missing=$(LC_ALL=C comm -13 "$work/present" "$work/listed" | paste -sd ' ')
[ -z "$missing" ] || die "files the medium's signed list names that it lacks ($missing): refusing a modified medium"
(cd "$medium" && sha256sum --quiet --strict -c SHA256SUMS) >"$work/sums.log" 2>&1 ||
  { cat "$work/sums.log"; die "files on the medium do not match their signed digests: refusing a modified medium"; }
step "medium verified: $(wc -l <"$work/listed") files match the signed SHA256SUMS"

# 2. Packages from the medium only: a private apt configuration whose one source is the
# medium, checked against the same key (apt verifies the repository's InRelease itself).
mkdir -p "$work/lists/partial" "$work/parts"
echo "deb [signed-by=$keyring] file:$medium $suite main" >"$work/sources.list"
apt_opts=(-o "Dir::Etc::SourceList=$work/sources.list" -o "Dir::Etc::SourceParts=$work/parts"
          -o "Dir::State::Lists=$work/lists" -o "Acquire::Languages=none" -o "APT::Get::List-Cleanup=0")
export DEBIAN_FRONTEND=noninteractive
apt-get "${apt_opts[@]}" update >"$work/update.log" 2>&1 || { cat "$work/update.log"; die "apt could not read the medium's repository"; }
# A GPU build of the engine, when the medium carries one and this host has that vendor's
# devices: its package opens them to the service (a drop-in with DeviceAllow=).
gpu_device() { case $1 in cuda) [ -e /dev/nvidiactl ] ;; hip) [ -e /dev/kfd ] ;; esac; }
for gpu in cuda hip; do
  ls "$medium"/pool/main/kimi-engine-${gpu}_*.deb >/dev/null 2>&1 || continue
  if gpu_device "$gpu"; then
    packages+=("kimi-engine-$gpu")
    step "the medium carries kimi-engine-$gpu and this host has its devices: installing it"
  else
    step "the medium carries kimi-engine-$gpu, but this host has none of its devices: not installed"
  fi
done
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
service_running() { [ -d /run/systemd/system ] && systemctl is-active --quiet kimi-appliance.service; }

# 4. The audit log's signing key (docs/audit.md): a 32-byte Ed25519 seed, 0600 kimi, made
# here on first install so the log is signed from its first record; never replaced.
audit_key="$data_dir/audit-ed25519.key"
if [ -e "$audit_key" ]; then
  step "audit signing key: $audit_key exists; kept"
else
  run_as_kimi sh -c 'umask 077 && set -C && head -c 32 /dev/urandom >"$1"' sh "$audit_key" ||
    die "could not create the audit signing key $audit_key"
  step "audit signing key created: $audit_key (0600 kimi; its public key is written beside it as audit-ed25519.pub.json)"
fi

# 5. The first administrator, once: never on --upgrade, and a re-run finds the users there.
# The one-time password goes to the terminal only (fd 3), never into the log.
if [ "$mode" = upgrade ]; then
  step "upgrade: console users kept; no administrator created"
else
  (umask 077; : >"$work/one-time-password")
  if run_as_kimi kimictl admin bootstrap --data-dir "$data_dir" >"$work/one-time-password" 2>"$work/bootstrap.log"; then
    step "first administrator 'admin' created; its one-time password is shown on this terminal only, once" \
      "(not in this log): change it at the first sign-in to the console"
    { echo; echo "  first administrator: admin"; echo "  one-time password:   $(cat "$work/one-time-password")"; echo; } >&3
  elif grep -q "already has users" "$work/bootstrap.log"; then
    step "console users exist already; no administrator created"
  else
    cat "$work/bootstrap.log"
    die "could not create the first administrator"
  fi
  rm -f "$work/one-time-password"
fi

# 6. The model on the medium, if any. Its signers' public keys come from the medium's
# model-trust/ (covered by the verified SHA256SUMS) and --model-trust; they go into the trust
# store the daemon reads (model.trust_store). The model's own signature is checked against
# that store before import (`kimictl model verify`), again on the copy (import), and again
# at every load. A first install activates it; a later run keeps the active version.
if [ -d "$medium/model" ]; then
  store_id=$(config_value store_id); store_id=${store_id:-k3}
  trust_dir=$(config_value trust_store)
  [ -n "$trust_dir" ] || die "$config sets no model.trust_store: the daemon would load no model; set it to /etc/kimi-appliance/trust"
  [ ! -f "$trust_dir" ] || die "model.trust_store $trust_dir is a file: the installer adds keys to a directory"
  # Root copies keys into it: a link, or a directory the service account can change, would let
  # a compromised daemon redirect the copy or trust a key of its own.
  [ ! -L "$trust_dir" ] || die "model.trust_store $trust_dir is a symbolic link: name the directory itself"
  if [ -d "$trust_dir" ] && run_as_kimi test -w "$trust_dir"; then
    die "model.trust_store $trust_dir is writable by the service account kimi: make it root's (0750 root:kimi)"
  fi
  signer_keys=()
  for pem in "$medium"/model-trust/*.pem ${model_trust:+"$model_trust"/*.pem}; do
    # install copies what a link points to: a key is taken only as the plain file it is.
    [ ! -L "$pem" ] || die "$pem is a symbolic link: refusing to copy what it points to into the trust store"
    [ -f "$pem" ] && signer_keys+=("$pem")
  done
  [ ${#signer_keys[@]} -gt 0 ] || die "the medium carries a model but names no signer (model-trust/*.pem); give --model-trust DIR"
  install -d -m 0750 -o root -g kimi "$trust_dir"
  install -m 0640 -o root -g kimi "${signer_keys[@]}" "$trust_dir/"
  step "model trust store $trust_dir: $(cd "$trust_dir" && ls -- *.pem | tr '\n' ' ')"
  run_as_kimi kimictl model verify --trust-dir "$trust_dir" "$medium/model" >"$work/model-verify.log" 2>&1 ||
    { cat "$work/model-verify.log"; die "the model on the medium does not verify against the trust store: refusing it"; }
  digest=$(sed -n 's/^subject sha256: //p' "$work/model-verify.log")
  step "model on the medium verified: sha256 $digest, $(sed -n 's/^signer: //p' "$work/model-verify.log")"
  if service_running; then
    # The running daemon holds the model store's lock; step 7 starts it again.
    systemctl stop kimi-appliance.service
    step "service stopped for the model store"
  fi
  state_of() {  # the state of the store's version whose digest starts with $1, from `kimictl model list`
    run_as_kimi kimictl model list --data-dir "$data_dir" | awk -v id="$store_id" -v d="$1" '$1 == id && $4 == d { print $3 }'
  }
  short=${digest:0:12}
  installed=$(state_of "$short")
  if [ -n "$installed" ]; then
    step "model $store_id $short is installed already ($installed); kept"
  else
    run_as_kimi kimictl model import --id "$store_id" --data-dir "$data_dir" --trust-dir "$trust_dir" --quiet \
      "$medium/model" || die "the model on the medium did not import"
    step "model $store_id $short imported into the store and verified there"
  fi
  active=$(run_as_kimi kimictl model list --data-dir "$data_dir" | awk -v id="$store_id" '$1 == id && $3 == "active" { print $4 }')
  if [ -z "$active" ]; then
    run_as_kimi kimictl model activate --data-dir "$data_dir" --trust-dir "$trust_dir" "$store_id" "$digest" >/dev/null ||
      die "the model $store_id $short did not activate"
    step "model $store_id $short activated"
  elif [ "$active" = "$short" ]; then
    step "model $store_id $short is the active version"
  else
    step "model $store_id: version $active stays active; to serve the medium's, run" \
      "runuser -u kimi -- kimictl model activate $store_id $short (or use the console)"
  fi
fi

# 7. The service.
if [ -d /run/systemd/system ]; then
  systemctl enable kimi-appliance.service >/dev/null
  systemctl restart kimi-appliance.service || die "the service did not start: journalctl -u kimi-appliance"
  step "service kimi-appliance started"
else
  step "systemd is not running here: start the daemon with: runuser -u kimi -- kimi-appliance --config $config"
fi

# 8. The health check, over HTTPS with the configured certificate as the only trusted CA, so
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
audit_public="$data_dir/audit-ed25519.pub.json"
if [ -f "$audit_public" ]; then
  step "audit log public key: key_id $(sed -n 's/.*"key_id": *"\([0-9a-f]*\)".*/\1/p' "$audit_public")" \
    "($audit_public; give it to whoever verifies exported audit logs)"
else
  step "audit log public key: written to $audit_public at the first start"
fi
console_host=$check_host
case "$listen" in 0.0.0.0:*|"[::]:"*) console_host=$(uname -n) ;; esac
step "done. Console: $scheme://$console_host:$port/"
[ -z "$cert_file" ] || step "browsers and clients trust the appliance with $cert_file as their CA, or install a CA-issued certificate (docs/packaging.md)"
