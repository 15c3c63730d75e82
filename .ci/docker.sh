# Sourced by .ci/run: makes sure a local Docker Engine serves the Docker backend's tests, with the
# minimal sandbox image built locally (no registry), then exports PADDOCK_TEST_REQUIRE_DOCKER=true
# so those tests fail, rather than skip, when the engine is missing. Docker Engine is Debian's
# docker.io; busybox-static gives the test of an image without glibc its static shell. Every step
# checks first, so running it again changes nothing.

docker_missing=()
command -v dockerd >/dev/null 2>&1 || docker_missing+=(docker.io)
[ -x /bin/busybox ] || docker_missing+=(busybox-static)
command -v debootstrap >/dev/null 2>&1 || docker_missing+=(debootstrap)
if [ ${#docker_missing[@]} -gt 0 ]; then
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${docker_missing[@]}" >/dev/null
fi

if ! docker info >/dev/null 2>&1; then
  echo "CI: starting dockerd (log: /tmp/paddock-ci-dockerd.log)"
  source .ci/daemon.sh
  ci_daemon nohup dockerd >/tmp/paddock-ci-dockerd.log 2>&1 &
  for _ in $(seq 1 60); do
    docker info >/dev/null 2>&1 && break
    sleep 1
  done
fi
docker info --format 'CI: Docker Engine {{.ServerVersion}}, {{.Driver}}, cgroup v{{.CgroupVersion}}'

# The Docker suites run on the minimal image (166 MB, 4 min to build here under load), not on
# the default one with Python, Node.js and build tools (609 MB, 7 min under load): nothing in
# them needs those tools. PADDOCK_TEST_DOCKER_IMAGE tells them which image to use.
bash paddock-backend-docker/src/main/sh/build-sandbox-image.sh --minimal
export PADDOCK_TEST_DOCKER_IMAGE=paddock/sandbox:bookworm-minimal
export PADDOCK_TEST_REQUIRE_DOCKER=true
# The faults suite's DockerRestartTest stops and starts this dockerd (as started above, under the
# test lock): it stops every container on the host, so it runs only where this says it may.
export PADDOCK_TEST_RESTART_DOCKERD=true

# gVisor: the Docker isolation suite runs a second time under runsc (Debian's package), registered
# with dockerd as the runtime "runsc" with the ptrace platform (no KVM on our machines). A reload
# (SIGHUP) picks the runtime up; dockerd reloads "runtimes" without restarting, so running
# containers are untouched, and a dockerd that already knows runsc is left alone.
source .ci/runsc.sh
