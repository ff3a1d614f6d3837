#!/usr/bin/env bash
# The seed's command-line workflow with the real AgentCore CLI, end to end:
# install the CLI (no sudo), create a project with the small model's tool
# transplanted into it, check a real inference through the local dev
# server, then clean up (the dev server and, unless KEEP_PROJECT=1, the
# project folder), also when a step fails.
#
#   scripts/agentcore/workflow.sh PARENT_DIR [NAME]
#
# The environment configures the agent (see verify.sh): pointed at a local
# switchyard serving the small model and a planner, nothing leaves the
# machine. e2e/agentcore_cli_test.go runs it.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
parent="${1:?usage: workflow.sh PARENT_DIR [NAME]}"
name="${2:-slmagent}"

"$here/install.sh"
mkdir -p "$parent"
project="$(cd "$parent" && pwd)/$name"
trap '"$here/cleanup.sh" "$project"' EXIT
"$here/create.sh" "$parent" "$name"
"$here/verify.sh" "$project"
