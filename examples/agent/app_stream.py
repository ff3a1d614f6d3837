"""app_stream: the agent served with the scaffolding's asynchronous, streaming entrypoint.

    REASONING_MODEL_ID=... SLM_ENDPOINT_NAME=... python app_stream.py

POST /invocations {"prompt": "..."} answers a server-sent event stream: each
event one of agent.stream_async's model events ({"event": {...}}: message
start, content deltas with the text, tool use, stops, metadata), as the
AgentCore CLI's Strands template streams them.
"""

import os

from bedrock_agentcore.runtime import BedrockAgentCoreApp

import planner

app = BedrockAgentCoreApp()


@app.entrypoint
async def invoke(payload, context):
    """Streams the agent's model events for the payload's prompt."""
    del context  # the session id is not used: every invocation gets a new Agent
    prompt = planner.prompt_of(payload)
    if prompt is None:
        raise ValueError('prompt is missing or empty: send {"prompt": "..."}')
    async for event in planner.build_agent().stream_async(prompt):
        if isinstance(event, dict) and "event" in event:
            yield event


if __name__ == "__main__":
    app.run(port=int(os.environ.get("PORT", "8080")))
