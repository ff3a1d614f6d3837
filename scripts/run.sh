#!/usr/bin/env bash
# The run command: installs what the workers need, builds switchyard and
# serves the example models on 127.0.0.1:8080 (inference) and :8084
# (management). Extra arguments go to `switchyard serve`.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/deps.sh
export CGO_ENABLED=1
go build -o bin/switchyard ./cmd/switchyard
# The workers run the project's virtual environment (scripts/deps.sh).
export SERVING_PYTHON_EXECUTABLE="${SERVING_PYTHON_EXECUTABLE:-$PWD/.venv/bin/python}"
exec bin/switchyard serve --model-store examples/models "$@"
