#!/usr/bin/env bash
# Writes the agent-server's AOT cache (JDK 24+) or AppCDS archive (JDK 21-23) for the JDK that runs
# the build: starts a real agent-server with the cache output option, drives its hot routes from a
# second JVM (dev.paddock.agent.AotTraining), then stops it with SIGTERM, which writes the cache.
# ./paddock uses the cache only when the same JDK runs the agent (agent-server.cache-jdk).
# Usage: train-aot.sh <agent jar> <target dir>
set -euo pipefail
jar=$1
target=$2
java="${JAVA_HOME:+$JAVA_HOME/bin/}java"
settings=$("$java" -XshowSettings:properties -version 2>&1)
home=$(sed -n 's/^ *java.home = //p' <<<"$settings")
feature=$(sed -n 's/^ *java.specification.version = //p' <<<"$settings")
mapfile -t options < <(grep -v -e '^#' -e '^$' -e '^-Xlog' "$(dirname "$0")/../../../agent-jvm.options")
options+=(-Xlog:disable)
rm -f "$target"/agent-server.aot "$target"/agent-server.jsa "$target"/agent-server.cache-jdk "$target"/agent-server.aotconf
if [ "$feature" -ge 25 ]; then
  record=(-XX:AOTCacheOutput="$target/agent-server.aot"); cache=agent-server.aot
elif [ "$feature" -ge 24 ]; then
  record=(-XX:AOTMode=record -XX:AOTConfiguration="$target/agent-server.aotconf"); cache=agent-server.aot
else
  record=(-XX:ArchiveClassesAtExit="$target/agent-server.jsa"); cache=agent-server.jsa
fi

work=$(mktemp -d)
server=""
cleanup() {
  if [ -n "$server" ] && kill -0 "$server" 2>/dev/null; then kill -KILL "$server" 2>/dev/null || true; fi
  rm -rf "$work"
}
trap cleanup EXIT
mkdir -p "$work/workspace"
key=$(od -An -tx1 -N16 /dev/urandom | tr -d ' \n')
mkfifo "$work/out"
# Job control on for the launch: a script's `cmd &` starts cmd with SIGINT ignored, and the agent
# would train (and so load at every start) the code that undoes that, which real starts skip.
set -m
"$java" "${options[@]}" "${record[@]}" -jar "$jar" --port 0 --host 127.0.0.1 \
  --workspace "$work/workspace" --events-dir "$work/events" --secrets-stdin \
  <<<"session_api_key=$key" >"$work/out" 2>"$work/err" &
server=$!
set +m
exec 3<"$work/out"
port=""
while IFS= read -r -t 60 line <&3; do
  if [[ $line =~ listening\ on\ http://[^:]+:([0-9]+) ]]; then port=${BASH_REMATCH[1]}; break; fi
done
if [ -z "$port" ]; then echo "train-aot: the agent-server did not start" >&2; cat "$work/err" >&2; exit 1; fi
cat <&3 >/dev/null &
"$java" -cp "$jar" dev.paddock.agent.AotTraining "$port" "$key" "$work/workspace"
kill -TERM "$server"
wait "$server" || true
server=""
if [ "$feature" -eq 24 ]; then
  "$java" "${options[@]}" -XX:AOTMode=create -XX:AOTConfiguration="$target/agent-server.aotconf" \
    -XX:AOTCache="$target/agent-server.aot" -jar "$jar"
fi
if [ ! -s "$target/$cache" ]; then echo "train-aot: no cache was written" >&2; cat "$work/err" >&2; exit 1; fi
printf '%s\n' "$home" > "$target/agent-server.cache-jdk"
echo "agent-server: wrote $target/$cache for $home"
