#!/usr/bin/env bash
# Creates an AgentCore project with the real CLI, non-interactively, and
# transplants the small model's tool into it, so that it runs offline
# against a local switchyard:
#
#   scripts/agentcore/create.sh PARENT_DIR [NAME]     # NAME: default slmagent
#
# agentcore create --framework Strands --model-provider Bedrock writes
# PARENT_DIR/NAME; transplant.py then copies examples/agent's shared.py and
# tools.py into its app, gives it the course's tool (AGENT_COURSE) in place of
# the template's sample tool, removes the template's remote MCP tool client
# (a web service: the agent must run offline), and takes the model id from
# REASONING_MODEL_ID (required; the app exits at start without it) instead
# of the template's built-in one. The app's .venv is a link to the project's
# virtual environment ($AGENTCORE_VENV), which has the template's packages,
# so that agentcore dev installs nothing.
set -euo pipefail
# shellcheck source=scripts/agentcore/common.sh
source "$(dirname "$0")/common.sh"
need_cli

parent="${1:?usage: create.sh PARENT_DIR [NAME]}"
name="${2:-slmagent}"
[[ "$name" =~ ^[A-Za-z][A-Za-z0-9]{0,22}$ ]] || die "$name: a project name is a letter, then letters and digits, at most 23 characters"
mkdir -p "$parent"
parent="$(cd "$parent" && pwd)"
[ ! -e "$parent/$name" ] || die "$parent/$name exists already"

# TODO verify: the CLI's flags, at each upgrade (agentcore create --help).
(cd "$parent" && "$AGENTCORE" create --name "$name" --framework Strands --model-provider Bedrock \
  --memory none --skip-git --skip-install --skip-python-setup --json) >"$parent/.$name.create.json"
grep -q '"success":true' "$parent/.$name.create.json" || die "agentcore create failed: $(cat "$parent/.$name.create.json")"
rm -f "$parent/.$name.create.json"

app="$parent/$name/app/$name"
"$AGENTCORE_VENV/bin/python" "$ROOT/scripts/agentcore/transplant.py" "$app" "$ROOT/examples/agent"
ln -s "$AGENTCORE_VENV" "$app/.venv"
echo "agentcore: created $parent/$name (the app in $app)"
