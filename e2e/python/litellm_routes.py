"""litellm_routes.py calls switchyard through LiteLLM's completion(), on its two AWS routes.

    AWS_BEDROCK_RUNTIME_ENDPOINT=<base url> python litellm_routes.py <base url> <model> <endpoint>

* bedrock/converse/<model>: Bedrock Runtime's Converse (ConverseStream when
  streamed). LiteLLM does not read AWS_ENDPOINT_URL_BEDROCK_RUNTIME; it
  takes AWS_BEDROCK_RUNTIME_ENDPOINT (or aws_bedrock_runtime_endpoint=),
  the base URL, to which it adds /model/<id>/converse[-stream]; this script
  leaves it to the variable.
* sagemaker_chat/<endpoint>: SageMaker Runtime's InvokeEndpoint with an
  OpenAI chat body (InvokeEndpointWithResponseStream when streamed).
  sagemaker_base_url= replaces the whole URL, for both kinds of call, so a
  whole call needs <base>/endpoints/<endpoint>/invocations and a streamed
  one <base>/endpoints/<endpoint>/invocations-response-stream.

Prints one JSON object: per route and mode, {"ok": {"text", "finish"}} or
{"error"}.
"""

import json
import os
import sys
from importlib import metadata

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")  # no fetch of the price list

import litellm  # noqa: E402  pylint: disable=wrong-import-position

litellm.suppress_debug_info = True  # its hints go to standard output, which carries the report

QUESTION = "Guten Morgen, wie geht es dir?"


def run(stream, **kwargs):
    """Returns {"ok": {"text", "finish"}} for one completion() call, or {"error"}."""
    try:
        out = litellm.completion(messages=[{"role": "user", "content": QUESTION}], max_tokens=64,
                                 temperature=0.1, stream=stream, aws_access_key_id="local",
                                 aws_secret_access_key="local", aws_region_name="us-east-1", **kwargs)
        if not stream:
            choice = out.choices[0]
            return {"ok": {"text": choice.message.content, "finish": choice.finish_reason}}
        text, finish = "", None
        for chunk in out:
            if chunk.choices:
                text += chunk.choices[0].delta.content or ""
                finish = chunk.choices[0].finish_reason or finish
        return {"ok": {"text": text, "finish": finish}}
    except Exception as exc:  # pylint: disable=broad-exception-caught
        return {"error": "%s: %s" % (type(exc).__name__, exc)}


def main(base, model, endpoint):
    """Calls both routes, whole and streamed."""
    report = {"version": metadata.version("litellm")}
    for stream in (False, True):
        mode = "streamed" if stream else "whole"
        report["bedrock " + mode] = run(stream, model="bedrock/converse/" + model)
        route = "invocations-response-stream" if stream else "invocations"
        report["sagemaker " + mode] = run(stream, model="sagemaker_chat/" + endpoint,
                                          sagemaker_base_url="%s/endpoints/%s/%s" % (base, endpoint, route))
    print(json.dumps(report))


if __name__ == "__main__":
    main(*sys.argv[1:4])
