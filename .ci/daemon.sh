# Sourced by the .ci scripts that start long-lived daemons (dockerd, PostgreSQL). `ci_daemon CMD...`
# runs CMD with every file descriptor above stderr closed, so a daemon never inherits one it must
# not keep: started under `flock /tmp/paddock-itest.lock`, it would otherwise hold the test lock
# for as long as it lives and every later test run would wait forever.
ci_daemon() {
  (
    for fd in $(ls /proc/$BASHPID/fd); do
      if [ "$fd" -gt 2 ]; then eval "exec $fd>&-" 2>/dev/null || true; fi
    done
    exec "$@"
  )
}
