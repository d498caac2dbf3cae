#!/usr/bin/env bash
# Make both sandboxes work on this machine: bubblewrap installed, Docker's engine (Debian's
# docker.io) installed and running, and the docker sandbox's base image built locally.
#   usage: scripts/ensure-sandboxes.sh [--bwrap-only]
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/as-root.sh

command -v bwrap >/dev/null 2>&1 || apt_install bubblewrap
# Ubuntu 24.04: AppArmor keeps unprivileged users from making the user namespaces bwrap needs.
knob=/proc/sys/kernel/apparmor_restrict_unprivileged_userns
if [ "$(id -u)" != 0 ] && [ -e "$knob" ] && [ "$(cat "$knob")" != 0 ]; then
  echo "ensure-sandboxes: setting kernel.apparmor_restrict_unprivileged_userns=0 so that bwrap can make namespaces" >&2
  as_root sysctl -w kernel.apparmor_restrict_unprivileged_userns=0 >/dev/null
fi
if ! bwrap --ro-bind / / --unshare-all --die-with-parent true; then
  echo "ensure-sandboxes: bwrap is installed but cannot make a sandbox here (the line above says why)" >&2
  exit 1
fi
[ "${1:-}" = --bwrap-only ] && exit 0

command -v dockerd >/dev/null 2>&1 || apt_install docker.io
# A pid file left by an engine that was killed (the process gone, or a zombie) stops a new one.
clear_stale_pidfile() {
  local file=$1 pid state
  [ -f "$file" ] || return 0
  pid=$(cat "$file" 2>/dev/null || true)
  state=$(awk '{print $3}' "/proc/$pid/stat" 2>/dev/null || true)
  if [ -z "$pid" ] || [ -z "$state" ] || [ "$state" = Z ]; then
    rm -f "$file"
  fi
}

if ! docker info >/dev/null 2>&1; then
  clear_stale_pidfile /var/run/docker.pid
  clear_stale_pidfile /var/run/docker/containerd/containerd.pid
  echo "starting dockerd (log: /var/log/benchyard-dockerd.log)" >&2
  setsid nohup dockerd >/var/log/benchyard-dockerd.log 2>&1 </dev/null &
  for _ in $(seq 1 60); do
    docker info >/dev/null 2>&1 && break
    sleep 1
  done
  docker info >/dev/null
fi
bash scripts/build-sandbox-image.sh
