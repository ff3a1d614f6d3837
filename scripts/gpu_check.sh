#!/usr/bin/env bash
# A check of the real NVML path on a host with an NVIDIA GPU and its driver
# (CI has none: there the GPU code runs against go-nvml's mock servers).
# It prints, and writes into $OUT_DIR:
#   * nvidia-smi's view and nvmlcheck's table and JSON (the same gpu.New the
#     server uses);
#   * a server on the chat example (load_on_devices=* by default, so it gets
#     a GPU worker): /ping, describe (visibleDevices, gpuMemoryMiB), the
#     worker's CUDA_VISIBLE_DEVICES and --device-id as /proc shows them,
#     a chat completion answered on the GPU, nvidia-smi's process list beside
#     describe's figure, the switchyard_gpu_* metrics;
#   * a registration whose gpu.required_memory_mb exceeds the GPU (507);
#   * SIGTERM: the exit status and no worker left.
# Settings (environment): BIN_DIR (bin: switchyard and nvmlcheck, built with
# CGO_ENABLED=1 elsewhere if this host has no Go), PYTHON (python3: an
# interpreter with torch that sees CUDA), OUT_DIR (a new temporary folder).
# It needs curl; it exits 1 when a check fails.
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.." || exit 2

BIN_DIR="$(realpath "${BIN_DIR:-bin}")"
PYTHON="${PYTHON:-python3}"
OUT_DIR="${OUT_DIR:-$(mktemp -d "${TMPDIR:-/tmp}/gpu-check.XXXXXX")}"
mkdir -p "$OUT_DIR"
work="$(mktemp -d "${TMPDIR:-/tmp}/gpu-check-run.XXXXXX")"
inference="http://127.0.0.1:18780"
management="http://127.0.0.1:18781"
server_pid=""
failed=0

say() { printf '== %s\n' "$*"; }
check() { # check WHAT CONDITION...: prints PASS or FAIL
  local what=$1
  shift
  if "$@"; then echo "PASS $what"; else echo "FAIL $what"; failed=1; fi
}
# shellcheck disable=SC2317 # run by the EXIT trap
cleanup() {
  if [[ -n "$server_pid" ]] && kill -0 "$server_pid" 2>/dev/null; then
    kill -TERM "$server_pid"
    wait "$server_pid" 2>/dev/null
  fi
  rm -rf "$work"
}
trap cleanup EXIT

# field FILE KEY...: the JSON value at the path of keys (numbers index
# arrays) in FILE, empty when absent or null (python, not jq: GPU hosts
# often lack jq).
field() {
  "$PYTHON" - "$@" <<'PY'
import json, sys
try:
    v = json.load(open(sys.argv[1]))
    for k in sys.argv[2:]:
        v = v[int(k)] if isinstance(v, list) else v[k]
except (OSError, ValueError, LookupError, TypeError):
    v = None
print("" if v is None else v)
PY
}

say "nvidia-smi"
nvidia-smi -L || true
nvidia-smi --query-gpu=index,uuid,name,memory.total,memory.used,mig.mode.current --format=csv || true

say "nvmlcheck"
"$BIN_DIR/nvmlcheck" | tee "$OUT_DIR/nvmlcheck.txt"
echo "exit ${PIPESTATUS[0]}"
"$BIN_DIR/nvmlcheck" -json >"$OUT_DIR/nvmlcheck.json"

say "torch in $PYTHON"
"$PYTHON" -c 'import torch; print("torch", torch.__version__, "cuda", torch.cuda.is_available(), torch.cuda.device_count())'

say "a server on the chat example"
mkdir -p "$work/sock" "$work/store/chat" "$work/store/big"
cp examples/models/chat/* "$work/store/chat/"
cat >"$work/config.properties" <<CONF
inference_address=$inference
management_address=$management
model_store=$work/store
load_models=chat=$work/store/chat
socket_dir=$work/sock
python_executable=$PYTHON
CONF
"$BIN_DIR/switchyard" serve --config "$work/config.properties" >"$OUT_DIR/server.log" 2>&1 &
server_pid=$!
ready=""
for _ in $(seq 1 600); do
  if [[ "$(curl -s -o /dev/null -w '%{http_code}' "$inference/ping")" == 200 ]]; then ready=1; break; fi
  kill -0 "$server_pid" 2>/dev/null || break
  sleep 0.5
done
check "/ping answers 200 once chat has loaded" test -n "$ready"
curl -s "$inference/ping" | tee "$OUT_DIR/ping.json"; echo

curl -s "$management/models/chat" | tee "$OUT_DIR/describe.json"; echo
worker=(0 models 0 workerGroups 0 workers 0)
visible=$(field "$OUT_DIR/describe.json" "${worker[@]}" visibleDevices)
pid=$(field "$OUT_DIR/describe.json" "${worker[@]}" pid)
check "the worker is pinned by UUID (visibleDevices $visible)" grep -qE '^(GPU|MIG)-' <<<"$visible"
if [[ -n "$pid" && -r "/proc/$pid/environ" ]]; then
  env_cvd=$(tr '\0' '\n' <"/proc/$pid/environ" | sed -n 's/^CUDA_VISIBLE_DEVICES=//p')
  args=$(tr '\0' ' ' <"/proc/$pid/cmdline")
  echo "worker $pid: CUDA_VISIBLE_DEVICES=$env_cvd"
  echo "worker $pid: $args"
  check "the worker's CUDA_VISIBLE_DEVICES is its visibleDevices" test "$env_cvd" == "$visible"
  check "the worker is told --device-id 0" grep -q -- '--device-id 0' <<<"$args"
else
  check "describe names the worker's pid" false
fi

say "a chat completion"
curl -s "$inference/v1/chat/completions" -H 'Content-Type: application/json' \
  -d '{"model":"chat","messages":[{"role":"user","content":"What does cruft mean?"}],"max_tokens":32}' |
  tee "$OUT_DIR/chat.json"; echo
check "the chat completion has a choice" test -n "$(field "$OUT_DIR/chat.json" choices 0 message content)"

say "GPU memory: describe against nvidia-smi"
curl -s "$management/models/chat" >"$OUT_DIR/describe-after.json"
mib=$(field "$OUT_DIR/describe-after.json" "${worker[@]}" gpuMemoryMiB)
echo "describe gpuMemoryMiB: $mib"
nvidia-smi --query-compute-apps=pid,used_memory --format=csv | tee "$OUT_DIR/smi-apps.csv"
check "describe's gpuMemoryMiB is a number above 0" test "$mib" -gt 0 2>/dev/null

say "metrics"
curl -s "$inference/metrics" "$management/metrics" 2>/dev/null | grep -E '^switchyard_(gpu|worker)_' | tee "$OUT_DIR/metrics.txt"
check "switchyard_gpu_up is 1" grep -qE '^switchyard_gpu_up\{[^}]*\} 1$' "$OUT_DIR/metrics.txt"

say "a model that does not fit the GPU"
cp examples/models/chat/* "$work/store/big/"
echo "gpu.required_memory_mb=10000000" >>"$work/store/big/serving.properties"
code=$(curl -s -o "$OUT_DIR/register-big.json" -w '%{http_code}' -X POST "$management/models?url=big&model_name=big")
cat "$OUT_DIR/register-big.json"; echo
check "registering it answers 507 (got $code)" test "$code" == 507

say "SIGTERM"
kill -TERM "$server_pid"
wait "$server_pid"
status=$?
server_pid=""
check "the server exits 0 (got $status)" test "$status" == 0
if [[ -n "$pid" ]]; then check "worker $pid is gone" test ! -d "/proc/$pid"; fi
tail -n 40 "$OUT_DIR/server.log"
echo "results in $OUT_DIR"
exit "$failed"
