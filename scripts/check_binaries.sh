#!/usr/bin/env bash
# Fails when git tracks a file that is not text (a built program, above
# all) unless scripts/binaries.allow names it. Run from scripts/test.sh.
set -euo pipefail
cd "$(dirname "$0")/.."

git rev-parse --git-dir >/dev/null 2>&1 || { echo "check_binaries: not a git checkout, skipped" >&2; exit 0; }
mapfile -t allowed < <(sed -e 's/#.*//' -e 's/[[:space:]]*$//' -e '/^$/d' scripts/binaries.allow)
bad=0
# grep -I skips binary files, so -L lists them (and empty files, dropped).
while IFS= read -r -d '' f; do
  [ -s "$f" ] || continue
  if ! printf '%s\n' "${allowed[@]}" | grep -qxF -- "$f"; then
    echo "check_binaries: $f is binary and not in scripts/binaries.allow (built files go to bin/)" >&2
    bad=1
  fi
done < <(git ls-files -z | xargs -0 -r grep -lIL --null . 2>/dev/null || true)
exit "$bad"
