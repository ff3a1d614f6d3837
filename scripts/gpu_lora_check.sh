#!/usr/bin/env bash
# LoRA adapters on a GPU: runs the runtime's adapter suite
# (pyruntime/tests/test_hf_adapters.py) with the worker's device set to
# cuda:0, so that each adapter's greedy answer, the mixed batch in one
# forward pass per step, the eviction and the pin are checked against
# peft.PeftModel on the same GPU. Needs the fixtures qwen2-chat and
# qwen2-chat-adapters (fixtures/build.py; 2.4 MB, carried to a GPU host that
# cannot build them) and an interpreter with torch that sees CUDA,
# transformers and peft. Settings (environment): PYTHON (python3),
# SWITCHYARD_FIXTURES (.cache/fixtures), SWITCHYARD_TEST_DEVICE_ID (0).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
PYTHON="${PYTHON:-python3}"
export SWITCHYARD_FIXTURES="${SWITCHYARD_FIXTURES:-$PWD/.cache/fixtures}"
export SWITCHYARD_TEST_DEVICE_ID="${SWITCHYARD_TEST_DEVICE_ID:-0}"
"$PYTHON" -c 'import torch, transformers, peft; print("torch", torch.__version__, "cuda", torch.cuda.is_available(),
  torch.cuda.get_device_name(0) if torch.cuda.is_available() else "-", "transformers", transformers.__version__,
  "peft", peft.__version__)'
for f in qwen2-chat/config.json qwen2-chat-adapters/qa/adapter_config.json; do
  [[ -f "$SWITCHYARD_FIXTURES/$f" ]] || { echo "no $SWITCHYARD_FIXTURES/$f: build or carry the fixtures" >&2; exit 2; }
done
cd pyruntime
log="$(mktemp)"
PYTHONPATH=.:shim "$PYTHON" -m unittest -v tests.test_hf_adapters 2>&1 | tee "$log"
status=${PIPESTATUS[0]}
if grep -q "skipped" "$log"; then echo "FAIL: tests skipped" >&2; status=1; fi
rm -f "$log"
exit "$status"
