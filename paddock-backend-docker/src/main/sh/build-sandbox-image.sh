#!/usr/bin/env bash
# Builds Paddock's default sandbox image locally, with no registry: a minimal Debian bookworm root
# file system made by debootstrap from the Debian mirror, imported into the local Docker Engine.
#
#   build-sandbox-image.sh [IMAGE]        (default paddock/sandbox:bookworm)
#
# Reuses the image when it already exists (set PADDOCK_REBUILD_IMAGE=1 to rebuild). Installs
# debootstrap when it is missing (Debian/Ubuntu hosts, as root). The image holds no Paddock code:
# the agent-server comes from the runtime bundle the Docker backend mounts read-only at start, so
# any glibc image with /bin/sh, bash and setpriv (util-linux) works as well as this one.
set -euo pipefail
image=${1:-paddock/sandbox:bookworm}
mirror=${PADDOCK_DEBIAN_MIRROR:-http://deb.debian.org/debian}

if [ "${PADDOCK_REBUILD_IMAGE:-0}" != 1 ] && docker image inspect "$image" >/dev/null 2>&1; then
  echo "sandbox image $image already present"
  exit 0
fi
if ! command -v debootstrap >/dev/null 2>&1; then
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq debootstrap >/dev/null
fi

rootfs=$(mktemp -d /tmp/paddock-rootfs.XXXXXX)
trap 'rm -rf "$rootfs"' EXIT
echo "debootstrap bookworm into $rootfs (a minute or two) ..."
debootstrap --variant=minbase --include=git,ca-certificates,procps \
  bookworm "$rootfs" "$mirror" >"$rootfs.log" 2>&1 || {
  tail -n 20 "$rootfs.log" >&2
  rm -f "$rootfs.log"
  exit 1
}
rm -f "$rootfs.log"
# Smaller and reproducible-ish: no package caches, docs or logs in the image.
rm -rf "$rootfs"/var/cache/apt/archives/*.deb "$rootfs"/var/lib/apt/lists/* \
  "$rootfs"/usr/share/doc/* "$rootfs"/usr/share/man/* "$rootfs"/var/log/*
tar -C "$rootfs" -c . | docker import \
  -c 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin LANG=C.UTF-8' \
  -c 'CMD ["/bin/bash"]' - "$image" >/dev/null
echo "built sandbox image $image ($(docker image inspect -f '{{.Size}}' "$image") bytes)"
