"""planner: the Strands Agent that plans with the reasoning model and calls the course's tool.

The reasoning model is Strands' BedrockModel (converse_stream by default)
with the model id REASONING_MODEL_ID, which is required and never built in:
importing this module without it exits at once (status 1) naming it.
"""

from strands import Agent

import shared
import tools

# PLANNER_PROMPT is the reasoning model's system prompt. It does not say when
# to use the tool: the tool's description does.
PLANNER_PROMPT = ("You are a careful assistant. Answer the user's request. When you use a tool, check its "
                  "result against the request and explain it in your answer.")

# MODEL is made once, at start, so that a missing REASONING_MODEL_ID stops
# the process before it serves anything.
MODEL = shared.reasoning_model()
TOOL = tools.course_tool()


def build_agent():
    """Returns a new Agent: one per invocation, so no conversation leaks into the next."""
    return Agent(model=MODEL, tools=[TOOL], system_prompt=PLANNER_PROMPT, callback_handler=None)


def prompt_of(payload):
    """Returns the payload's prompt, or None when it is not a non-blank string."""
    prompt = payload.get("prompt") if isinstance(payload, dict) else None
    if not isinstance(prompt, str) or not prompt.strip():
        return None
    return prompt
