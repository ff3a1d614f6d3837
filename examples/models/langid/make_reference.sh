#!/bin/sh
# Regenerates testdata/reference.json with the real lande@1.0.10 under Node.
# Needs node (18 or newer) and npm with registry access; the unit test does not.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work"
npm init -y >/dev/null
npm install --no-audit --no-fund --save-exact lande@1.0.10 >/dev/null
cp "$here/testdata/lande_reference.mjs" "$work/"
node "$work/lande_reference.mjs" "$here/testdata/sentences.json" >"$work/reference.json"
mv "$work/reference.json" "$here/testdata/reference.json"
echo "wrote $here/testdata/reference.json"
