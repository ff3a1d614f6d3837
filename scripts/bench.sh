#!/usr/bin/env bash
# Issue 3's benchmark, in one run on this machine:
#   * requests/s, p50 and p99 at concurrency 1, 8 and 64 (keep-alive, a
#     warm-up, then a fixed duration per cell) against a bare fasthttp
#     "hello" server and against switchyard serving a no-op Python model
#     with batch_size 1 (bench/models/noop-b1) and 8 (bench/models/noop-b8);
#   * the front-end's RSS, idle, with three models loaded (langid,
#     langdetect, noop-b1), read from /proc/<pid>/status;
#   * package worker/process's BenchmarkRoundTrip, whose bare-echo figure is the
#     Go-to-Python floor the c=1 p50 is compared with.
# It ends with a table and the issue's three targets (MET / MISSED).
#
# Settings (environment): PYTHON (/usr/bin/python3), BENCH_DURATION (5s),
# BENCH_WARMUP (1s), BENCH_CONCURRENCY (1,8,64), BENCH_IDLE_SECONDS (5),
# LOADGEN_PROCS (1: GOMAXPROCS of the load generator; the servers keep
# theirs), BENCH_PPROF (empty; a file name: the front-end is built with
# bench/pprofhook overlaid and writes a Go CPU profile of the noop-b8 run
# there; read it with `go tool pprof -top FILE`).
#
# Besides latency and throughput, each cell reports the CPU time (user +
# system) the server, the worker and the load generator used per request,
# from /proc/<pid>/stat: on a shared machine those figures are steadier
# than requests per second.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

PYTHON="${PYTHON:-/usr/bin/python3}"
DURATION="${BENCH_DURATION:-5s}"
WARMUP="${BENCH_WARMUP:-1s}"
LEVELS="${BENCH_CONCURRENCY:-1,8,64}"
IDLE="${BENCH_IDLE_SECONDS:-5}"
PROCS="${LOADGEN_PROCS:-1}"
PPROF_OUT="${BENCH_PPROF:-}"
export CGO_ENABLED=1

work="$(mktemp -d "${TMPDIR:-/tmp}/switchyard-bench.XXXXXX")"
server_pid=""

stop_server() {
  if [[ -n "$server_pid" ]]; then
    kill -TERM "$server_pid" 2>/dev/null || true
    wait "$server_pid" 2>/dev/null || true
    server_pid=""
  fi
}
cleanup() {
  stop_server
  rm -rf "$work"
}
trap cleanup EXIT

say() { printf '== %s\n' "$*" >&2; }

free_port() {
  "$PYTHON" -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

rss_kb() { awk '/^VmRSS:/ {print $2}' "/proc/$1/status"; }

# wait_healthy URL N: waits until /ping lists N models, all Healthy.
wait_healthy() {
  for _ in $(seq 1 240); do
    if curl -sf "$1/ping" | jq -e --argjson n "$2" \
      '[.[] | .status] | length == $n and all(. == "Healthy")' >/dev/null 2>&1; then
      return 0
    fi
    if ! kill -0 "$server_pid" 2>/dev/null; then
      cat "$work/server.log" >&2
      return 1
    fi
    sleep 0.5
  done
  echo "bench: models not Healthy in time" >&2
  cat "$work/server.log" >&2
  return 1
}

# worker_pid MODEL: the pid of the model's first worker.
worker_pid() {
  curl -sf "$management/models/$1" | jq -r '.[0].models[0].workerGroups[0].workers[0].pid'
}

say "building switchyard and loadgen"
if [[ -n "$PPROF_OUT" ]]; then
  PPROF_OUT="$(realpath -m "$PPROF_OUT")"
  printf '{"Replace": {"%s": "%s"}}\n' "$PWD/cmd/switchyard/zz_bench_cpuprofile.go" \
    "$PWD/bench/pprofhook/cpuprofile.go" >"$work/overlay.json"
  go build -tags switchyard_pprof -overlay "$work/overlay.json" -o "$work/switchyard" ./cmd/switchyard
else
  go build -o "$work/switchyard" ./cmd/switchyard
fi
go build -o "$work/loadgen" ./cmd/loadgen

inference="http://127.0.0.1:$(free_port)"
management="http://127.0.0.1:$(free_port)"
store="$PWD/bench/models"
examples="$PWD/examples/models"
mkdir -p "$work/sock"
cat >"$work/config.properties" <<EOF
inference_address=$inference
management_address=$management
model_store=$store
load_models=langid=$examples/langid,langdetect=$examples/langdetect,noop-b1=$store/noop-b1
socket_dir=$work/sock
python_executable=$PYTHON
EOF

say "starting switchyard with langid, langdetect and noop-b1"
SWITCHYARD_CPUPROFILE="$PPROF_OUT" "$work/switchyard" serve --config "$work/config.properties" 2>"$work/server.log" &
server_pid=$!
wait_healthy "$inference" 3
say "idle for ${IDLE}s, then reading the front-end's VmRSS"
sleep "$IDLE"
rss_idle=$(rss_kb "$server_pid")

say "registering noop-b8"
curl -sf -X POST "$management/models?url=noop-b8" >/dev/null
wait_healthy "$inference" 4

results="$work/results.jsonl"
loadgen=("$work/loadgen" run -procs "$PROCS" -c "$LEVELS" -d "$DURATION" -warmup "$WARMUP")
say "bare fasthttp hello server"
"${loadgen[@]}" -hello >>"$results"
for model in noop-b1 noop-b8; do
  say "$model through switchyard"
  if [[ -n "$PPROF_OUT" && "$model" == noop-b8 ]]; then kill -USR1 "$server_pid"; fi
  "${loadgen[@]}" -label "$model" -cpu "server=$server_pid" -cpu "worker=$(worker_pid "$model")" \
    "$inference/predictions/$model" >>"$results"
done
if [[ -n "$PPROF_OUT" ]]; then
  kill -USR2 "$server_pid"
  sleep 1 # the profile is written by a goroutine of the server
  say "CPU profile of the noop-b8 run in $PPROF_OUT (go tool pprof -top $PPROF_OUT)"
fi
rss_load=$(rss_kb "$server_pid")
stop_server

say "worker BenchmarkRoundTrip (the Go-to-Python floor)"
go test -run '^$' -bench 'RoundTrip' -benchtime 2s ./worker/process/ | tee "$work/roundtrip.txt" >&2
ns_of() { awk -v name="BenchmarkRoundTrip/$1" 'index($1, name) == 1 {print $3}' "$work/roundtrip.txt"; }

echo
echo "switchyard benchmark: $(nproc) CPUs, $(uname -sr), load average $(cut -d' ' -f1-3 /proc/loadavg)"
echo "loadgen GOMAXPROCS=$PROCS; servers default GOMAXPROCS; $DURATION per cell after a $WARMUP warm-up; keep-alive connections"
echo
"$work/loadgen" report -results "$results" \
  -bare-echo-ns "$(ns_of bare-echo)" -runtime-noop-ns "$(ns_of runtime-noop)" \
  -rss-kb "$rss_idle" -rss-load-kb "$rss_load"
