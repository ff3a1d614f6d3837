#!/usr/bin/env bash
# Issue 13's benchmark: the cold start (first request to answer) of the
# langid example loaded on demand, p50 over RESIDENCY_LOADS loads, against
# its warm latency; then requests/s of round-robin traffic over three
# copies of it with a memory budget that holds two, against the same
# traffic with all three loaded. See bench/residencybench.
#
# Settings (environment): PYTHON (.venv/bin/python), RESIDENCY_LOADS (10),
# RESIDENCY_DURATION (20s), RESIDENCY_CLIENTS (2). Extra arguments go to
# residencybench (-h lists its flags).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
export CGO_ENABLED=1
work="$(mktemp -d "${TMPDIR:-/tmp}/switchyard-residencybench.XXXXXX")"
trap 'rm -rf "$work"' EXIT
go build -o "$work/switchyard" ./cmd/switchyard
go build -o "$work/residencybench" ./bench/residencybench
echo "== load average before: $(cut -d' ' -f1-3 /proc/loadavg)" >&2
"$work/residencybench" -bin "$work/switchyard" -python "${PYTHON:-$PWD/.venv/bin/python}" \
  -loads "${RESIDENCY_LOADS:-10}" -duration "${RESIDENCY_DURATION:-20s}" \
  -clients "${RESIDENCY_CLIENTS:-2}" "$@"
echo "== load average after: $(cut -d' ' -f1-3 /proc/loadavg)" >&2
