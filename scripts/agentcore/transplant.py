"""transplant.py turns the AgentCore CLI's Strands template into the example agent's, in place.

    python transplant.py APP_DIR EXAMPLE_DIR

APP_DIR is the generated app (PROJECT/app/NAME: main.py, model/load.py,
mcp_client/, pyproject.toml); EXAMPLE_DIR is examples/agent. Each edit
checks that the template still has what it replaces, and fails naming it
when not (the template changes with the CLI's version).
"""

# pylint: disable=fixme  # "TODO verify" marks what changes with the CLI's version (issue 25)

import os
import re
import shutil
import sys

# What the template's main.py has, and what takes its place. TODO verify: the
# template of @aws/agentcore 0.30.0, at each upgrade.
MCP_IMPORT = "from mcp_client.client import get_streamable_http_mcp_client\n"
MCP_CLIENTS = re.compile(r"# Define a Streamable HTTP MCP Client\n"
                         r"mcp_clients = \[get_streamable_http_mcp_client\(\)\]\n")
SAMPLE_TOOL = re.compile(r"# Define a simple function tool\n@tool\ndef add_numbers\(.*?\n"
                         r"tools\.append\(add_numbers\)\n", re.DOTALL)

COURSE_TOOL = '''# The small model's tool (examples/agent/tools.py): the course AGENT_COURSE
# names, one InvokeEndpoint call per use.
from tools import course_tool
tools.append(course_tool())
'''

NO_MCP = '''# The template's remote MCP tool client is removed: it reaches a web service,
# and this agent runs offline against a local switchyard.
mcp_clients = []
'''

LOAD = '''"""The reasoning model: Bedrock, with the model id REASONING_MODEL_ID (required)."""

from strands.models.bedrock import BedrockModel

import shared

# Read at import, so that the app exits at start, naming the variable, when
# it is unset; the id is never built in.
MODEL_ID = shared.reasoning_model_id()


def load_model() -> BedrockModel:
    """Returns the reasoning model's Strands model."""
    return shared.reasoning_model()
'''


def replace(text, pattern, new, what):
    """Returns text with pattern (a string or a regex) replaced by new; fails when it is not there once."""
    if isinstance(pattern, str):
        if text.count(pattern) != 1:
            sys.exit("transplant: the template's main.py no longer has %s" % what)
        return text.replace(pattern, new)
    out, n = pattern.subn(lambda _: new, text)
    if n != 1:
        sys.exit("transplant: the template's main.py no longer has %s" % what)
    return out


def main(app, example):
    """Edits the app in place."""
    main_py = os.path.join(app, "main.py")
    with open(main_py, encoding="utf-8") as f:
        text = f.read()
    text = replace(text, MCP_IMPORT, "", "the MCP client's import")
    text = replace(text, MCP_CLIENTS, NO_MCP, "the MCP client list")
    text = replace(text, SAMPLE_TOOL, COURSE_TOOL, "the sample tool add_numbers")
    with open(main_py, "w", encoding="utf-8") as f:
        f.write(text)
    shutil.rmtree(os.path.join(app, "mcp_client"))
    with open(os.path.join(app, "model", "load.py"), "w", encoding="utf-8") as f:
        f.write(LOAD)
    for name in ("shared.py", "tools.py"):
        shutil.copy(os.path.join(example, name), os.path.join(app, name))
    pyproject = os.path.join(app, "pyproject.toml")
    with open(pyproject, encoding="utf-8") as f:
        lines = f.read().splitlines(keepends=True)
    kept = [line for line in lines if not re.match(r'\s*"mcp\b', line)]
    if len(kept) != len(lines) - 1:
        sys.exit("transplant: pyproject.toml no longer lists mcp once")
    with open(pyproject, "w", encoding="utf-8") as f:
        f.writelines(kept)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
