# Sourced by .ci/docker.sh: installs gVisor's runsc (Debian package) and registers it with dockerd
# twice, both on the ptrace platform (no KVM on our machines):
#   runsc          gVisor's own network stack: for bridge-mode sandboxes (production's default);
#   runsc-hostnet  --network=host as well: gVisor refuses a container in the host's network
#                  namespace otherwise, and the tests' sandboxes use host networking (loopback only).
# It exports PADDOCK_TEST_RUNSC=true, which turns on the second run of DockerIsolationTest under
# runsc-hostnet (maven profile isolation-under-runsc, about 17 s), and DockerCrashTest's OOM case
# finds runsc-hostnet registered. Under gVisor the pids limit is enforced inside the sandbox
# (SECURITY.md, "The pids limit under gVisor"). Every step checks first: running it again
# changes nothing, and dockerd is reloaded (SIGHUP: it re-reads its runtimes without a restart, so
# running containers are untouched) only when its configuration changed.

if ! command -v runsc >/dev/null 2>&1 || ! command -v jq >/dev/null 2>&1; then
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq runsc jq >/dev/null
fi

runsc_registered() {
  docker info --format '{{json .Runtimes}}' | jq -e --arg name "$1" 'has($name)' >/dev/null
}

if ! runsc_registered runsc || ! runsc_registered runsc-hostnet; then
  daemon_json=/etc/docker/daemon.json
  mkdir -p /etc/docker
  [ -s "$daemon_json" ] || echo '{}' >"$daemon_json"
  # jq keeps every other setting of an existing daemon.json as it was.
  jq --arg path "$(command -v runsc)" '
    .runtimes.runsc = {"path": $path, "runtimeArgs": ["--platform=ptrace"]}
    | .runtimes["runsc-hostnet"] =
        {"path": $path, "runtimeArgs": ["--platform=ptrace", "--network=host"]}' \
    "$daemon_json" >"$daemon_json.new"
  mv "$daemon_json.new" "$daemon_json"
  echo "CI: registering runsc with dockerd (reload)"
  kill -HUP "$(pidof dockerd)"
  for _ in $(seq 1 30); do
    runsc_registered runsc-hostnet && break
    sleep 1
  done
fi
if ! runsc_registered runsc || ! runsc_registered runsc-hostnet; then
  echo "CI: runsc could not be registered with dockerd" >&2
  exit 1
fi
export PADDOCK_TEST_RUNSC=true
echo "CI: gVisor $(runsc --version 2>/dev/null | head -n 1) registered with dockerd (isolation suite runs under runsc too)"
