"""shared: the agent's calls of its two cloud services, as the course's shared module writes them.

The small model sits on a SageMaker endpoint and is called through
SageMaker Runtime (invoke_endpoint_chat, invoke_endpoint_generation,
stream_endpoint_chat); the reasoning model is a Bedrock model called through
Bedrock Runtime by Strands' BedrockModel (reasoning_model). Nothing here
knows about switchyard: pointed at a local switchyard with the SDK's own
variables (AWS_ENDPOINT_URL_SAGEMAKER_RUNTIME, AWS_ENDPOINT_URL_BEDROCK_RUNTIME)
and any credentials, the same code runs on one machine.

Request shapes (the endpoint's two schemas):

* chat: {"messages": [{"role": "system", ...}, {"role": "user", ...}],
  "max_tokens": N, "temperature": T}. max_new_tokens belongs to the
  generation schema; inside a chat request the server ignores it, so these
  functions never send it.
* generation: {"inputs": "<text>", "parameters": {"max_new_tokens": N, ...}}.
"""

# pylint: disable=fixme  # "TODO verify" marks values that change quickly (issue 25)

import json
import logging
import os
import sys

import boto3

log = logging.getLogger("agent.shared")

# The inference-profile prefixes of Bedrock's cross-region profiles. Current
# reasoning models are mostly reachable only through one. TODO verify: the
# geographies Bedrock offers change.
PROFILE_PREFIXES = ("us.", "eu.", "apac.", "global.")

# The chat schema's defaults for a tool call: the course's limits are 256
# tokens (extraction, classification) or 512 (summarization, domain QA).
DEFAULT_MAX_TOKENS = 256
TOOL_TEMPERATURE = 0.1


class EndpointError(RuntimeError):
    """EndpointError is an endpoint answer that holds no text."""


def region():
    """Returns the endpoint's region: CLOUD_REGION, else AWS_REGION."""
    return os.environ.get("CLOUD_REGION") or os.environ.get("AWS_REGION") or os.environ.get("AWS_DEFAULT_REGION")


def sagemaker_runtime():
    """Returns a SageMaker Runtime client (the SDK's own endpoint variable applies)."""
    return boto3.client("sagemaker-runtime", region_name=region())


def chat_body(system_prompt, text, max_tokens=DEFAULT_MAX_TOKENS, temperature=TOOL_TEMPERATURE, stream=False):
    """Returns the chat-schema body of one tool call; never max_new_tokens."""
    body = {"messages": [{"role": "system", "content": system_prompt}, {"role": "user", "content": text}],
            "max_tokens": max_tokens, "temperature": temperature}
    if stream:
        body["stream"] = True
    return body


def _invoke(endpoint, body, target_model=None, client=None):
    kwargs = {"EndpointName": endpoint, "ContentType": "application/json", "Accept": "application/json",
              "Body": json.dumps(body)}
    if target_model:
        kwargs["TargetModel"] = target_model
    out = (client or sagemaker_runtime()).invoke_endpoint(**kwargs)
    return json.loads(out["Body"].read())


def answer_text(answer):
    """Returns the text of an endpoint's answer: an OpenAI chat.completion's, or generated_text."""
    if isinstance(answer, list) and len(answer) == 1:
        answer = answer[0]
    if isinstance(answer, dict):
        choices = answer.get("choices")
        if isinstance(choices, list) and choices:
            content = (choices[0].get("message") or {}).get("content")
            if isinstance(content, str):
                return content
        if isinstance(answer.get("generated_text"), str):
            return answer["generated_text"]
    raise EndpointError("the endpoint's answer holds no text: %s" % json.dumps(answer)[:300])


def invoke_endpoint_chat(endpoint, system_prompt, text, max_tokens=DEFAULT_MAX_TOKENS,
                         temperature=TOOL_TEMPERATURE, target_model=None, client=None):
    """Calls the small model once in the chat schema and returns its text."""
    return answer_text(_invoke(endpoint, chat_body(system_prompt, text, max_tokens, temperature),
                               target_model, client))


def invoke_endpoint_generation(endpoint, inputs, max_new_tokens=DEFAULT_MAX_TOKENS, temperature=None,
                               target_model=None, client=None):
    """Calls the small model once in the generation schema (inputs, parameters.max_new_tokens)."""
    parameters = {"max_new_tokens": max_new_tokens}
    if temperature is not None:
        parameters["temperature"] = temperature
    return answer_text(_invoke(endpoint, {"inputs": inputs, "parameters": parameters}, target_model, client))


def stream_endpoint_chat(endpoint, system_prompt, text, max_tokens=DEFAULT_MAX_TOKENS,
                         temperature=TOOL_TEMPERATURE, client=None):
    """Yields the small model's text as it streams (InvokeEndpointWithResponseStream).

    The operation has no TargetModel: the endpoint name picks the model. The
    payload parts carry JSON lines, each an OpenAI chat.completion.chunk
    (choices[0].delta.content) or a token line ({"token": {"text"}}), with or
    without a leading "data: "; a line may be cut across parts.
    """
    out = (client or sagemaker_runtime()).invoke_endpoint_with_response_stream(
        EndpointName=endpoint, ContentType="application/json", Accept="application/json",
        Body=json.dumps(chat_body(system_prompt, text, max_tokens, temperature, stream=True)))
    pending = b""
    for event in out["Body"]:
        pending += event.get("PayloadPart", {}).get("Bytes", b"")
        lines = pending.split(b"\n")
        pending = lines.pop()
        for line in lines:
            piece = _stream_text(line)
            if piece:
                yield piece
    piece = _stream_text(pending)
    if piece:
        yield piece


def _stream_text(line):
    line = line.strip()
    if line.startswith(b"data:"):
        line = line[5:].strip()
    if not line or line == b"[DONE]":
        return ""
    event = json.loads(line)
    if event.get("error"):
        raise EndpointError("the stream ended with an error: %s" % json.dumps(event["error"]))
    choices = event.get("choices")
    if choices:
        return (choices[0].get("delta") or {}).get("content") or ""
    token = event.get("token")
    if isinstance(token, dict):
        return token.get("text") or ""
    return ""


def reasoning_model_id():
    """Returns REASONING_MODEL_ID; exits at once (status 1) naming it when it is unset."""
    model_id = os.environ.get("REASONING_MODEL_ID", "").strip()
    if not model_id:
        sys.exit("REASONING_MODEL_ID is not set: name the reasoning model (with its inference-profile "
                 "prefix, e.g. us.<model id>); it is never built in")
    if not model_id.startswith(PROFILE_PREFIXES) and not model_id.startswith("arn:"):
        log.warning("REASONING_MODEL_ID %s has no inference-profile prefix (%s): current reasoning models "
                    "are mostly reachable only through a cross-region inference profile, and the call may "
                    "be rejected", model_id, ", ".join(PROFILE_PREFIXES))
    return model_id


def reasoning_model():
    """Returns the Strands BedrockModel of the reasoning model (converse_stream by default)."""
    from strands.models.bedrock import BedrockModel  # pylint: disable=import-outside-toplevel

    return BedrockModel(model_id=reasoning_model_id(),
                        region_name=os.environ.get("REASONING_REGION") or region())
