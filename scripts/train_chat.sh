#!/usr/bin/env bash
# Retrain the toy chat model (examples/models/chat) from the Jargon File and
# write its checkpoint files into that folder. Needs Debian's jargon-text and
# the system Python with torch and sentencepiece; extra flags go to train.py
# (for example --steps 100 --out /tmp/chat for a quick try).
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."
PYTHON="${PYTHON:-$PWD/.venv/bin/python}"
JARGON="${JARGON:-/usr/share/doc/jargon-text/jargon.txt.gz}"

if [[ ! -r "$JARGON" ]]; then
  echo "train_chat: $JARGON not found; install it with: apt-get install jargon-text" >&2
  exit 1
fi
if ! "$PYTHON" -c 'import torch, sentencepiece' 2>/dev/null; then
  echo "train_chat: $PYTHON lacks torch or sentencepiece (run scripts/deps.sh)" >&2
  exit 1
fi

# The machine is shared: idle OpenMP threads should sleep, not spin.
export OMP_WAIT_POLICY="${OMP_WAIT_POLICY:-PASSIVE}"
exec "$PYTHON" examples/models/chat/train.py --jargon "$JARGON" --out examples/models/chat "$@"
