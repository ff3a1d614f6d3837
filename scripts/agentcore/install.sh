#!/usr/bin/env bash
# Installs the AgentCore CLI (@aws/agentcore, npm) into .cache/agentcore-cli
# (or $AGENTCORE_CLI_DIR), without sudo, from scripts/agentcore/cli's
# package.json and lock; does nothing when that lock is installed already.
#
#   scripts/agentcore/install.sh
#
# Needs Node.js 20 or newer and npm (Debian's nodejs, scripts/deps.sh), and
# uv in the virtual environment (requirements/dev.txt). The package.json
# overrides two dependencies of @aws/agentcore 0.30.0 that the npm registry
# reachable here lacks: @aws-sdk/client-s3files ^3.1067.0 (3.1053.0 is
# there, and is taken) and @aws/agent-inspector (an empty local package
# stands in; only the CLI's web chat UI would load it).
# TODO verify: the CLI's version and the two overrides, at each upgrade.
set -euo pipefail
# shellcheck source=scripts/agentcore/common.sh
source "$(dirname "$0")/common.sh"

command -v node >/dev/null || die "Node.js is not installed (scripts/deps.sh installs Debian's nodejs)"
major="$(node -p 'process.versions.node.split(".")[0]')"
[ "$major" -ge 20 ] || die "Node.js $(node --version) is too old: the AgentCore CLI needs 20 or newer"
command -v uv >/dev/null || die "uv is not in $AGENTCORE_VENV/bin: run scripts/deps.sh (requirements/dev.txt has it)"

src="$ROOT/scripts/agentcore/cli"
mkdir -p "$AGENTCORE_CLI_DIR"
if [ -x "$AGENTCORE" ] && cmp -s "$src/package-lock.json" "$AGENTCORE_CLI_DIR/package-lock.json"; then
  echo "agentcore: $("$AGENTCORE" --version) already installed in $AGENTCORE_CLI_DIR"
  exit 0
fi
rm -rf "$AGENTCORE_CLI_DIR/agent-inspector"
cp -r "$src/package.json" "$src/package-lock.json" "$src/agent-inspector" "$AGENTCORE_CLI_DIR/"
(cd "$AGENTCORE_CLI_DIR" && npm ci --no-audit --no-fund --loglevel=error)
echo "agentcore: installed $("$AGENTCORE" --version) in $AGENTCORE_CLI_DIR"
