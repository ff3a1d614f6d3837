"""boto3_runtime.py calls switchyard's AWS runtime APIs with current boto3, untouched but for its endpoint.

    python boto3_runtime.py <base url, e.g. http://127.0.0.1:8080>

The server serves langid, the toolcaller fixture (as "toolcaller") and more
models, so that an endpoint naming none of them is ambiguous. Each call's
outcome is one key of the JSON object printed: {"ok": ...} or {"error":
{"code", "status", "message", ...}}; e2e/agent_python_test.go checks them.

* invoke_endpoint on langid, with TargetModel and without;
* invoke_endpoint_with_response_stream on the toolcaller (an echo), read to
  the end: its parts, each part's bytes;
* converse, and converse_stream with toolConfig read to the end;
* the seed's error row: a chat template rendered locally and sent as a raw
  string in inputs to a chat model;
* the response stream on an endpoint that names no model.
"""

import json
import sys

import boto3
import botocore
from botocore.config import Config

GERMAN = "Guten Morgen, wie geht es dir heute? Ich hoffe, du hast gut geschlafen."
TOOL = {"toolSpec": {"name": "classify_language", "description": "Names the language of a text.",
                     "inputSchema": {"json": {"type": "object", "properties": {"text": {"type": "string"}},
                                              "required": ["text"]}}}}
RENDERED = ("<|im_start|>system\nName the language of the user's text.<|im_end|>\n"
            "<|im_start|>user\n" + GERMAN + "<|im_end|>\n<|im_start|>assistant\n")


def outcome(fn):
    """Returns {"ok": fn()} or {"error": ...} with the AWS error's code, status and message."""
    try:
        return {"ok": fn()}
    except botocore.exceptions.EventStreamError as exc:
        return {"error": {"code": exc.response.get("Error", {}).get("Code"), "message": str(exc), "stream": True}}
    except botocore.exceptions.ClientError as exc:
        err = exc.response.get("Error", {})
        return {"error": {"code": err.get("Code"), "message": err.get("Message"),
                          "status": exc.response["ResponseMetadata"]["HTTPStatusCode"],
                          "originalStatusCode": exc.response.get("OriginalStatusCode"),
                          "originalMessage": exc.response.get("OriginalMessage")}}


def main(base):
    """Calls every operation and prints the outcomes."""
    local = {"endpoint_url": base, "region_name": "us-east-1", "aws_access_key_id": "AKIDLOCAL",
             "aws_secret_access_key": "local-secret", "config": Config(retries={"max_attempts": 1})}
    smr = boto3.client("sagemaker-runtime", **local)
    brt = boto3.client("bedrock-runtime", **local)
    body = json.dumps({"inputs": GERMAN})
    report = {"versions": {"boto3": boto3.__version__, "botocore": botocore.__version__}}

    def invoke(**kwargs):
        out = smr.invoke_endpoint(Body=body, ContentType="application/json", **kwargs)
        return {"body": out["Body"].read().decode(), "variant": out.get("InvokedProductionVariant")}

    report["invokeTarget"] = outcome(lambda: invoke(EndpointName="my-endpoint", TargetModel="langid.tar.gz"))
    report["invokeNamed"] = outcome(lambda: invoke(EndpointName="langid"))

    def stream(endpoint):
        out = smr.invoke_endpoint_with_response_stream(
            EndpointName=endpoint, ContentType="application/json", Accept="application/json",
            Body=json.dumps({"messages": [{"role": "user", "content": GERMAN}], "max_tokens": 64, "stream": True}))
        parts = [event["PayloadPart"]["Bytes"].decode() for event in out["Body"] if "PayloadPart" in event]
        return {"parts": parts, "contentType": out.get("ContentType")}

    report["stream"] = outcome(lambda: stream("toolcaller"))
    report["streamAmbiguous"] = outcome(lambda: stream("my-endpoint"))

    def converse():
        out = brt.converse(modelId="us.toolcaller", messages=[{"role": "user", "content": [{"text": GERMAN}]}],
                           inferenceConfig={"maxTokens": 64, "temperature": 0.1})
        return {"text": out["output"]["message"]["content"][0]["text"], "stopReason": out["stopReason"],
                "usage": out["usage"]}

    report["converse"] = outcome(converse)

    def converse_stream():
        out = brt.converse_stream(modelId="us.toolcaller", messages=[{"role": "user", "content": [{"text": GERMAN}]}],
                                  toolConfig={"tools": [TOOL]}, inferenceConfig={"maxTokens": 64})
        events, tool, args, stop = [], None, "", None
        for event in out["stream"]:
            name = next(iter(event))
            events.append(name)
            start = event.get("contentBlockStart", {}).get("start", {}).get("toolUse")
            if start:
                tool = start["name"]
            args += event.get("contentBlockDelta", {}).get("delta", {}).get("toolUse", {}).get("input", "")
            if name == "messageStop":
                stop = event[name]["stopReason"]
        return {"events": events, "tool": tool, "input": json.loads(args), "stopReason": stop}

    report["converseStream"] = outcome(converse_stream)
    report["rawInputs"] = outcome(lambda: json.loads(smr.invoke_endpoint(
        EndpointName="toolcaller", ContentType="application/json",
        Body=json.dumps({"inputs": RENDERED, "parameters": {"max_new_tokens": 256}}))["Body"].read()))
    print(json.dumps(report))


if __name__ == "__main__":
    main(sys.argv[1])
