#!/usr/bin/env bash
# Lints the repository's Python (the worker runtime and its tests, the
# example models, the test fixtures, the benchmarks) with flake8 (.flake8)
# and pylint (.pylintrc), both from the project's virtual environment
# (scripts/deps.sh); any finding fails. pylint sees the runtime and the
# djl_python shim on PYTHONPATH, as a worker does.
set -euo pipefail
cd "$(dirname "$0")/.."

if git rev-parse --git-dir >/dev/null 2>&1; then
  mapfile -t files < <(git ls-files '*.py')
else
  mapfile -t files < <(find . -name '*.py' -not -path './.cache/*' -not -path './.venv/*' -not -path '*/node_modules/*' | sort)
fi
.venv/bin/flake8 "${files[@]}"
PYTHONPATH=pyruntime:pyruntime/shim \
  .venv/bin/pylint --rcfile=.pylintrc --score=n "${files[@]}"
