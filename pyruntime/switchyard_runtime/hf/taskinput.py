"""The request body of the built-in handler's non-generative tasks, as DJL reads it.

* application/json (or no Content-Type): {"inputs": <text> | [<text>, ...] |
  {...}, "parameters": {...}}; without "inputs", the object itself (less
  "parameters") is the input, as DJL's question-answering requests send
  {"question", "context"}.
* text/plain: the body is one text input.
* tensor/ndlist: an Open Inference Protocol request, its text in BYTES
  tensors (tensors.py); its answer is a tensor too.
* any other type (application/octet-stream, which some clients send by
  default, or curl's form type): read as JSON when it is a JSON object,
  else refused.

A request holds one input or a list of them; its answer is a list with one
result per input (DJL slices one pipeline call over the whole batch, so a
single input is answered as a list of one too). A body that does not fit
raises RequestError (400) naming what is wrong.
"""

import json

from ..generative.schemas import RequestError, decode_body
from . import tensors

# What one input of each task must be.
PAIR_KEYS = ("text", "text_pair")
QA_KEYS = ("question", "context")


class TaskRequest:
    """TaskRequest is one request's inputs and parameters; key groups requests that share parameters.

    shape is the text tensor's shape of a tensor request, which its answer
    takes; None for a JSON or text request.
    """

    __slots__ = ("inputs", "parameters", "key", "shape")

    def __init__(self, inputs, parameters, shape=None):
        self.inputs = inputs
        self.parameters = parameters
        self.key = json.dumps(parameters, sort_keys=True, separators=(",", ":"))
        self.shape = shape


def content_type(inputs):
    """Returns the request's media type, lower case, without parameters ("" when not sent)."""
    return (inputs.get_property("content-type") or "").split(";")[0].strip().lower()


def parse(inputs, task):
    """Returns the TaskRequest of one request for task; raises RequestError for a bad body."""
    kind = content_type(inputs)
    if kind == tensors.CONTENT_TYPE:
        items, params, shape = tensors.parse(inputs, task)
        return TaskRequest(check_inputs(items, task), params, shape)
    if kind.startswith("text/"):
        return TaskRequest(check_inputs([inputs.get_as_string()], task), {})
    try:
        obj = decode_body(inputs.get_as_bytes())
    except RequestError as exc:
        if kind and "json" not in kind:
            raise RequestError("Content-Type %s is not served by the %s task: send application/json or "
                               "text/plain" % (kind, task)) from exc
        raise
    params = obj.get("parameters")
    if params is None:
        params = {}
    if not isinstance(params, dict):
        raise RequestError("parameters must be an object", param="parameters")
    if "inputs" in obj:
        value = obj["inputs"]
    else:
        value = {k: v for k, v in obj.items() if k != "parameters"}
    items = value if isinstance(value, list) else [value]
    return TaskRequest(check_inputs(items, task), params)


def check_inputs(items, task):
    """Checks each input for task and returns the list."""
    if not items:
        raise RequestError("inputs must not be empty", param="inputs")
    for i, item in enumerate(items):
        where = "inputs" if len(items) == 1 else "inputs[%d]" % i
        if task == "question-answering":
            _qa_input(item, where)
        elif isinstance(item, dict) and task == "text-classification":
            _pair_input(item, where)
        elif not isinstance(item, str):
            raise RequestError("%s must be a string for the %s task, not %s" % (where, task, _kind(item)),
                               param="inputs")
    return items


def _qa_input(item, where):
    if not isinstance(item, dict) or not all(isinstance(item.get(k), str) for k in QA_KEYS):
        raise RequestError("%s must be an object with the strings question and context" % where, param="inputs")


def _pair_input(item, where):
    if not isinstance(item.get("text"), str) or not isinstance(item.get("text_pair", ""), str):
        raise RequestError("%s must be a string or an object with the strings text and text_pair" % where,
                           param="inputs")


def _kind(value):
    if value is None:
        return "null"
    return {dict: "an object", list: "a list", bool: "a boolean", int: "a number",
            float: "a number"}.get(type(value), type(value).__name__)
