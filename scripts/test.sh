#!/usr/bin/env bash
# The test command: installs what the tests need, then runs the checks
# (no tracked binaries, gofmt, go vet, staticcheck, flake8 and pylint) and every test (Go unit
# tests, the Python runtime's and the example models' unit tests, and the
# end-to-end tests with real Python workers).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/deps.sh

export CGO_ENABLED=1
scripts/check_binaries.sh
unformatted=$(gofmt -l $(git ls-files '*.go' 2>/dev/null || find . -name '*.go'))
if [ -n "$unformatted" ]; then
  echo "gofmt needed:" >&2; echo "$unformatted" >&2; exit 1
fi
go vet ./...
go run honnef.co/go/tools/cmd/staticcheck@v0.8.2 ./...
scripts/lint_python.sh
go test -race -timeout 25m ./...
