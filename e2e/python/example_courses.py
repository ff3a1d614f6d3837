"""example_courses.py prints the example agent's four courses as its Strands tools declare them.

    python example_courses.py

One JSON object: per course, {"tool", "description", "systemPrompt",
"maxTokens"}; e2e/agent_python_test.go compares them with the Go agent's
built-in courses.
"""

import json
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "examples", "agent"))

import tools  # noqa: E402  pylint: disable=wrong-import-position,import-error


def main():
    """Prints the courses."""
    out = {}
    for course, fn in tools.TOOLS.items():
        spec = fn.tool_spec
        out[course] = {"tool": spec["name"], "description": spec["description"],
                       "systemPrompt": tools.COURSES[course]["system_prompt"],
                       "maxTokens": tools.COURSES[course]["max_tokens"]}
    print(json.dumps(out))


if __name__ == "__main__":
    main()
