#!/usr/bin/env bash
# Installs what switchyard's workers, examples and tests need on Debian 12:
# Debian's Python with numpy, torch and sentencepiece (no PyPI needed),
# langdetect for an example model, pip for model requirements, boto3 for the
# SageMaker Runtime test, promtool for the metrics check, flake8 and pylint
# for the Python lint, and Node.js for the OpenAI and AWS SDK tests. Safe to
# run again.
set -euo pipefail

packages=(
  python3 python3-numpy python3-torch python3-sentencepiece python3-langdetect
  python3-pip python3-boto3 libopenblas0-pthread prometheus jargon-text
  gcc-aarch64-linux-gnu libc6-dev-arm64-cross shellcheck flake8 pylint
)
# Node.js for the OpenAI SDK test: Debian's packages unless a node (with its
# own npm, as NodeSource's nodejs has) is installed already.
command -v node >/dev/null || packages+=(nodejs)
command -v npm >/dev/null || packages+=(npm)

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

# Node packages of the end-to-end tests (the OpenAI and AWS SDKs), from
# package-lock.json; again when the lock file is newer than the install.
if [ -f e2e/node/package-lock.json ] && { [ ! -d e2e/node/node_modules ] ||
   [ e2e/node/package-lock.json -nt e2e/node/node_modules/.package-lock.json ]; }; then
  (cd e2e/node && npm ci --no-audit --no-fund --loglevel=error)
fi
