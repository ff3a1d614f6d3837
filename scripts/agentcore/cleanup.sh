#!/usr/bin/env bash
# Stops what verify.sh started and removes the project folder:
#
#   scripts/agentcore/cleanup.sh PROJECT_DIR       # KEEP_PROJECT=1 keeps the folder
#
# The dev server is stopped by the pid verify.sh wrote, never by a name:
# only when that pid still runs `agentcore dev` in its own session. Its
# processes (the CLI's uvicorn and its workers run in sessions of their
# own) are read from /proc before it is signalled: SIGTERM, then after 10
# seconds SIGKILL to those of them still there with the same start time.
# It then checks that none is left and that nothing listens on the port.
# Run twice, it finds nothing to do.
set -euo pipefail
# shellcheck source=scripts/agentcore/common.sh
source "$(dirname "$0")/common.sh"

project="${1:?usage: cleanup.sh PROJECT_DIR}"
state="$(state_dir "$project")"

# descendants PID prints PID's descendants, one "pid starttime" a line.
descendants() {
  local parent=$1 stat pid rest ppid
  for stat in /proc/[0-9]*/stat; do
    stat="$(cat "$stat" 2>/dev/null)" || continue
    pid="${stat%% *}"
    rest="${stat##*) }"
    ppid="$(echo "$rest" | cut -d' ' -f2)"
    if [ "$ppid" = "$parent" ] && [ "${rest%% *}" != Z ]; then
      echo "$pid $(echo "$rest" | cut -d' ' -f20)"
      descendants "$pid"
    fi
  done
}

# starttime PID prints the process's start time (clock ticks since boot), or
# nothing when it is gone or a zombie (which runs nothing and holds no port;
# an orphan's zombie waits for an init that may never reap it).
starttime() {
  local stat rest
  stat="$(cat "/proc/$1/stat" 2>/dev/null)" || return 0
  rest="${stat##*) }"
  [ "${rest%% *}" = Z ] && return 0
  echo "$rest" | cut -d' ' -f20
}

if [ -s "$state/pid" ]; then
  pid="$(cat "$state/pid")"
  port="$(cat "$state/port" 2>/dev/null || true)"
  if [ -r "/proc/$pid/cmdline" ] && tr '\0' ' ' <"/proc/$pid/cmdline" | grep -q 'agentcore dev' &&
     [ "$(ps -o sid= -p "$pid" | tr -d ' ')" = "$pid" ]; then
    procs="$(echo "$pid $(starttime "$pid")"; descendants "$pid")"
    kill -TERM "$pid" 2>/dev/null || true
    for _ in $(seq 1 100); do
      left=0
      while read -r p t; do
        [ -n "$p" ] && [ "$(starttime "$p")" = "$t" ] && left=1
      done <<<"$procs"
      [ "$left" = 0 ] && break
      sleep 0.1
    done
    while read -r p t; do
      if [ -n "$p" ] && [ "$(starttime "$p")" = "$t" ]; then
        echo "agentcore: pid $p did not stop on SIGTERM; SIGKILL" >&2
        kill -KILL "$p" 2>/dev/null || true
      fi
    done <<<"$procs"
    sleep 0.2
    while read -r p t; do
      if [ -n "$p" ] && [ "$(starttime "$p")" = "$t" ]; then
        die "pid $p is still there"
      fi
    done <<<"$procs"
    echo "agentcore: stopped the dev server (pid $pid) and its $(($(wc -l <<<"$procs") - 1)) processes"
  else
    echo "agentcore: pid $pid is not a running agentcore dev of its own session: not signalled"
  fi
  if [ -n "$port" ] && (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then
    die "something still listens on 127.0.0.1:$port"
  fi
  rm -f "$state/pid" "$state/port"
else
  echo "agentcore: no dev server to stop"
fi

if [ "${KEEP_PROJECT:-}" = 1 ]; then
  echo "agentcore: kept $project (KEEP_PROJECT=1)"
elif [ -d "$project" ]; then
  rm -rf "$project"
  echo "agentcore: removed $project"
fi
