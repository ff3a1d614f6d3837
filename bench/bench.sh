#!/usr/bin/env bash
# switchyard's hot-path benchmark (issues 3 and 12), in one run on this
# machine. It starts switchyard with no-op Python models and a bare fasthttp
# "hello" server, and measures, in interleaved rounds (every cell of a round
# before the next round, so that both servers see the same machine):
#   * requests/s, p50 and p99, keep-alive, a warm-up, then a fixed duration:
#     bare and noop-b8 (batch_size 8) at concurrency 64; bare, noop-b1
#     (batch_size 1) and noop-b8a (batch_size 8, adaptive batching) at
#     concurrency 1; noop-b1 and noop-b8a at 64;
#   * per cell, the CPU time per request of the server, the worker and the
#     load generator (/proc/<pid>/stat), and the Go heap objects and bytes
#     the front-end allocated per request (runtime.MemStats, read from its
#     /metrics page);
#   * after the rounds, system calls per request of the servers and the
#     worker (perf stat -e raw_syscalls:sys_enter, when perf can trace);
#   * the front-end's RSS, idle, with three models loaded (langid,
#     langdetect, noop-b1), from /proc/<pid>/status;
#   * package worker/process's BenchmarkRoundTrip (the Go-to-Python floor).
# It ends with the tables and issue 12's targets, each judged on the median
# over the rounds of a figure taken against the bare server of the same
# round.
#
# Settings (environment): PYTHON (.venv/bin/python), BENCH_ROUNDS (3),
# BENCH_DURATION (5s), BENCH_WARMUP (1s), BENCH_IDLE_SECONDS (5),
# LOADGEN_PROCS (1: GOMAXPROCS of the load generator; the servers keep
# theirs unless SERVER_GOMAXPROCS sets switchyard's), BENCH_MAX_LOAD (empty;
# a number: first wait, up to BENCH_LOAD_WAIT seconds (900), until the
# 1-minute load average is below it), BENCH_SOURCE (this tree; another
# source tree to build switchyard from, to compare two versions with the
# same load generator and models), BENCH_SYSCALLS (1; 0 skips perf),
# BENCH_ROUNDTRIP (1; 0 skips BenchmarkRoundTrip), BENCH_PPROF (empty; a
# file name: the front-end is built with bench/pprofhook overlaid and
# writes a Go CPU profile of round 1's cell BENCH_PPROF_CELL, "noop-b8 64"
# by default; read it with `go tool pprof -top FILE`).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

PYTHON="${PYTHON:-$PWD/.venv/bin/python}"
ROUNDS="${BENCH_ROUNDS:-3}"
DURATION="${BENCH_DURATION:-5s}"
WARMUP="${BENCH_WARMUP:-1s}"
IDLE="${BENCH_IDLE_SECONDS:-5}"
PROCS="${LOADGEN_PROCS:-1}"
SOURCE="$(realpath "${BENCH_SOURCE:-$PWD}")"
SYSCALLS="${BENCH_SYSCALLS:-1}"
ROUNDTRIP="${BENCH_ROUNDTRIP:-1}"
PPROF_OUT="${BENCH_PPROF:-}"
PPROF_CELL="${BENCH_PPROF_CELL:-noop-b8 64}"
export CGO_ENABLED=1

work="$(mktemp -d "${TMPDIR:-/tmp}/switchyard-bench.XXXXXX")"
server_pid=""
hello_pid=""

# shellcheck source=bench/lib.sh
source bench/lib.sh

cleanup() {
  stop_pid "$server_pid"
  stop_pid "$hello_pid"
  rm -rf "$work"
}
trap cleanup EXIT

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

say "building switchyard (from $SOURCE) and loadgen"
if [[ -n "$PPROF_OUT" ]]; then
  PPROF_OUT="$(realpath -m "$PPROF_OUT")"
  printf '{"Replace": {"%s": "%s"}}\n' "$SOURCE/cmd/switchyard/zz_bench_cpuprofile.go" \
    "$PWD/bench/pprofhook/cpuprofile.go" >"$work/overlay.json"
  (cd "$SOURCE" && go build -tags switchyard_pprof -overlay "$work/overlay.json" -o "$work/switchyard" ./cmd/switchyard)
else
  (cd "$SOURCE" && go build -o "$work/switchyard" ./cmd/switchyard)
fi
go build -o "$work/loadgen" ./bench/loadgen

wait_quiet
load_start="$(loadavg)"

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
server_env=(env SWITCHYARD_CPUPROFILE="$PPROF_OUT")
if [[ -n "${SERVER_GOMAXPROCS:-}" ]]; then server_env+=(GOMAXPROCS="$SERVER_GOMAXPROCS"); fi
"${server_env[@]}" "$work/switchyard" serve --config "$work/config.properties" 2>"$work/server.log" &
server_pid=$!
wait_healthy "$inference" 3
say "idle for ${IDLE}s, then reading the front-end's VmRSS"
sleep "$IDLE"
rss_idle=$(rss_kb "$server_pid")

say "registering noop-b8 and noop-b8a"
curl -sf -X POST "$management/models?url=noop-b8" >/dev/null
curl -sf -X POST "$management/models?url=noop-b8a" >/dev/null
wait_healthy "$inference" 5
declare -A worker
for m in noop-b1 noop-b8 noop-b8a; do worker[$m]=$(worker_pid "$m"); done

say "starting the bare fasthttp hello server"
env -u GOMAXPROCS "$work/loadgen" hello >"$work/hello.addr" &
hello_pid=$!
for _ in $(seq 1 50); do [[ -s "$work/hello.addr" ]] && break; sleep 0.1; done
bare="http://$(sed -n 's/^listening //p' "$work/hello.addr")/"

results="$work/results.jsonl"
loadgen=("$work/loadgen" run -procs "$PROCS" -d "$DURATION" -warmup "$WARMUP")

# cell ROUND LABEL C [extra flags]: measures one cell into the results.
cell() {
  local round=$1 label=$2 c=$3
  shift 3
  local args=(-round "$round" -label "$label" -c "$c" "$@")
  if [[ "$label" == bare ]]; then
    args+=(-cpu "server=$hello_pid" "$bare")
  else
    args+=(-cpu "server=$server_pid" -cpu "worker=${worker[$label]}" -metrics "$management/metrics" "$inference/predictions/$label")
  fi
  local profile=""
  if [[ -n "$PPROF_OUT" && "$round" == 1 && "$label $c" == "$PPROF_CELL" ]]; then profile=1; fi
  if [[ -n "$profile" ]]; then kill -USR1 "$server_pid"; fi
  "${loadgen[@]}" "${args[@]}" >>"$results"
  if [[ -n "$profile" ]]; then kill -USR2 "$server_pid"; fi
}

for round in $(seq 1 "$ROUNDS"); do
  say "round $round of $ROUNDS (load average $(loadavg))"
  cell "$round" bare 64
  cell "$round" noop-b8 64
  cell "$round" bare 1
  cell "$round" noop-b1 1
  cell "$round" noop-b8a 1
  cell "$round" noop-b1 64
  cell "$round" noop-b8a 64
done
load_end="$(loadavg)"
if [[ -n "$PPROF_OUT" ]]; then
  sleep 1 # the profile is written by a goroutine of the server
  say "CPU profile of round 1's $PPROF_CELL in $PPROF_OUT (go tool pprof -top $PPROF_OUT)"
fi

if [[ "$SYSCALLS" == 1 ]] && perf stat -e raw_syscalls:sys_enter -- true >/dev/null 2>&1; then
  say "system calls per request (perf)"
  for spec in "bare 64 50000" "noop-b8 64 50000" "bare 1 10000" "noop-b1 1 10000"; do
    read -r label c n <<<"$spec"
    if [[ "$label" == bare ]]; then
      sys=(-syscalls "server=$hello_pid")
    else
      sys=(-syscalls "server=$server_pid" -syscalls "worker=${worker[$label]}")
    fi
    cell 0 "$label" "$c" -n "$n" "${sys[@]}"
  done
elif [[ "$SYSCALLS" == 1 ]]; then
  say "perf cannot trace here; no system call counts"
fi
rss_load=$(rss_kb "$server_pid")
stop_pid "$server_pid"
server_pid=""
stop_pid "$hello_pid"
hello_pid=""

echo_ns=0
noop_ns=0
if [[ "$ROUNDTRIP" == 1 ]]; then
  say "worker BenchmarkRoundTrip (the Go-to-Python floor)"
  (cd "$SOURCE" && go test -run '^$' -bench 'RoundTrip' -benchtime 2s ./worker/process/) | tee "$work/roundtrip.txt" >&2
  ns_of() { awk -v name="BenchmarkRoundTrip/$1" 'index($1, name) == 1 {print $3}' "$work/roundtrip.txt"; }
  echo_ns="$(ns_of bare-echo)"
  noop_ns="$(ns_of runtime-noop)"
fi

echo
echo "switchyard benchmark: $(nproc) CPUs, $(uname -sr), switchyard built from $SOURCE ($(git -C "$SOURCE" rev-parse --short HEAD 2>/dev/null || echo '?'))"
echo "$ROUNDS interleaved rounds; loadgen GOMAXPROCS=$PROCS; switchyard GOMAXPROCS=${SERVER_GOMAXPROCS:-default}; $DURATION per cell after a $WARMUP warm-up; keep-alive connections"
echo
"$work/loadgen" report -results "$results" -load "$load_start at the start, $load_end after the rounds" \
  -bare-echo-ns "${echo_ns:-0}" -runtime-noop-ns "${noop_ns:-0}" -rss-kb "$rss_idle" -rss-load-kb "$rss_load"
