# The SSH backend's half on a sandbox host, sent with every call (never installed, so a host can
# never run an older copy): bash -c "<this>" paddock-host BASE OP ARGS...
# Failures go to stderr as "paddock-host: <class>: <detail>" (class: unsuitable, disk-full,
# exists, missing, exited, never-ready, invalid), which the backend classifies; the detail is logged
# only. Every sandbox lives in BASE/sandboxes/<id>/ with its marker paddock.marker (key=value).
set -u
base=$1 op=$2
shift 2
case $base in /*) ;; *) base=$HOME/$base ;; esac
sandboxes=$base/sandboxes
bundles=$base/bundles

fail() {
  echo "paddock-host: $1: $2" >&2
  exit 3
}

valid_id() {
  [[ $1 =~ ^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$ ]] || fail invalid "bad sandbox id"
}

# The freezer this host offers us: a cgroup v2 or v1 freezer directory we may create, else signals.
cgroup_root() {
  local root
  if [ -f /sys/fs/cgroup/cgroup.controllers ]; then
    root=/sys/fs/cgroup/paddock-ssh
  elif [ -d /sys/fs/cgroup/freezer ]; then
    root=/sys/fs/cgroup/freezer/paddock-ssh
  else
    return 1
  fi
  mkdir -p "$root" 2>/dev/null && [ -w "$root" ] && echo "$root"
}

free_kib() {
  df -Pk "$1" 2>/dev/null | awk 'NR == 2 { print $4 }'
}

probe() {
  command -v setsid >/dev/null || fail unsuitable "setsid is missing"
  command -v base64 >/dev/null || fail unsuitable "base64 is missing"
  local glibc
  glibc=$(getconf GNU_LIBC_VERSION 2>/dev/null) || fail unsuitable "no glibc (getconf GNU_LIBC_VERSION failed)"
  mkdir -p "$sandboxes" "$bundles" 2>/dev/null || fail disk-full "cannot create $base"
  echo "glibc=${glibc#glibc }"
  echo "arch=$(uname -m)"
  echo "free_kib=$(free_kib "$base")"
  if [ -n "${1:-}" ]; then echo "bundle=$(has_bundle "$1")"; fi
}

has_bundle() {
  [ -f "$bundles/$1/.complete" ] && echo present || echo absent
}

# Reads a tar stream of the bundle from stdin into bundles/KEY, atomically.
put_bundle() {
  local key=$1 temp
  [ -f "$bundles/$key/.complete" ] && return 0
  mkdir -p "$bundles" || fail disk-full "cannot create $bundles"
  temp=$(mktemp -d "$bundles/$key.partial-XXXXXX") || fail disk-full "cannot create a directory in $bundles"
  if ! tar -xzf - -C "$temp" 2>"$temp.err"; then
    local why
    why=$(tail -c 400 "$temp.err")
    rm -rf "$temp" "$temp.err"
    case $why in *"No space left"*) fail disk-full "$why" ;; esac
    fail unsuitable "cannot unpack the runtime bundle: $why"
  fi
  rm -f "$temp.err"
  mv -T "$temp" "$bundles/$key" 2>/dev/null || rm -rf "$temp"
  [ -f "$bundles/$key/.complete" ] || fail unsuitable "the runtime bundle is incomplete"
}

start_time() {
  # Field 22 of /proc/PID/stat, read after the ")" that ends the (possibly spaced) command name.
  local stat
  stat=$(cat "/proc/$1/stat" 2>/dev/null) || return 1
  stat=${stat##*) }
  set -- $stat
  echo "${20}"
}

alive() { # PID START ; a zombie has exited: its parent (init, here) reaps it when it gets to it
  [ -n "$1" ] && [ "$1" != 0 ] && [ "$(start_time "$1")" = "$2" ] \
    && [ "$(sed 's/.*) //' "/proc/$1/stat" 2>/dev/null | cut -d' ' -f1)" != Z ]
}

# Every live process of the sandbox: the agent's descendants (commands start their own sessions,
# so its process group is not enough) and processes labelled with the sandbox id.
tree() { # PID ID (PID 0: the labelled ones only)
  {
    [ "$1" != 0 ] && descendants "$1"
    labelled "$2"
  } | sort -un
}

descendants() { # PID, itself included
  ps -e -o pid=,ppid= | awk -v root="$1" '
    { parent[$1] = $2 }
    END {
      found[root] = 1; print root
      do { more = 0
        for (p in parent) if (!(p in found) && (parent[p] in found)) { found[p] = 1; print p; more = 1 }
      } while (more)
    }'
}

labelled() { # ID
  local env
  for env in $(grep -lsxzF "PADDOCK_SANDBOX_ID=$1" /proc/[0-9]*/environ); do
    env=${env#/proc/}
    echo "${env%/environ}"
  done
}

marker_value() { # DIR KEY
  sed -n "s/^$2=//p" "$1/paddock.marker" 2>/dev/null | tail -n 1
}

describe() { # ID
  local dir=$sandboxes/$1 pid start port cgroup frozen=0 state
  [ -f "$dir/paddock.marker" ] || { echo "state=missing"; return; }
  cat "$dir/paddock.marker"
  pid=$(marker_value "$dir" pid) start=$(marker_value "$dir" start) port=$(marker_value "$dir" port)
  cgroup=$(marker_value "$dir" cgroup)
  if [ -z "$port" ] && [ -f "$dir/ready" ]; then
    echo "port=$(cat "$dir/ready")"
  fi
  if ! alive "$pid" "$start"; then
    echo "state=exited"
    return
  fi
  if [ -n "$cgroup" ] && [ -f "$cgroup/cgroup.events" ]; then
    grep -q '^frozen 1' "$cgroup/cgroup.events" && frozen=1
  elif [ -n "$cgroup" ] && [ -f "$cgroup/freezer.state" ]; then
    [ "$(cat "$cgroup/freezer.state")" = FROZEN ] && frozen=1
  else
    state=$(sed 's/.*) //' "/proc/$pid/stat" | cut -d' ' -f1)
    [ "$state" = T ] && frozen=1
  fi
  [ $frozen = 1 ] && echo "state=frozen" || echo "state=alive"
}

inspect() {
  valid_id "$1"
  describe "$1"
}

list() {
  local dir
  for dir in "$sandboxes"/*/; do
    [ -f "$dir/paddock.marker" ] || continue
    echo "---"
    describe "$(basename "$dir")"
  done
  echo "---"
}

# Moves the calling process into CGROUP (when set), then runs the command.
launch_in() { # CGROUP CMD...
  local cgroup=$1
  shift
  [ -n "$cgroup" ] && echo $$ >"$cgroup/cgroup.procs"
  exec "$@"
}

limits() { # CGROUP MEM CPUS_QUOTA PIDS ; prints what was enforced
  local cgroup=$1 mem=$2 quota=$3 pids=$4 parent enforced=""
  [ -f "$cgroup/cgroup.freeze" ] || { echo ""; return; }
  for parent in /sys/fs/cgroup /sys/fs/cgroup/paddock-ssh; do
    echo "+memory +pids +cpu" >"$parent/cgroup.subtree_control" 2>/dev/null
  done
  if [ "$mem" != 0 ] && echo "$mem" >"$cgroup/memory.max" 2>/dev/null; then
    echo 0 >"$cgroup/memory.swap.max" 2>/dev/null
    enforced="$enforced memory"
  fi
  [ "$quota" != 0 ] && echo "$quota 100000" >"$cgroup/cpu.max" 2>/dev/null && enforced="$enforced cpus"
  [ "$pids" != 0 ] && echo "$pids" >"$cgroup/pids.max" 2>/dev/null && enforced="$enforced pids"
  echo $enforced
}

start() { # ID BUNDLE MIN_FREE_KIB READY_SECONDS MEM CPU_QUOTA PIDS ; stdin: secret/env/cmd lines
  local id=$1 key=$2 minfree=$3 ready_seconds=$4 mem=$5 quota=$6 pids=$7
  valid_id "$id"
  local bundle=$bundles/$key dir=$sandboxes/$id
  [ -f "$bundle/.complete" ] || fail missing "runtime bundle $key is not on this host"
  local free
  free=$(free_kib "$base")
  [ -n "$free" ] && [ "$free" -ge "$minfree" ] || fail disk-full "only ${free:-?} KiB free in $base (need $minfree)"
  mkdir -p "$sandboxes"
  mkdir "$dir" 2>/dev/null || fail exists "sandbox directory $dir already exists"
  umask 077
  if ! mkdir "$dir/workspace" "$dir/events" 2>/dev/null || ! : >"$dir/secrets" 2>/dev/null; then
    rm -rf "$dir"
    fail disk-full "cannot create the sandbox directory in $base"
  fi
  local envs=() cmd=() kind a
  while read -r kind a; do
    case $kind in
      secret) printf '%s\n' "$a" >>"$dir/secrets" ;;
      env) envs+=("$(printf %s "$a" | base64 -d)") ;;
      cmd) cmd+=("$(printf %s "$a" | base64 -d)") ;;
    esac
  done
  if [ ${#cmd[@]} = 0 ]; then
    local options=() line
    while IFS= read -r line || [ -n "$line" ]; do
      case $line in '' | '#'*) ;; *) options+=("$line") ;; esac
    done <"$bundle/agent-jvm.options"
    cmd=("$bundle/jre/bin/java" "${options[@]}")
    [ -f "$bundle/agent.aot" ] && cmd+=("-XX:AOTCache=$bundle/agent.aot")
    cmd+=(-jar "$bundle/agent/paddock-agent.jar")
  fi
  cmd+=(--host 127.0.0.1 --port 0 --workspace "$dir/workspace" --events-dir "$dir/events"
    --ready-file "$dir/ready" --sandbox-id "$id" --secrets-stdin)
  local root cgroup="" freezer=signals enforced=""
  if root=$(cgroup_root) && mkdir "$root/$id" 2>/dev/null; then
    cgroup=$root/$id
    [ -f "$cgroup/cgroup.freeze" ] && freezer=cgroup-v2 || freezer=cgroup-v1
    enforced=$(limits "$cgroup" "$mem" "$quota" "$pids")
  fi
  # The secrets (digests only) reach the agent through a descriptor of a file already removed.
  exec 3<"$dir/secrets"
  rm -f "$dir/secrets"
  cd "$dir/workspace"
  setsid env -i PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
    LANG=C.UTF-8 "${envs[@]}" HOME="$dir/workspace" PADDOCK_SANDBOX_ID="$id" PADDOCK_MANAGED=true \
    bash -c "$(declare -f launch_in); launch_in \"\$@\"" launch "$cgroup" "${cmd[@]}" \
    <&3 >"$dir/agent.log" 2>&1 3<&- &
  local pid=$!
  exec 3<&-
  local start=""
  while [ -z "$start" ] && kill -0 "$pid" 2>/dev/null; do
    start=$(start_time "$pid")
  done
  {
    echo "paddock.managed=true"
    echo "paddock.sandbox-id=$id"
    echo "pid=$pid"
    echo "start=${start:-0}"
    echo "cgroup=$cgroup"
    echo "freezer=$freezer"
    echo "enforced=$enforced"
    echo "bundle=$key"
    echo "created=$(date +%s)"
  } >"$dir/paddock.marker"
  local deadline=$((SECONDS + ready_seconds))
  while [ ! -s "$dir/ready" ]; do
    if ! kill -0 "$pid" 2>/dev/null; then
      wait "$pid"
      local code=$?
      local tail
      tail=$(tail -c 2000 "$dir/agent.log" 2>/dev/null)
      teardown "$id" 0
      case $tail in *"No space left"*) fail disk-full "$tail" ;; esac
      fail exited "agent exited with code $code: $tail"
    fi
    if [ $SECONDS -ge $deadline ]; then
      teardown "$id" 0
      fail never-ready "agent did not report its port within ${ready_seconds}s"
    fi
    sleep 0.02
  done
  echo "port=$(cat "$dir/ready")" >>"$dir/paddock.marker"
  cat "$dir/paddock.marker"
}

freeze() { # ID 1|0
  valid_id "$1"
  local dir=$sandboxes/$1 cgroup pid start p signal
  [ -f "$dir/paddock.marker" ] || fail missing "sandbox $1 is not on this host"
  pid=$(marker_value "$dir" pid) start=$(marker_value "$dir" start) cgroup=$(marker_value "$dir" cgroup)
  alive "$pid" "$start" || fail missing "the agent of sandbox $1 is gone"
  if [ -n "$cgroup" ] && [ -f "$cgroup/cgroup.freeze" ]; then
    echo "$2" >"$cgroup/cgroup.freeze"
    for _ in $(seq 500); do grep -q "^frozen $2" "$cgroup/cgroup.events" && return 0; sleep 0.01; done
    fail unsuitable "cgroup $cgroup did not settle"
  elif [ -n "$cgroup" ]; then
    local want=THAWED
    [ "$2" = 1 ] && want=FROZEN
    for _ in $(seq 500); do
      echo "$want" >"$cgroup/freezer.state"
      [ "$(cat "$cgroup/freezer.state")" = "$want" ] && return 0
      sleep 0.01
    done
    fail unsuitable "cgroup $cgroup did not settle"
  else
    # The agent first, so it starts nothing new; then again until no new process appears.
    [ "$2" = 1 ] && signal=STOP || signal=CONT
    for _ in 1 2 3; do
      for p in $(tree "$pid" "$1"); do kill -s "$signal" "$p" 2>/dev/null; done
    done
  fi
}

teardown() { # ID GRACE_SECONDS ; kills the tree, removes the cgroup and the directory
  local id=$1 grace=$2 dir=$sandboxes/$1 pid start cgroup
  [ -d "$dir" ] || return 0
  pid=$(marker_value "$dir" pid) start=$(marker_value "$dir" start) cgroup=$(marker_value "$dir" cgroup)
  if alive "$pid" "$start"; then
    if [ -n "$cgroup" ] && [ -f "$cgroup/cgroup.freeze" ]; then
      echo 0 >"$cgroup/cgroup.freeze"
    elif [ -n "$cgroup" ] && [ -f "$cgroup/freezer.state" ]; then
      echo THAWED >"$cgroup/freezer.state"
    fi
    local p pids
    pids=$(tree "$pid" "$id")
    for p in $pids; do kill -s CONT "$p" 2>/dev/null; kill -s TERM "$p" 2>/dev/null; done
    local deadline=$((SECONDS + grace))
    while alive "$pid" "$start" && [ $SECONDS -lt $deadline ]; do sleep 0.02; done
  fi
  kill_all "$pid" "$start" "$id" "$cgroup"
  if [ -n "$cgroup" ] && [ -d "$cgroup" ]; then
    for _ in $(seq 500); do rmdir "$cgroup" 2>/dev/null && break; sleep 0.01; done
  fi
  rm -rf "$dir"
}

kill_all() { # PID START ID CGROUP
  local p
  for _ in $(seq 250); do
    local left=""
    if [ -n "$4" ] && [ -f "$4/cgroup.kill" ]; then
      echo 1 >"$4/cgroup.kill"
    fi
    if [ -n "$4" ] && [ -f "$4/cgroup.procs" ]; then
      for p in $(cat "$4/cgroup.procs"); do kill -s KILL "$p" 2>/dev/null; left=1; done
    fi
    if alive "$1" "$2"; then
      for p in $(tree "$1" "$3"); do kill -s KILL "$p" 2>/dev/null; done
      left=1
    else
      for p in $(tree 0 "$3"); do kill -s KILL "$p" 2>/dev/null; left=1; done
    fi
    [ -z "$left" ] && return 0
    sleep 0.02
  done
}

destroy() { # ID GRACE_SECONDS
  valid_id "$1"
  teardown "$1" "$2"
}

case $op in
  probe) probe "${1:-}" ;;
  has-bundle) has_bundle "$1" ;;
  put-bundle) put_bundle "$1" ;;
  start) start "$@" ;;
  inspect) inspect "$1" ;;
  list) list ;;
  pause) freeze "$1" 1 ;;
  resume) freeze "$1" 0 ;;
  destroy) destroy "$@" ;;
  *) fail invalid "unknown operation $op" ;;
esac
