#!/usr/bin/env bash
# The LoRA benchmark (issue "LoRA adapters", Measure): throughput at
# concurrency 16 with requests spread over eight adapters against all on
# one, and cold adapter loads (first request to answer), through one
# switchyard serving the causal-LM fixture with option.enable_lora. See
# bench/hf/lora_bench.py; bench/hf/lora_memory.py measures the memory.
#
# Settings (environment): PYTHON (.venv/bin/python), SWITCHYARD_FIXTURES
# (.cache/fixtures, its real path: the adapters' hash covers their base's
# path; built here if missing or stale, as the tests build them),
# LORA_OUT (a report file, JSON; none by default), LORA_MAX_LOAD (wait
# before each round for a 1-minute load average below it; no wait by
# default). Extra arguments go to lora_bench.py (--help lists them).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
PYTHON="${PYTHON:-$PWD/.venv/bin/python}"
fixtures="${SWITCHYARD_FIXTURES:-$PWD/.cache/fixtures}"
work="$(mktemp -d "${TMPDIR:-/tmp}/switchyard-lorabench.XXXXXX")"
trap 'rm -rf "$work"' EXIT
mkdir -p "$fixtures"
fixtures="$(realpath "$fixtures")"
flock "$fixtures/.build.lock" "$PYTHON" fixtures/build.py --out "$fixtures" --only qwen2-chat,qwen2-chat-adapters >&2
CGO_ENABLED=1 go build -o "$work/switchyard" ./cmd/switchyard
args=(--bin "$work/switchyard" --fixtures "$fixtures" --python "$PYTHON")
[[ -n "${LORA_OUT:-}" ]] && args+=(--out "$LORA_OUT")
[[ -n "${LORA_MAX_LOAD:-}" ]] && args+=(--max-load "$LORA_MAX_LOAD")
"$PYTHON" bench/hf/lora_bench.py "${args[@]}" "$@"
