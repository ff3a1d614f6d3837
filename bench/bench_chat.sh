#!/usr/bin/env bash
# Issue 6's measurements, on the toy chat model (examples/models/chat):
#   * time to first byte of a BENCH_TOKENS-token chat answer (default 200),
#     streamed (stream: true, the first chunk event) versus not streamed
#     (the whole chat.completion), median of BENCH_RUNS runs;
#   * tokens per second at concurrency 1 and 8 (BENCH_CONCURRENCY): that
#     many clients each stream BENCH_REQUESTS answers in turn; with
#     continuous batching, 8 concurrent streams should take far less than 8
#     times one.
# The model runs from a copy whose entry point wraps the folder's own
# model.py so that every sequence ignores <|end|>: each answer then has
# exactly max_tokens tokens, as the issue's "200-token answer" asks. The
# load tool is bench/chatbench; it talks to POST /v1/chat/completions.
#
# Settings (environment): PYTHON (.venv/bin/python), BENCH_TOKENS (200),
# BENCH_RUNS (5), BENCH_CONCURRENCY (1,8), BENCH_REQUESTS (2),
# BENCH_MAX_BATCH (8: the model's option.max_rolling_batch_size).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

PYTHON="${PYTHON:-$PWD/.venv/bin/python}"
TOKENS="${BENCH_TOKENS:-200}"
RUNS="${BENCH_RUNS:-5}"
LEVELS="${BENCH_CONCURRENCY:-1,8}"
REQUESTS="${BENCH_REQUESTS:-2}"
MAX_BATCH="${BENCH_MAX_BATCH:-8}"
export CGO_ENABLED=1

work="$(mktemp -d "${TMPDIR:-/tmp}/switchyard-bench-chat.XXXXXX")"
server_pid=""

# shellcheck source=bench/lib.sh
source bench/lib.sh

cleanup() {
  stop_pid "$server_pid"
  rm -rf "$work"
}
trap cleanup EXIT

# The model: a copy of the example with a benchmark entry point.
model="$work/store/chat"
mkdir -p "$work/store" "$work/sock"
cp -r examples/models/chat "$model"
rm -rf "$model/__pycache__"
cat > "$model/bench_model.py" <<'EOF'
"""Benchmark entry point written by bench/bench_chat.sh: the folder's own
handler (model.py), with every engine sequence generating through <|end|>,
so that each answer has exactly max_tokens tokens."""
import engine

_submit = engine.Engine.submit


def _submit_past_end(self, *args, **kwargs):
    kwargs["ignore_eos"] = True
    return _submit(self, *args, **kwargs)


engine.Engine.submit = _submit_past_end

from model import handle  # noqa: E402,F401
EOF
sed -i -e 's/^option.entryPoint=.*/option.entryPoint=bench_model.py/' \
       -e "s/^option.max_rolling_batch_size=.*/option.max_rolling_batch_size=$MAX_BATCH/" "$model/serving.properties"

go build -o "$work/switchyard" ./cmd/switchyard
go build -o "$work/chatbench" ./bench/chatbench

inference="127.0.0.1:$(free_port)"
management="127.0.0.1:$(free_port)"
cat > "$work/config.properties" <<EOF
inference_address=http://$inference
management_address=http://$management
model_store=$work/store
socket_dir=$work/sock
python_executable=$PYTHON
load_models=ALL
EOF

"$work/switchyard" serve --config "$work/config.properties" >"$work/server.log" 2>&1 &
server_pid=$!

healthy=""
for _ in $(seq 1 600); do
  if curl -fsS "http://$inference/ping" 2>/dev/null | grep -q '"Healthy"'; then
    healthy=1
    break
  fi
  kill -0 "$server_pid" 2>/dev/null || break
  sleep 0.2
done
if [[ -z "$healthy" ]]; then
  echo "bench_chat: the chat model did not become healthy; server log:" >&2
  cat "$work/server.log" >&2
  exit 1
fi

echo "machine: $(nproc) cores, $(uname -sr); model: toy chat (examples/models/chat), max_rolling_batch_size $MAX_BATCH"
"$work/chatbench" -url "http://$inference" -model chat -tokens "$TOKENS" -runs "$RUNS" \
  -concurrency "$LEVELS" -requests "$REQUESTS"
