#!/bin/sh
# Paddock's entry point inside a sandbox container (mounted read-only at /opt/paddock/bin).
# Checks the image contract before anything starts, so an unsuitable image fails with a clear,
# classified reason instead of a timeout, then runs the agent-server from the bundle's own JRE.
#
# It runs as root: it runs nothing found through the image's PATH (a directory on it may be
# writable by the sandbox user) and leaves no glob or word splitting to chance.
#
# Exit codes the Docker backend classifies: 121 not glibc, 122 no bash, 123 no setpriv,
# 124 the control plane's callback URL is unreachable from inside the sandbox.
set -f
cd /
fail() {
  echo "paddock-image-check: $2" >&2
  exit "$1"
}
if [ ! -e /lib64/ld-linux-x86-64.so.2 ] && [ ! -e /lib/ld-linux-aarch64.so.1 ]; then
  fail 121 "the image has no glibc dynamic loader (musl images such as Alpine cannot run the agent)"
fi
[ -x /bin/bash ] || fail 122 "the image has no /bin/bash"
setpriv=
for dir in /usr/bin /bin /usr/sbin /sbin; do
  if [ -x "$dir/setpriv" ]; then
    setpriv=$dir/setpriv
    break
  fi
done
[ -n "$setpriv" ] ||
  fail 123 "the image has no setpriv (util-linux), needed to run commands as an unprivileged user"
if [ -n "${PADDOCK_CALLBACK_URL:-}" ]; then
  case "$PADDOCK_CALLBACK_URL" in https://*) default_port=443 ;; *) default_port=80 ;; esac
  rest=${PADDOCK_CALLBACK_URL#*://}
  hostport=${rest%%/*}
  hostport=${hostport##*@} # never user:password
  case "$hostport" in
  \[*\]:*) host=${hostport%\]:*} host=${host#\[} port=${hostport##*\]:} ;;
  \[*\]) host=${hostport#\[} host=${host%\]} port=$default_port ;;
  *:*) host=${hostport%:*} port=${hostport##*:} ;;
  *) host=$hostport port=$default_port ;;
  esac
  if ! /bin/bash -c 'for i in 1 2 3; do (exec 3<>"/dev/tcp/$1/$2") 2>/dev/null && exit 0; done; exit 1' \
    check "$host" "$port"; then
    fail 124 "cannot connect to the control plane's callback URL at $host:$port from inside the sandbox"
  fi
fi
# JVM options, one per line, read with the shell's own read (no tools from the image), go before
# -jar; the agent's arguments (this script's) after it. POSIX sh has one array, "$@": the options
# are appended behind the arguments, then the arguments are rotated to the end.
count=$#
while IFS= read -r line || [ -n "$line" ]; do
  case "$line" in
  '' | '#'*) ;;
  *) set -- "$@" "$line" ;;
  esac
done </opt/paddock/agent-jvm.options
# The AOT cache trained for this bundle's JRE and jar (JDK 25+), when the bundle has one.
[ -f /opt/paddock/agent.aot ] && set -- "$@" -XX:AOTCache=/opt/paddock/agent.aot
set -- "$@" -jar /opt/paddock/agent/paddock-agent.jar
while [ "$count" -gt 0 ]; do
  set -- "$@" "$1"
  shift
  count=$((count - 1))
done
# Options an image sets for its own Java (e.g. a -javaagent) are not for the agent's cut-down JRE.
unset JAVA_TOOL_OPTIONS JDK_JAVA_OPTIONS _JAVA_OPTIONS
exec /opt/paddock/jre/bin/java "$@"
