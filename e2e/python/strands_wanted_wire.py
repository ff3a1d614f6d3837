"""strands_wanted_wire.py shows the payload parts Strands' SageMakerAIModel streams need, on switchyard's own chunks.

    python strands_wanted_wire.py <base url>

Today InvokeEndpointWithResponseStream carries a chat model's JSON token
lines ({"token": {"text"}}), which Strands' parser reads as no text and no
tool call. The front-end already makes OpenAI chat.completion.chunk events
for /v1/chat/completions. This script runs a Strands Agent on
SageMakerAIModel (streaming) whose SageMaker Runtime client is replaced by
one that sends the same body to /v1/chat/completions and hands Strands each
event's JSON, with a newline and without "data: ", as one PayloadPart: the
bytes the front-end's response stream should carry for a chat request.
Prints {"result", "calls", "parts"} or {"error"} as JSON.
"""

import json
import sys
import urllib.request

from strands import Agent
from strands.models.sagemaker import SageMakerAIModel

# The same tool, and its record of calls, as strands_sagemaker.py's.
from strands_sagemaker import CALLS, classify_language  # pylint: disable=import-error


def chunk_parts(base, parts):
    """Returns a stand-in for invoke_endpoint_with_response_stream that streams /v1's chunks as parts."""
    def invoke(**request):
        body = json.loads(request["Body"])
        body["model"] = request["EndpointName"]
        body["stream_options"] = {"include_usage": True}
        req = urllib.request.Request(base + "/v1/chat/completions", data=json.dumps(body).encode(),
                                     headers={"Content-Type": "application/json"})
        with urllib.request.urlopen(req, timeout=60) as resp:
            events = [line[len(b"data: "):].strip() for line in resp.read().split(b"\n")
                      if line.startswith(b"data: ")]
        mine = [e + b"\n" for e in events if e != b"[DONE]"]
        parts.extend(p.decode() for p in mine)
        return {"Body": [{"PayloadPart": {"Bytes": p}} for p in mine], "ContentType": "application/jsonlines"}
    return invoke


def main(base):
    """Runs one streamed agent invocation over the stand-in client and prints its outcome."""
    model = SageMakerAIModel(endpoint_config={"endpoint_name": "toolcaller", "region_name": "us-east-1"},
                             payload_config={"max_tokens": 200, "stream": True})
    parts = []
    model.client.invoke_endpoint_with_response_stream = chunk_parts(base, parts)
    agent = Agent(model=model, tools=[classify_language], system_prompt="You are a careful assistant.",
                  callback_handler=None)
    try:
        result = agent("Which language is 'Guten Morgen, wie geht es dir?'")
        print(json.dumps({"result": str(result).strip(), "calls": CALLS, "parts": parts}))
    except Exception as exc:  # pylint: disable=broad-exception-caught
        print(json.dumps({"error": "%s: %s" % (type(exc).__name__, exc), "calls": CALLS, "parts": parts}))


if __name__ == "__main__":
    main(sys.argv[1])
