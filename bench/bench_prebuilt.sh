#!/usr/bin/env bash
# Issue 12's benchmark cells on a host without Go, jq or perf (a lent GPU
# machine, say), with switchyard and loadgen built elsewhere: bare and
# noop-b8 at concurrency 64, bare, noop-b1 and noop-b8a at 1, in
# BENCH_ROUNDS interleaved rounds, then loadgen's report (tables and
# targets). bench/bench.sh is the full benchmark; this one has no
# system-call counts, no Go-to-Python round trip, and its RSS figure is
# taken after the load with the three no-op models (not idle with the
# examples), so the report's RSS line does not apply.
# Settings (environment): BIN_DIR (bin: switchyard and loadgen, built with
# CGO_ENABLED=1), PYTHON (python3), BENCH_ROUNDS (3), OUT_DIR (a new
# temporary folder: results.jsonl and the server's log).
set -u
cd "$(dirname "${BASH_SOURCE[0]}")/.." || exit 2
BIN_DIR="$(realpath "${BIN_DIR:-bin}")"
PYTHON="${PYTHON:-python3}"
ROUNDS="${BENCH_ROUNDS:-3}"
OUT_DIR="${OUT_DIR:-$(mktemp -d "${TMPDIR:-/tmp}/bench-prebuilt.XXXXXX")}"
work="$(mktemp -d "${TMPDIR:-/tmp}/bench-prebuilt-run.XXXXXX")"
mkdir -p "$work/sock" "$OUT_DIR"
inference=http://127.0.0.1:18790
management=http://127.0.0.1:18791
store="$PWD/bench/models"
cat >"$work/config.properties" <<CONF
inference_address=$inference
management_address=$management
model_store=$store
load_models=noop-b1=$store/noop-b1,noop-b8=$store/noop-b8,noop-b8a=$store/noop-b8a
socket_dir=$work/sock
python_executable=$PYTHON
CONF
"$BIN_DIR/switchyard" serve --config "$work/config.properties" 2>"$OUT_DIR/server.log" &
server=$!
env -u GOMAXPROCS "$BIN_DIR/loadgen" hello >"$work/hello.addr" &
hello=$!
# shellcheck disable=SC2317 # run by the EXIT trap
cleanup() {
  kill "$server" "$hello" 2>/dev/null
  wait "$server" "$hello" 2>/dev/null
  rm -rf "$work"
}
trap cleanup EXIT
for _ in $(seq 1 240); do
  [[ "$(curl -s -o /dev/null -w '%{http_code}' "$inference/ping")" == 200 ]] && break
  sleep 0.5
done
grep -E '"GOMAXPROCS"' "$OUT_DIR/server.log"
worker_pid() {
  curl -s "$management/models/$1" | "$PYTHON" -c \
    'import json, sys; print(json.load(sys.stdin)[0]["models"][0]["workerGroups"][0]["workers"][0]["pid"])'
}
declare -A worker
for m in noop-b1 noop-b8 noop-b8a; do worker[$m]=$(worker_pid "$m"); done
bare="http://$(sed -n 's/^listening //p' "$work/hello.addr")/"
results="$OUT_DIR/results.jsonl"
: >"$results"
cell() {
  local round=$1 label=$2 c=$3
  local args=(run -procs 1 -d 5s -warmup 1s -round "$round" -label "$label" -c "$c")
  if [[ "$label" == bare ]]; then
    args+=(-cpu "server=$hello" "$bare")
  else
    args+=(-cpu "server=$server" -cpu "worker=${worker[$label]}" -metrics "$management/metrics" "$inference/predictions/$label")
  fi
  "$BIN_DIR/loadgen" "${args[@]}" >>"$results"
}
for round in $(seq 1 "$ROUNDS"); do
  cell "$round" bare 64
  cell "$round" noop-b8 64
  cell "$round" bare 1
  cell "$round" noop-b1 1
  cell "$round" noop-b8a 1
done
rss=$(awk '/^VmRSS:/ {print $2}' "/proc/$server/status")
echo "$(nproc) CPUs, $(uname -sr); $ROUNDS interleaved rounds; loadgen GOMAXPROCS=1"
"$BIN_DIR/loadgen" report -results "$results" -load "$(cut -d' ' -f1-3 /proc/loadavg)" -rss-kb "$rss" -rss-load-kb "$rss"
