# Shared settings of the AgentCore CLI workflow scripts (sourced, not run).
# shellcheck shell=bash

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
# Where install.sh puts the CLI (npm, no sudo): a folder of the repository's
# ignored cache unless AGENTCORE_CLI_DIR says otherwise.
AGENTCORE_CLI_DIR="${AGENTCORE_CLI_DIR:-$ROOT/.cache/agentcore-cli}"
AGENTCORE="$AGENTCORE_CLI_DIR/node_modules/.bin/agentcore"
# The Python environment the generated project runs on: the project's .venv
# (strands-agents, bedrock-agentcore, boto3, uvicorn and uv, pinned in
# requirements/), or the one AGENTCORE_VENV names.
AGENTCORE_VENV="${AGENTCORE_VENV:-$ROOT/.venv}"
# The CLI's own state (installation id, update checks) stays out of $HOME,
# and it sends no telemetry: nothing but loopback is reached.
export AGENTCORE_CONFIG_DIR="${AGENTCORE_CONFIG_DIR:-$AGENTCORE_CLI_DIR/config}"
export AGENTCORE_TELEMETRY_DISABLED=1
# The CLI runs uv for Python projects; it comes with the virtual environment.
export PATH="$AGENTCORE_VENV/bin:$PATH"
export NO_COLOR=1

die() {
  echo "agentcore: $*" >&2
  exit 1
}

# need_cli fails unless install.sh has installed the CLI.
need_cli() {
  [ -x "$AGENTCORE" ] || die "the AgentCore CLI is not installed at $AGENTCORE_CLI_DIR: run scripts/agentcore/install.sh"
}

# state_dir is where verify.sh keeps the dev server's pid, port and log.
state_dir() {
  echo "$1/.switchyard-dev"
}
