"""agentcore_invoke.py calls an agent runtime with boto3's InvokeAgentRuntime, through an endpoint override.

    AWS_ENDPOINT_URL_BEDROCK_AGENTCORE=<runtime base url> python agentcore_invoke.py

The runtime is `switchyard agent serve`, which serves the data-plane route
itself. Calls, each one key of the JSON object printed:

* session33: a 33-character session id (the shortest the service takes);
* session32: a 32-character one, which botocore refuses before sending;
* session32Sent: the same with botocore's parameter validation off, so that
  the runtime's own refusal shows;
* streamed: Accept text/event-stream, the events read to the end.
"""

# pylint: disable=fixme  # "TODO verify" marks values that change quickly (issue 25)

import json

import boto3
import botocore
from botocore.config import Config

ARN = "arn:aws:bedrock-agentcore:us-east-1:123456789012:runtime/slmagent-AbCdE12345"  # TODO verify: the ARN's form
PROMPT = "Which language is 'Guten Morgen, wie geht es dir?'"


def client(validate=True):
    """Returns the bedrock-agentcore client; its endpoint comes from AWS_ENDPOINT_URL_BEDROCK_AGENTCORE."""
    return boto3.client("bedrock-agentcore", region_name="us-east-1", aws_access_key_id="local",
                        aws_secret_access_key="local",
                        config=Config(retries={"max_attempts": 1}, parameter_validation=validate))


def invoke(session_id, validate=True, accept=None):
    """Returns {"ok": {...}} or {"error": {...}} for one call."""
    kwargs = {"agentRuntimeArn": ARN, "runtimeSessionId": session_id, "qualifier": "DEFAULT",
              "payload": json.dumps({"prompt": PROMPT}).encode(), "contentType": "application/json"}
    if accept:
        kwargs["accept"] = accept
    try:
        out = client(validate).invoke_agent_runtime(**kwargs)
        return {"ok": {"body": out["response"].read().decode(), "contentType": out["contentType"],
                       "sessionId": out.get("runtimeSessionId"), "status": out.get("statusCode")}}
    except botocore.exceptions.ParamValidationError as exc:
        return {"error": {"code": "ParamValidationError", "message": str(exc), "sent": False}}
    except botocore.exceptions.ClientError as exc:
        return {"error": {"code": exc.response["Error"]["Code"], "message": exc.response["Error"].get("Message"),
                          "status": exc.response["ResponseMetadata"]["HTTPStatusCode"], "sent": True}}


def main():
    """Prints the outcomes."""
    report = {"session33": invoke("s" * 33), "session32": invoke("s" * 32),
              "session32Sent": invoke("s" * 32, validate=False),
              "streamed": invoke("t" * 40, accept="text/event-stream")}
    print(json.dumps(report))


if __name__ == "__main__":
    main()
