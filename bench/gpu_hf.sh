#!/usr/bin/env bash
# The GPU benchmark of Hugging Face folders (issue "Real Hugging Face model
# folders", Measure): the seed's workload, three encoder classifiers of
# DeBERTa-v3-base size (random weights: the same compute) served from
# serving.properties alone by one switchyard on one GPU, at a fixed input
# of 128 tokens, measured in one run as
#   (a) batch_size 1 (DJL's default),
#   (b) dynamic batching, batch_size 8 with adaptive_batching=true,
#   (c) the in-process ceiling: each model's text-classification pipeline
#       answering batches of 8 alone on the GPU, summed over the models,
# at total concurrency 8 and 32 (spread evenly over the three models; one
# loadgen per model). One worker per model. It prints (b)/(c) (target 0.8)
# and (b)/(a), each worker's GPU memory from describe beside nvidia-smi's,
# and writes everything into OUT_DIR.
#
# It uses only what the GPU host has (torch, transformers, tokenizers): the
# models are built there (bench/hf/gpu_models.py, with the tokenizer of
# fixtures/build.py's deberta-cls), and switchyard and loadgen come built
# from elsewhere (BIN_DIR; build them with CGO_ENABLED=1: go build -o
# bin/switchyard ./cmd/switchyard && go build -o bin/loadgen ./bench/loadgen).
#
# Settings (environment): BIN_DIR (bin), PYTHON (python3: torch that sees
# CUDA), OUT_DIR (a new temporary folder), DEVICE (cuda; cpu to try the
# script), SIZE (base; tiny to try it), DURATION (6s), WARMUP (2s),
# CEILING_SECONDS (3).
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.." || exit 2
BIN_DIR="$(realpath "${BIN_DIR:-bin}")"
PYTHON="${PYTHON:-python3}"
OUT_DIR="${OUT_DIR:-$(mktemp -d "${TMPDIR:-/tmp}/gpu-hf.XXXXXX")}"
DEVICE="${DEVICE:-cuda}"
SIZE="${SIZE:-base}"
DURATION="${DURATION:-6s}"
WARMUP="${WARMUP:-2s}"
CEILING_SECONDS="${CEILING_SECONDS:-3}"
mkdir -p "$OUT_DIR"
work="$(mktemp -d "${TMPDIR:-/tmp}/gpu-hf-run.XXXXXX")"
inference=http://127.0.0.1:18890
management=http://127.0.0.1:18891
models=(deberta-a deberta-b deberta-c)
server_pid=""

say() { printf '== %s\n' "$*"; }
# shellcheck disable=SC2317 # run by the EXIT trap
cleanup() {
  if [[ -n "$server_pid" ]] && kill -0 "$server_pid" 2>/dev/null; then
    kill -TERM "$server_pid"
    wait "$server_pid" 2>/dev/null
  fi
  rm -rf "$work"
}
trap cleanup EXIT
started=$SECONDS

say "models and the in-process ceiling ($SIZE on $DEVICE)"
"$PYTHON" fixtures/build.py --out "$work/fixtures" --only deberta-cls >"$OUT_DIR/fixtures.log" 2>&1 ||
  { cat "$OUT_DIR/fixtures.log"; exit 1; }
"$PYTHON" bench/hf/gpu_models.py --out "$work/models" --fixtures "$work/fixtures" --size "$SIZE" \
  --device "$DEVICE" --seconds "$CEILING_SECONDS" >"$OUT_DIR/ceiling.json" 2>"$OUT_DIR/ceiling.log" ||
  { cat "$OUT_DIR/ceiling.log"; exit 1; }
body=$("$PYTHON" -c 'import json, sys; print(json.dumps({"inputs": json.load(open(sys.argv[1]))["text"]}))' \
  "$OUT_DIR/ceiling.json")
echo "ceiling built in $((SECONDS - started)) s"

# serve MODE BATCH ADAPTIVE: starts switchyard on the three folders.
serve() {
  local mode=$1 batch=$2 adaptive=$3 store="$work/store-$1"
  mkdir -p "$store" "$work/sock-$mode"
  for m in "${models[@]}"; do
    mkdir -p "$store/$m"
    cat >"$store/$m/serving.properties" <<PROPS
engine=Python
option.model_id=$work/models/$m
option.task=text-classification
option.dtype=$([[ "$DEVICE" == cuda ]] && echo fp16 || echo fp32)
batch_size=$batch
max_batch_delay=100
adaptive_batching=$adaptive
minWorkers=1
maxWorkers=1
PROPS
  done
  cat >"$work/config-$mode.properties" <<CONF
inference_address=$inference
management_address=$management
model_store=$store
socket_dir=$work/sock-$mode
python_executable=$PYTHON
CONF
  "$BIN_DIR/switchyard" serve --config "$work/config-$mode.properties" 2>"$OUT_DIR/server-$mode.log" &
  server_pid=$!
  for _ in $(seq 1 600); do
    [[ "$(curl -s -o /dev/null -w '%{http_code}' "$inference/ping")" == 200 ]] && return 0
    kill -0 "$server_pid" 2>/dev/null || break
    sleep 0.5
  done
  echo "switchyard did not become ready ($mode)"; tail -20 "$OUT_DIR/server-$mode.log"; exit 1
}

# memory MODE: each worker's GPU memory from describe, and nvidia-smi's.
memory() {
  for m in "${models[@]}"; do
    curl -s "$management/models/$m" >"$OUT_DIR/describe-$1-$m.json"
  done
  command -v nvidia-smi >/dev/null &&
    nvidia-smi --query-compute-apps=pid,used_memory --format=csv,noheader >"$OUT_DIR/nvidia-smi-$1.csv"
}

# load MODE C: total concurrency C over the three models, one loadgen each.
load() {
  local mode=$1 c=$2 i=0 pids=()
  for m in "${models[@]}"; do
    local share=$(( c / 3 + (i < c % 3 ? 1 : 0) ))
    "$BIN_DIR/loadgen" run -procs 2 -d "$DURATION" -warmup "$WARMUP" -round "$c" -label "$mode/$m" -c "$share" \
      -H "Content-Type: application/json" -body "$body" "$inference/predictions/$m" >>"$OUT_DIR/results.jsonl" &
    pids+=($!)
    i=$((i + 1))
  done
  wait "${pids[@]}"
}

: >"$OUT_DIR/results.jsonl"
for spec in "a 1 false" "b 8 true"; do
  read -r mode batch adaptive <<<"$spec"
  say "($mode) batch_size=$batch adaptive_batching=$adaptive"
  serve "$mode" "$batch" "$adaptive"
  memory "$mode"
  for c in 8 32; do
    load "$mode" "$c"
  done
  kill -TERM "$server_pid"
  wait "$server_pid" 2>/dev/null
  server_pid=""
done

say "report"
"$PYTHON" bench/hf/gpu_report.py "$OUT_DIR"
echo "done in $((SECONDS - started)) s"
