"""Prompts from checked requests, for a tokenizer's chat template.

The backends render a chat request with the model's chat template; these
helpers give the template what it expects.
"""

import json


def template_messages(messages):
    """Returns chat messages for a tokenizer's chat template: tool-call arguments as objects.

    Chat templates write arguments with tojson, so a JSON string would be
    encoded twice; arguments that are not valid JSON stay strings.
    """
    out = []
    for m in messages:
        if m.get("tool_calls"):
            m = dict(m, tool_calls=[_decoded_call(c) for c in m["tool_calls"]])
        out.append(m)
    return out


def _decoded_call(call):
    try:
        args = json.loads(call["function"]["arguments"])
    except ValueError:
        return call
    return dict(call, function=dict(call["function"], arguments=args))


def template_kwargs(req):
    """Returns the chat-template keywords of a request: the tools when it has any."""
    return {"tools": req.tools} if req.tools else {}
