#!/usr/bin/env bash
# Assembles Paddock's self-contained distribution from a built checkout (./paddock dist builds
# first): a directory and a tarball that run with only a JDK >= 21, no source checkout.
#
#   deploy/dist.sh [--output DIR]     (default <checkout>/target/dist)
#
# Layout of paddock-<version>/:
#   bin/paddock                      the launcher (the checkout's ./paddock, which sees lib/ and
#                                    runs the jars there instead of building)
#   lib/paddock-cli-all.jar          the CLI and control plane (server, runtime-api, doctor, ...),
#                                    with every backend and the runtime-bundle builder
#   lib/paddock-agent-server-all.jar the agent-server; found beside the CLI jar (AgentDistribution)
#   lib/agent-jvm.options            its JVM options
#   lib/build-sandbox-image.sh       ./paddock docker-image
#   deploy/                          Kubernetes manifests and the image builders (docs/DEPLOY.md)
#   docs/DEPLOY.md, README.md
#
# No AOT cache is shipped: one is valid only for the JDK and jar paths it was trained with. The
# process backend starts agents without it; container and SSH backends train their own in the
# runtime bundle they build on first use.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
output="$root/target/dist"
while [ $# -gt 0 ]; do
  case "$1" in
    --output) output=$2; shift 2 ;;
    --output=*) output=${1#--output=}; shift ;;
    -h|--help) sed -n '2,22p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "dist.sh: unknown argument $1 (try --help)" >&2; exit 2 ;;
  esac
done

version=$(sed -n '/<artifactId>paddock-parent<\/artifactId>/,/<\/version>/s/.*<version>\(.*\)<\/version>.*/\1/p' \
  "$root/pom.xml")
name="paddock-$version"
cli_jar="$root/paddock-cli/target/paddock-cli-all.jar"
agent_jar="$root/paddock-agent-server/target/paddock-agent-server-all.jar"
for jar in "$cli_jar" "$agent_jar"; do
  if [ ! -f "$jar" ]; then
    echo "dist.sh: $jar is missing: build first (./paddock build, or ./paddock dist)" >&2
    exit 1
  fi
done

mkdir -p "$output"
output=$(cd "$output" && pwd)
stage=$(mktemp -d "$output/.$name.XXXXXX")
trap 'rm -rf "$stage"' EXIT
dir="$stage/$name"
mkdir -p "$dir/bin" "$dir/lib" "$dir/docs"
install -m 0755 "$root/paddock" "$dir/bin/paddock"
install -m 0644 "$cli_jar" "$agent_jar" "$root/paddock-agent-server/agent-jvm.options" "$dir/lib/"
install -m 0755 "$root/paddock-backend-docker/src/main/sh/build-sandbox-image.sh" "$dir/lib/"
cp -R "$root/deploy" "$dir/deploy"
rm -f "$dir/deploy/dist.sh"
install -m 0644 "$root/README.md" "$dir/"
install -m 0644 "$root/docs/DEPLOY.md" "$dir/docs/"
echo "$version" >"$dir/VERSION"

# The tarball first, then both renamed into place, so neither is ever seen half written.
tar -C "$stage" -czf "$stage/$name.tar.gz" --owner=0 --group=0 "$name"
rm -rf "${output:?}/$name" "$output/$name.tar.gz"
mv "$dir" "$output/$name"
mv "$stage/$name.tar.gz" "$output/$name.tar.gz"
echo "$output/$name.tar.gz"
