#!/bin/sh
# Paddock's entry point inside a sandbox container (mounted read-only at /opt/paddock/bin).
# Checks the image contract before anything starts, so an unsuitable image fails with a clear,
# classified reason instead of a timeout, then runs the agent-server from the bundle's own JRE.
#
# Exit codes the Docker backend classifies: 121 not glibc, 122 no bash, 123 no setpriv,
# 124 the control plane's callback URL is unreachable from inside the sandbox.
fail() {
  echo "paddock-image-check: $2" >&2
  exit "$1"
}
if [ ! -e /lib64/ld-linux-x86-64.so.2 ] && [ ! -e /lib/ld-linux-aarch64.so.1 ]; then
  fail 121 "the image has no glibc dynamic loader (musl images such as Alpine cannot run the agent)"
fi
[ -x /bin/bash ] || fail 122 "the image has no /bin/bash"
if ! command -v setpriv >/dev/null 2>&1; then
  fail 123 "the image has no setpriv (util-linux), needed to run commands as an unprivileged user"
fi
if [ -n "${PADDOCK_CALLBACK_URL:-}" ]; then
  rest=${PADDOCK_CALLBACK_URL#*://}
  hostport=${rest%%/*}
  case "$hostport" in
  *:*) host=${hostport%:*} port=${hostport##*:} ;;
  *) host=$hostport port=80 ;;
  esac
  if ! /bin/bash -c 'for i in 1 2 3; do (exec 3<>"/dev/tcp/$1/$2") 2>/dev/null && exit 0; done; exit 1' \
    check "$host" "$port"; then
    fail 124 "cannot connect to the control plane's callback URL at $host:$port from inside the sandbox"
  fi
fi
options=$(grep -v -e '^#' -e '^$' /opt/paddock/agent-jvm.options)
# The AOT cache trained for this bundle's JRE and jar (JDK 25+), when the bundle has one.
[ -f /opt/paddock/agent.aot ] && options="$options -XX:AOTCache=/opt/paddock/agent.aot"
# shellcheck disable=SC2086 # one option per word
exec /opt/paddock/jre/bin/java $options -jar /opt/paddock/agent/paddock-agent.jar "$@"
