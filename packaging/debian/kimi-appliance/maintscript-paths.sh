# Sourced by the kimi-appliance postinst (installed as
# /usr/share/kimi-appliance/maintscript-paths.sh) and by packaging/tests/maintscript_paths_test.sh.
#
# The directories and files the package owns, made and given their owner and mode without
# ever following a link. /var/lib/kimi-appliance and /var/log/kimi-appliance belong to the
# service account: a compromised daemon can put a symbolic link (or a hard link) there, and a
# root script that ran `install -d`, `chown` or `chmod` through it would hand the link's
# target to the account. So each path is checked top down and refused when it is a link;
# chown never dereferences. The service is stopped while this runs (the postinst and prerm
# see to it), so no process of the account can swap a path between the check and the change.
#
# The owners are variables so the test can use accounts that exist where it runs.
: "${KIMI_ADMIN_USER:=root}" "${KIMI_USER:=kimi}" "${KIMI_GROUP:=kimi}" "${KIMI_LOG_GROUP:=adm}"

kimi_refuse() {
  echo "kimi-appliance: $*" >&2
  return 1
}

# kimi_dir PATH MODE OWNER GROUP: PATH is made (mkdir, which never follows a link) or must
# already be a directory that is not a link; then its owner and mode are set.
kimi_dir() {
  if [ -L "$1" ]; then
    kimi_refuse "$1 is a symbolic link (to $(readlink "$1")), not a directory: refusing to follow it;" \
      "remove it (the service account may have planted it) and run 'dpkg --configure -a' again"
    return 1
  fi
  if [ ! -e "$1" ]; then
    mkdir -m "$2" "$1" || return 1
  elif [ ! -d "$1" ]; then
    kimi_refuse "$1 exists and is not a directory; move it away and run 'dpkg --configure -a' again"
    return 1
  fi
  chown --no-dereference "$3:$4" "$1" && chmod "$2" "$1"
}

# kimi_file PATH MODE OWNER GROUP: an existing regular file that is neither a symbolic link
# nor a second name (hard link) of another file gets its owner and mode.
kimi_file() {
  if [ -L "$1" ] || [ ! -f "$1" ]; then
    kimi_refuse "$1 is not a regular file (a link or missing): refusing to change its owner or mode"
    return 1
  fi
  if [ "$(stat -c %h "$1")" != 1 ]; then
    kimi_refuse "$1 has other names (hard links): refusing to change its owner or mode"
    return 1
  fi
  chown --no-dereference "$3:$4" "$1" && chmod "$2" "$1"
}

# kimi_prepare_paths ROOT: every directory of the package under ROOT ("" on the system),
# parents before children, and the configuration's owner and mode.
kimi_prepare_paths() {
  kimi_dir "$1/etc/kimi-appliance" 0750 "$KIMI_ADMIN_USER" "$KIMI_GROUP" &&
    # The public keys and CAs of model signers (model.trust_store): empty until the installer
    # or the operator adds one; the daemon loads only models that verify against them.
    kimi_dir "$1/etc/kimi-appliance/trust" 0750 "$KIMI_ADMIN_USER" "$KIMI_GROUP" &&
    kimi_dir "$1/var/lib/kimi-appliance" 0700 "$KIMI_USER" "$KIMI_GROUP" &&
    kimi_dir "$1/var/lib/kimi-appliance/tls" 0700 "$KIMI_USER" "$KIMI_GROUP" &&
    kimi_dir "$1/var/log/kimi-appliance" 0750 "$KIMI_USER" "$KIMI_LOG_GROUP" &&
    # The configuration names secrets' paths and is read by the service user only.
    kimi_file "$1/etc/kimi-appliance/appliance.json" 0640 "$KIMI_ADMIN_USER" "$KIMI_GROUP"
}
