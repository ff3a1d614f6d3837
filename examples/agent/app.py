"""app: the agent served as a hosted agent runtime, with a plain entrypoint.

    REASONING_MODEL_ID=... SLM_ENDPOINT_NAME=... python app.py     # POST /invocations, GET /ping on :8080

POST /invocations {"prompt": "..."} answers {"result": "<the agent's answer>"}.
PORT picks another port (the AgentCore CLI's dev server sets it too).
"""

import os

from bedrock_agentcore.runtime import BedrockAgentCoreApp
from starlette.responses import JSONResponse

import planner

app = BedrockAgentCoreApp()


@app.entrypoint
def invoke(payload):
    """Runs the agent on the payload's prompt and returns its answer as {"result"}."""
    prompt = planner.prompt_of(payload)
    if prompt is None:
        return JSONResponse({"error": 'prompt is missing or empty: send {"prompt": "..."}'}, status_code=400)
    result = planner.build_agent()(prompt)
    return {"result": str(result).strip()}


if __name__ == "__main__":
    app.run(port=int(os.environ.get("PORT", "8080")))
