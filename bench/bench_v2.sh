#!/usr/bin/env bash
# The Open Inference Protocol's cost (issue 26), in one run on this
# machine. It starts switchyard with the no-op numeric model
# bench/models/noop-v2 (batch_size 8) and sends the same body, one FP32
# tensor of 16 elements in the protocol's JSON form, to
#   * v2:          POST /v2/models/noop-v2/infer (the JSON decoded into an
#                  NDList for the worker, its NDList answer encoded as JSON);
#   * invocations: POST /invocations (the body and the answer go through as
#                  they are),
# at concurrency 64, in interleaved rounds (both cells of a round before the
# next round; the order alternates from round to round), with bench/loadgen:
# requests/s, p50, p99, the CPU time per request of the server and its
# worker (/proc/<pid>/stat), and the Go heap objects and bytes the
# front-end allocated per request (its /metrics). It ends with the medians
# over the rounds, the ratio of v2's requests/s to /invocations' (target
# at least 0.9), what v2 adds per request, and frontend's
# BenchmarkV2Infer (the handler path alone, -benchmem).
#
# Settings (environment): PYTHON (.venv/bin/python), BENCH_ROUNDS (3),
# BENCH_DURATION (5s), BENCH_WARMUP (1s), BENCH_CONCURRENCY (64),
# LOADGEN_PROCS (1: GOMAXPROCS of the load generator), BENCH_GOBENCH (1;
# 0 skips BenchmarkV2Infer).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

PYTHON="${PYTHON:-$PWD/.venv/bin/python}"
ROUNDS="${BENCH_ROUNDS:-3}"
DURATION="${BENCH_DURATION:-5s}"
WARMUP="${BENCH_WARMUP:-1s}"
CONC="${BENCH_CONCURRENCY:-64}"
PROCS="${LOADGEN_PROCS:-1}"
GOBENCH="${BENCH_GOBENCH:-1}"
export CGO_ENABLED=1

work="$(mktemp -d "${TMPDIR:-/tmp}/switchyard-bench-v2.XXXXXX")"
server_pid=""

# shellcheck source=bench/lib.sh
source bench/lib.sh

cleanup() {
  stop_pid "$server_pid"
  rm -rf "$work"
}
trap cleanup EXIT

say "building switchyard and loadgen"
go build -o "$work/switchyard" ./cmd/switchyard
go build -o "$work/loadgen" ./bench/loadgen

inference="http://127.0.0.1:$(free_port)"
management="http://127.0.0.1:$(free_port)"
mkdir -p "$work/sock"
cat >"$work/config.properties" <<EOF
inference_address=$inference
management_address=$management
model_store=$PWD/bench/models
load_models=noop-v2=$PWD/bench/models/noop-v2
socket_dir=$work/sock
python_executable=$PYTHON
EOF
"$work/switchyard" serve --config "$work/config.properties" 2>"$work/server.log" &
server_pid=$!
for _ in $(seq 1 240); do
  if curl -sf "$inference/v2/models/noop-v2/ready" >/dev/null; then break; fi
  if ! kill -0 "$server_pid" 2>/dev/null; then cat "$work/server.log" >&2; exit 1; fi
  sleep 0.5
done
worker="$(curl -sf "$management/models/noop-v2" | jq -r '.[0].models[0].workerGroups[0].workers[0].pid')"

# The body: what frontend/v2_bench_test.go's BenchmarkV2Infer sends.
body='{"inputs":[{"name":"INPUT0","shape":[1,16],"datatype":"FP32","data":[0.5,1.5,2.5,3.5,4.5,5.5,6.5,7.5,8.5,9.5,10.5,11.5,12.5,13.5,14.5,15.5]}]}'
answer="$(curl -sf "$inference/v2/models/noop-v2/infer" -H 'Content-Type: application/json' -d "$body")"
say "v2 answers $answer"

results="$work/results.jsonl"
cell() {
  local round=$1 label=$2 url=$3
  "$work/loadgen" run -procs "$PROCS" -d "$DURATION" -warmup "$WARMUP" -round "$round" -label "$label" \
    -c "$CONC" -body "$body" -H 'Content-Type: application/json' -H 'X-Amzn-SageMaker-Target-Model: noop-v2' \
    -cpu "server=$server_pid" -cpu "worker=$worker" -metrics "$management/metrics" "$url" >>"$results"
}
load_start="$(loadavg)"
for round in $(seq 1 "$ROUNDS"); do
  say "round $round of $ROUNDS (load average $(loadavg))"
  if ((round % 2)); then
    cell "$round" v2 "$inference/v2/models/noop-v2/infer"
    cell "$round" invocations "$inference/invocations"
  else
    cell "$round" invocations "$inference/invocations"
    cell "$round" v2 "$inference/v2/models/noop-v2/infer"
  fi
done
load_end="$(loadavg)"
stop_pid "$server_pid"
server_pid=""

echo
echo "switchyard v2 benchmark: $(nproc) CPUs, $(uname -sr), $(git rev-parse --short HEAD 2>/dev/null || echo '?'); $ROUNDS interleaved rounds of $DURATION after a $WARMUP warm-up, c=$CONC, loadgen GOMAXPROCS=$PROCS; load average $load_start at the start, $load_end after"
echo
jq -rs '
  def median: sort | if length % 2 == 1 then .[length / 2 | floor] else (.[length / 2 - 1] + .[length / 2]) / 2 end;
  def r1: . * 10 | round / 10;
  def stat(f): map(f) | median;
  def row($l): map(select(.label == $l)) as $c |
    {label: $l, rps: ($c | stat(.rps)), p50: ($c | stat(.p50_us)), p99: ($c | stat(.p99_us)),
     server: ($c | stat(.cpu_us_per_req.server)), worker: ($c | stat(.cpu_us_per_req.worker)),
     allocs: ($c | stat(.allocs_per_req)), bytes: ($c | stat(.alloc_bytes_per_req)),
     errors: ($c | map(.errors) | add), rounds: ($c | map(.rps | round))};
  . as $all | [row("v2"), row("invocations")] as $rows |
  ($all | map(select(.label == "v2")) | sort_by(.round)) as $v |
  ($all | map(select(.label == "invocations")) | sort_by(.round)) as $i |
  ([range(0; $v | length)] | map($v[.].rps / $i[.].rps)) as $ratios |
  "| cell | req/s (median; per round) | p50 µs | p99 µs | server CPU µs/req | worker CPU µs/req | allocs/req | bytes/req | errors |",
  "|---|---:|---:|---:|---:|---:|---:|---:|---:|",
  ($rows[] | "| \(.label) | \(.rps | round) (\(.rounds | map(tostring) | join(", "))) | \(.p50 | r1) | \(.p99 | r1) | \(.server | r1) | \(.worker | r1) | \(.allocs | r1) | \(.bytes | round) | \(.errors) |"),
  "",
  "v2 req/s ÷ /invocations req/s, per round: \($ratios | map(. * 100 | round / 100 | tostring) | join(", ")); median \($ratios | median | . * 100 | round / 100) (target ≥ 0.9)",
  "v2 adds per request: server CPU \(($rows[0].server - $rows[1].server) | r1) µs, \(($rows[0].allocs - $rows[1].allocs) | r1) allocations, \(($rows[0].bytes - $rows[1].bytes) | round) bytes"
' "$results"

if [[ "$GOBENCH" == 1 ]]; then
  echo
  echo "frontend BenchmarkV2Infer (the handler path alone, GOMAXPROCS=1, 3 runs):"
  go test -run '^$' -bench 'V2Infer' -benchmem -benchtime 1s -count 3 -cpu 1 ./frontend/ | grep '^Benchmark'
fi
