"""strands_sagemaker.py runs a Strands Agent whose model is SageMakerAIModel, on switchyard's InvokeEndpoint.

    AWS_ENDPOINT_URL_SAGEMAKER_RUNTIME=<base url> python strands_sagemaker.py <endpoint> <stream: 1 or 0>

The planner is the toolcaller fixture behind the endpoint; the agent's one
tool answers "German (deu)" itself (the round trip under test is the
planner's: an OpenAI tool call out of InvokeEndpoint, the tool's result back
in the next call). Prints {"result", "calls"} or {"error"} as JSON.
"""

import json
import sys

from strands import Agent, tool
from strands.models.sagemaker import SageMakerAIModel

CALLS = []


@tool
def classify_language(text: str) -> str:
    """Names the language a text is written in.

    Args:
        text: the text
    """
    CALLS.append(text)
    return "German (deu)"


def main(endpoint, stream):
    """Runs one agent invocation and prints its outcome."""
    model = SageMakerAIModel(endpoint_config={"endpoint_name": endpoint, "region_name": "us-east-1"},
                             payload_config={"max_tokens": 200, "stream": stream})
    agent = Agent(model=model, tools=[classify_language], system_prompt="You are a careful assistant.",
                  callback_handler=None)
    try:
        result = agent("Which language is 'Guten Morgen, wie geht es dir?'")
        print(json.dumps({"result": str(result).strip(), "calls": CALLS}))
    except Exception as exc:  # pylint: disable=broad-exception-caught
        print(json.dumps({"error": "%s: %s" % (type(exc).__name__, exc), "calls": CALLS}))


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2] == "1")
