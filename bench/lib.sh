# shellcheck shell=bash
# Functions the benchmark scripts share; sourced, not run. free_port runs
# $PYTHON; wait_quiet reads BENCH_MAX_LOAD and BENCH_LOAD_WAIT (900) from
# the environment.

say() { printf '== %s\n' "$*" >&2; }
loadavg() { cut -d' ' -f1-3 /proc/loadavg; }

# free_port: a TCP port on 127.0.0.1 that was free a moment ago.
free_port() {
  "$PYTHON" -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1]); s.close()'
}

# stop_pid PID: sends PID (none when empty) SIGTERM and waits for it.
stop_pid() {
  if [[ -n "$1" ]]; then
    kill -TERM "$1" 2>/dev/null || true
    wait "$1" 2>/dev/null || true
  fi
}

# wait_quiet: with BENCH_MAX_LOAD set, waits until the 1-minute load
# average is below it (or BENCH_LOAD_WAIT seconds have passed).
wait_quiet() {
  local max="${BENCH_MAX_LOAD:-}" limit="${BENCH_LOAD_WAIT:-900}" waited=0
  [[ -z "$max" ]] && return 0
  until awk -v max="$max" '{exit !($1 < max)}' /proc/loadavg; do
    if ((waited >= limit)); then
      say "load average still $(loadavg) after ${limit}s; measuring anyway"
      return 0
    fi
    say "load average $(loadavg); waiting for it to fall below $max"
    sleep 15
    waited=$((waited + 15))
  done
}
