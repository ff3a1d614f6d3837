#!/usr/bin/env bash
# Issue 17's memory benchmark: the front-end's RSS before, during and for
# 30 s after one 64 MiB request to an echo model (bench/models/echo), read
# from /proc/<pid>/status by bench/membench. It ends with the target
# (RSS under 40 MB within 30 s of the answer: MET / MISSED).
#
# Settings (environment): PYTHON (.venv/bin/python), MEMBENCH_SIZE (64MiB),
# MEMBENCH_REQUESTS (1), MEMBENCH_WATCH (30s). Extra arguments go to
# membench (-h lists its flags).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
export CGO_ENABLED=1
work="$(mktemp -d "${TMPDIR:-/tmp}/switchyard-membench.XXXXXX")"
trap 'rm -rf "$work"' EXIT
go build -o "$work/switchyard" ./cmd/switchyard
go build -o "$work/membench" ./bench/membench
exec "$work/membench" -bin "$work/switchyard" -python "${PYTHON:-$PWD/.venv/bin/python}" \
  -size "${MEMBENCH_SIZE:-64MiB}" -requests "${MEMBENCH_REQUESTS:-1}" \
  -watch "${MEMBENCH_WATCH:-30s}" "$@"
