# Sourced by scripts/ensure-*.sh: `as_root CMD...` runs CMD as root (directly when this is root,
# through sudo otherwise), and `apt_install PKG...` runs `apt-get update` then installs PKG.
as_root() {
  if [ "$(id -u)" = 0 ]; then
    "$@"
  elif command -v sudo >/dev/null 2>&1; then
    sudo "$@"
  else
    echo "$(basename "$0"): '$*' needs root: run this script as root or install sudo" >&2
    return 1
  fi
}

apt_install() {
  as_root apt-get update -qq
  as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$@" >/dev/null
}
