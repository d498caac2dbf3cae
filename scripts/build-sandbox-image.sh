#!/usr/bin/env bash
# Build the Docker sandbox's base image locally, without any registry: a minimal Debian bookworm
# root made by debootstrap from Debian's package mirror (python3 and pytest included), imported
# with `docker import`. Does nothing when the image is already there.
#   usage: scripts/build-sandbox-image.sh [IMAGE]    (default benchyard/sandbox:bookworm)
set -euo pipefail
image=${1:-benchyard/sandbox:bookworm}
mirror=${DEBIAN_MIRROR:-http://deb.debian.org/debian}
packages=python3,python3-pytest

if docker image inspect "$image" >/dev/null 2>&1; then
  exit 0
fi
if ! command -v debootstrap >/dev/null 2>&1; then
  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq debootstrap >/dev/null
fi
root=$(mktemp -d /var/tmp/benchyard-rootfs.XXXXXX)
trap 'rm -rf "$root"' EXIT
echo "building $image from $mirror (debootstrap, a few minutes)" >&2
debootstrap --variant=minbase --include="$packages" bookworm "$root" "$mirror" >/dev/null
rm -rf "$root"/var/cache/apt/archives/*.deb "$root"/var/lib/apt/lists/* "$root"/usr/share/doc/* "$root"/usr/share/man/*
tar -C "$root" --numeric-owner -c . | docker import \
  --change 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
  --change 'ENV LANG=C.UTF-8' \
  --change 'CMD ["/bin/sh"]' \
  --message "benchyard sandbox base: debootstrap bookworm minbase + $packages" \
  - "$image" >/dev/null
echo "built $image" >&2
