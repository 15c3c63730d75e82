#!/usr/bin/env bash
# Builds Paddock's two deployment images into the local Docker Engine, with no registry (and no
# base image pulled from one): Debian bookworm made by debootstrap, imported with `docker import`.
#
#   deploy/images/build.sh [--dist DIR]
#
#   paddock/control-plane:<version>   the distribution at /opt/paddock on a Debian minbase, with a
#                                     Java runtime cut down by jlink to the modules the CLI jar uses
#                                     (/opt/java); runs as uid 10001, `paddock server` by default
#   paddock/agent:<version>           the agent's runtime bundle at /opt/paddock (its own jlink JRE,
#                                     the agent jar, the entry script, its AOT cache) and a static
#                                     busybox: the Kubernetes backend's init container copies the
#                                     bundle into the pod's shared volume and the user's image runs
#                                     it (`cp -R /opt/paddock/. /target/`); also tagged :latest,
#                                     the backend's default kubernetes.agent-image
#
# DIR is an unpacked distribution (default: this distribution when run from one, else
# `./paddock dist` of this checkout). Needs a JDK >= 21 (jlink, jdeps), debootstrap (installed when
# missing, as root) and busybox-static. Rebuilds every time; the images are tagged with the version.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
dist=""
while [ $# -gt 0 ]; do
  case "$1" in
    --dist) dist=$2; shift 2 ;;
    -h|--help) sed -n '2,21p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "build.sh: unknown argument $1 (try --help)" >&2; exit 2 ;;
  esac
done
if [ -z "$dist" ]; then
  if [ -f "$here/lib/paddock-cli-all.jar" ]; then
    dist=$here
  else
    tarball=$("$here/paddock" dist | tail -n 1)
    dist=${tarball%.tar.gz}
  fi
fi
dist=$(cd "$dist" && pwd)
version=$(cat "$dist/VERSION")
java=$("$dist/bin/paddock" java)
jdk=$(cd "$(dirname "$java")/.." && pwd)
mirror=${PADDOCK_DEBIAN_MIRROR:-http://deb.debian.org/debian}
work=$(mktemp -d /tmp/paddock-images.XXXXXX)
trap 'rm -rf "$work"' EXIT
[ -x /bin/busybox ] || { echo "build.sh: /bin/busybox missing (apt-get install busybox-static)" >&2; exit 1; }
command -v debootstrap >/dev/null 2>&1 || {
  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq debootstrap >/dev/null
}

# --- the agent image: the runtime bundle, built as the backends build it ---------------------------
echo "agent image: building the runtime bundle ..."
bundle=$(PADDOCK_DATA_DIR="$work/data" "$dist/bin/paddock" runtime-bundle --cache "$work/bundles" | tail -n 1)
agent="$work/agent-rootfs"
mkdir -p "$agent/bin" "$agent/opt"
cp /bin/busybox "$agent/bin/busybox"
for tool in sh cp ls cat mkdir; do ln -s busybox "$agent/bin/$tool"; done
cp -a "$bundle" "$agent/opt/paddock"
tar -C "$agent" --owner=0 --group=0 -c . | docker import \
  -c "LABEL org.opencontainers.image.title=paddock-agent org.opencontainers.image.version=$version" \
  -c 'ENV PATH=/bin' \
  -c 'CMD ["/bin/sh", "-c", "cp -R /opt/paddock/. /target/"]' - "paddock/agent:$version" >/dev/null
# The Kubernetes backend's default kubernetes.agent-image.
docker tag "paddock/agent:$version" paddock/agent:latest
echo "built paddock/agent:$version, also paddock/agent:latest ($(docker image inspect -f '{{.Size}}' "paddock/agent:$version") bytes)"

# --- the control-plane image ------------------------------------------------------------------------
echo "control-plane image: jlink (modules from jdeps) ..."
modules=$("$jdk/bin/jdeps" --ignore-missing-deps --multi-release 21 --print-module-deps \
  "$dist/lib/paddock-cli-all.jar")
# Loaded by name or through services, which jdeps does not see: TLS curves, DNS, zip file systems.
modules="$modules,jdk.crypto.ec,jdk.naming.dns,jdk.zipfs,jdk.localedata"
"$jdk/bin/jlink" --add-modules "$modules" --output "$work/java" --strip-debug --no-header-files \
  --no-man-pages --include-locales=en --generate-cds-archive >/dev/null
echo "control-plane image: debootstrap bookworm (minbase) ..."
root="$work/cp-rootfs"
debootstrap --variant=minbase bookworm "$root" "$mirror" >"$work/debootstrap.log" 2>&1 || {
  tail -n 20 "$work/debootstrap.log" >&2
  exit 1
}
rm -rf "$root"/var/cache/apt/archives/*.deb "$root"/var/lib/apt/lists/* "$root"/usr/share/doc/* \
  "$root"/usr/share/man/* "$root"/usr/share/info/* "$root"/var/log/*
cp -a "$work/java" "$root/opt/java"
cp -a "$dist" "$root/opt/paddock"
echo 'paddock:x:10001:10001:Paddock control plane:/var/lib/paddock:/usr/sbin/nologin' >>"$root/etc/passwd"
echo 'paddock:x:10001:' >>"$root/etc/group"
mkdir -p "$root/var/lib/paddock"
chown 10001:10001 "$root/var/lib/paddock"
tar -C "$root" -c . | docker import \
  -c "LABEL org.opencontainers.image.title=paddock-control-plane org.opencontainers.image.version=$version" \
  -c 'ENV JAVA_HOME=/opt/java PATH=/opt/paddock/bin:/opt/java/bin:/usr/sbin:/usr/bin:/sbin:/bin LANG=C.UTF-8 PADDOCK_DATA_DIR=/var/lib/paddock' \
  -c 'USER 10001:10001' \
  -c 'WORKDIR /var/lib/paddock' \
  -c 'EXPOSE 3000' \
  -c 'ENTRYPOINT ["/opt/paddock/bin/paddock"]' \
  -c 'CMD ["server"]' - "paddock/control-plane:$version" >/dev/null
echo "built paddock/control-plane:$version ($(docker image inspect -f '{{.Size}}' "paddock/control-plane:$version") bytes)"
