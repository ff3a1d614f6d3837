#!/usr/bin/env bash
# A real inference check of a created project through the CLI's local dev
# server: starts `agentcore dev` detached (a session of its own with setsid,
# standard input from /dev/null, its log and pid in PROJECT/.switchyard-dev),
# waits until it answers, sends one prompt with `agentcore dev "<prompt>"`,
# and checks the answer. The dev server keeps running: cleanup.sh stops it.
#
#   scripts/agentcore/verify.sh PROJECT_DIR [PROMPT]
#
# The environment configures the agent as for examples/agent: REASONING_MODEL_ID,
# SLM_ENDPOINT_NAME, AGENT_COURSE, the AWS SDK's AWS_ENDPOINT_URL_* pointing
# at a local switchyard, any credentials, a region. EXPECT (default
# "German (deu)", langid's answer to the default prompt) must be in the
# answer. AGENTCORE_DEV_PORT picks the port (default: a free one).
set -euo pipefail
# shellcheck source=scripts/agentcore/common.sh
source "$(dirname "$0")/common.sh"
need_cli

project="$(cd "${1:?usage: verify.sh PROJECT_DIR [PROMPT]}" && pwd)"
prompt="${2:-Welche Sprache ist 'Guten Morgen, wie geht es dir?'}"
expect="${EXPECT-German (deu)}"
state="$(state_dir "$project")"
mkdir -p "$state"
if [ -s "$state/pid" ] && kill -0 "$(cat "$state/pid")" 2>/dev/null; then
  die "a dev server of $project runs already (pid $(cat "$state/pid")): run cleanup.sh first"
fi
port="${AGENTCORE_DEV_PORT:-$("$AGENTCORE_VENV/bin/python" -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')}"

# Detached: its own session (setsid), nothing on stdin, its output in a file.
(cd "$project" && exec setsid "$AGENTCORE" dev --port "$port" --logs --skip-deploy --no-traces \
  </dev/null >"$state/dev.log" 2>&1) &
pid=$!
echo "$pid" >"$state/pid"
echo "$port" >"$state/port"
echo "agentcore: dev server pid $pid on 127.0.0.1:$port (log $state/dev.log)"

for _ in $(seq 1 600); do
  if ! kill -0 "$pid" 2>/dev/null; then
    tail -n 30 "$state/dev.log" >&2
    die "the dev server exited at start"
  fi
  if "$AGENTCORE_VENV/bin/python" - "$port" <<'PY' 2>/dev/null; then
import sys, urllib.request
urllib.request.urlopen("http://127.0.0.1:%s/ping" % sys.argv[1], timeout=2).read()
PY
    break
  fi
  sleep 0.2
done

answer="$(cd "$project" && timeout 300 "$AGENTCORE" dev --port "$port" "$prompt" </dev/null 2>&1)" || {
  echo "$answer" >&2
  die "agentcore dev \"$prompt\" failed"
}
echo "$answer"
if [ -n "$expect" ] && [[ "$answer" != *"$expect"* ]]; then
  tail -n 30 "$state/dev.log" >&2
  die "the answer does not contain \"$expect\""
fi
echo "agentcore: verified: the dev server answered through the small model"
