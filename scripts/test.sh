#!/usr/bin/env bash
# The test command: installs what the tests need, then runs the checks
# (no tracked binaries, gofmt, go vet, staticcheck, flake8 and pylint) and every test (Go unit
# tests, the Python runtime's and the example models' unit tests, the
# end-to-end tests with real Python workers, and the deployment rig).
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

# The deployment rig (deploy/rig, a module of its own, standard library
# only): three replicas in network namespaces behind HAProxy, 30-second
# phases; it skips without root, ip netns or haproxy. deploy/test (the
# chart and manifests against Helm, k8s.io/api and the CRDs) is not run
# here: compiling its dependencies takes minutes (docs/deploy.md).
(
  cd deploy/rig
  go vet ./...
  go run honnef.co/go/tools/cmd/staticcheck@v0.8.2 ./...
  shellcheck rig.sh
  RIG_SECONDS="${RIG_SECONDS:-30}" go test -timeout 20m ./...
)
