#!/usr/bin/env bash
# Builds Paddock's sandbox images locally, with no registry: a Debian bookworm root file system
# made by debootstrap from the Debian mirror, imported into the local Docker Engine.
#
#   build-sandbox-image.sh [IMAGE]             the default image (paddock/sandbox:bookworm): what
#                                              agent tasks need (Python 3 with pip and venv, Node.js
#                                              and npm, git, curl, jq, ripgrep, build-essential,
#                                              unzip, xz, procps, less), under 600 MB
#   build-sandbox-image.sh --minimal [IMAGE]   the minimal one (paddock/sandbox:bookworm-minimal):
#                                              bash, git, ca-certificates, procps, about 150 MB;
#                                              what the Docker backend's tests run on
#
# Reuses an image that exists with the same contents (its label dev.paddock.image-contents; set
# PADDOCK_REBUILD_IMAGE=1 to rebuild anyway). Installs debootstrap when it is missing
# (Debian/Ubuntu hosts, as root). The image holds no Paddock code: the agent-server comes from the
# runtime bundle the Docker backend mounts read-only at start, so any glibc image with /bin/sh,
# bash and setpriv (util-linux) works as well as these.
set -euo pipefail
flavour=full
if [ "${1:-}" = --minimal ]; then
  flavour=minimal
  shift
fi
mirror=${PADDOCK_DEBIAN_MIRROR:-http://deb.debian.org/debian}
base=git,ca-certificates,procps
if [ "$flavour" = minimal ]; then
  image=${1:-paddock/sandbox:bookworm-minimal}
  extra=""
else
  image=${1:-paddock/sandbox:bookworm}
  # Installed with apt inside the new root, not by debootstrap: debootstrap configures its
  # --include packages in an order that fails for npm's dependencies.
  extra="python3 python3-pip python3-venv nodejs npm curl jq ripgrep build-essential unzip less"
  extra+=" xz-utils"
fi
packages="$base $extra"
# Changes when the package list does: an image built from another list is rebuilt.
contents="$flavour-$(printf '%s' "$packages" | sha256sum | cut -c1-12)"

present=$(docker image inspect -f '{{index .Config.Labels "dev.paddock.image-contents"}}' \
  "$image" 2>/dev/null || true)
if [ "${PADDOCK_REBUILD_IMAGE:-0}" != 1 ] && [ "$present" = "$contents" ]; then
  echo "sandbox image $image already present"
  exit 0
fi
if ! command -v debootstrap >/dev/null 2>&1; then
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq debootstrap >/dev/null
fi

rootfs=$(mktemp -d /tmp/paddock-rootfs.XXXXXX)
cleanup() {
  if mountpoint -q "$rootfs/proc" && ! umount "$rootfs/proc"; then
    echo "cannot unmount $rootfs/proc: $rootfs is left in place" >&2
    return
  fi
  rm -rf "$rootfs" "$rootfs.log"
}
trap cleanup EXIT
echo "debootstrap bookworm ($flavour) into $rootfs (a minute, or a few for the default image) ..."
debootstrap --variant=minbase --include="$base" \
  bookworm "$rootfs" "$mirror" >"$rootfs.log" 2>&1 || {
  tail -n 20 "$rootfs.log" >&2
  exit 1
}
# The image's apt can install more, from the same mirror and its security updates.
cat >"$rootfs/etc/apt/sources.list" <<SOURCES
deb $mirror bookworm main
deb $mirror bookworm-updates main
deb http://deb.debian.org/debian-security bookworm-security main
SOURCES
if [ -n "$extra" ]; then
  # dpkg leaves out what no task reads (Debian's own way to slim an image): documentation, manual
  # pages, translations, TypeScript declarations and Markdown files of Node.js modules, and gcc's LTO
  # dump tool (31 MB).
  cat >"$rootfs/etc/dpkg/dpkg.cfg.d/paddock-slim" <<'EXCLUDES'
path-exclude=/usr/share/doc/*
path-exclude=/usr/share/man/*
path-exclude=/usr/share/info/*
path-exclude=/usr/share/locale/*
path-exclude=/usr/share/nodejs/*.d.ts
path-exclude=/usr/share/nodejs/*.md
path-exclude=/usr/bin/x86_64-linux-gnu-lto-dump-*
EXCLUDES
  cp /etc/resolv.conf "$rootfs/etc/resolv.conf"
  mount -t proc proc "$rootfs/proc"
  # shellcheck disable=SC2086 # one word per package
  chroot "$rootfs" /bin/sh -c "apt-get update -qq && DEBIAN_FRONTEND=noninteractive \
    apt-get install -y -qq --no-install-recommends $extra && apt-get clean" >>"$rootfs.log" 2>&1 || {
    tail -n 20 "$rootfs.log" >&2
    exit 1
  }
  umount "$rootfs/proc"
  : >"$rootfs/etc/resolv.conf"
fi
# Smaller and reproducible-ish: no package caches, docs, man pages, foreign locales or logs.
rm -rf "$rootfs"/var/cache/apt/archives/*.deb "$rootfs"/var/lib/apt/lists/* \
  "$rootfs"/usr/share/doc/* "$rootfs"/usr/share/man/* "$rootfs"/usr/share/info/* \
  "$rootfs"/var/log/* "$rootfs"/var/cache/debconf/*-old
find "$rootfs/usr/share/locale" -mindepth 1 -maxdepth 1 ! -name 'C.*' ! -name locale.alias \
  -exec rm -rf {} + 2>/dev/null || true
tar -C "$rootfs" -c . | docker import \
  -c 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin LANG=C.UTF-8' \
  -c "LABEL dev.paddock.image-contents=$contents" \
  -c 'CMD ["/bin/bash"]' - "$image" >/dev/null
echo "built sandbox image $image ($(docker image inspect -f '{{.Size}}' "$image") bytes)"
