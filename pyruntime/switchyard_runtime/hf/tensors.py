"""The built-in handler's non-generative tasks over the Open Inference Protocol.

The front-end hands a v2 inference request to the worker as DJL's NDList
(content-type tensor/ndlist), its parameters object as the content item
"parameters". The text of a task comes in BYTES tensors (numpy object
arrays of bytes, UTF-8):

* question-answering: "question" and "context", of the same shape; one
  input per element pair;
* text-classification: "text", and "text_pair" for pairs;
* every other task: "text" (or the request's only BYTES tensor).

The answer is one BYTES tensor, "output", of the text tensor's shape: each
element the JSON of that input's result, as the JSON answer would have it.
The handler declares this in its answer to the initialization call
(signature), so that GET /v2/models/{m} shows it.
"""

import json

from ..djl.outputs import Output, encode_json
from ..generative.schemas import RequestError

CONTENT_TYPE = "tensor/ndlist"
OUTPUT = "output"
PARAMETERS = "parameters"


def signature(task):
    """Returns the init-reply properties that declare the task's tensors."""
    names = ("question", "context") if task == "question-answering" else ("text",)
    inputs = [{"name": name, "datatype": "BYTES", "shape": [-1]} for name in names]
    outputs = [{"name": OUTPUT, "datatype": "BYTES", "shape": [-1]}]
    return {"tensor_inputs": json.dumps(inputs), "tensor_outputs": json.dumps(outputs)}


def parse(inputs, task):
    """Returns (items, parameters, shape) of a tensor request; raises RequestError for a bad one."""
    try:
        arrays = inputs.get_as_ndlist()
    except (ValueError, TypeError) as exc:
        raise RequestError("the request's tensors do not decode: %s" % exc) from exc
    texts = {}
    for name, array in arrays.items():
        if array.dtype == object:
            texts[name] = array
    if task == "question-answering":
        question, context = _named(texts, "question", task), _named(texts, "context", task)
        _same_shape(question, context, "question", "context")
        pairs = zip(_strings(question, "question"), _strings(context, "context"))
        items = [{"question": q, "context": c} for q, c in pairs]
        return items, _parameters(inputs), question.shape
    text = texts.get("text")
    if text is None and len(texts) == 1 and "text_pair" not in texts:
        text = next(iter(texts.values()))
    if text is None:
        raise RequestError("the %s task takes its text in a BYTES input named text" % task, param="inputs")
    items = _strings(text, "text")
    if task == "text-classification" and "text_pair" in texts:
        _same_shape(text, texts["text_pair"], "text", "text_pair")
        items = [{"text": t, "text_pair": p} for t, p in zip(items, _strings(texts["text_pair"], "text_pair"))]
    return items, _parameters(inputs), text.shape


def _named(texts, name, task):
    if name not in texts:
        raise RequestError("the %s task takes a BYTES input named %s" % (task, name), param="inputs")
    return texts[name]


def _same_shape(a, b, name_a, name_b):
    if a.shape != b.shape:
        shapes = (name_a, name_b, list(a.shape), list(b.shape))
        raise RequestError("inputs %s and %s must have one shape, not %s and %s" % shapes, param="inputs")


def _strings(array, name):
    """Returns a BYTES tensor's elements, row-major, as str."""
    out = []
    for i, item in enumerate(array.reshape(-1)):
        try:
            out.append(item.decode("utf-8") if isinstance(item, (bytes, bytearray)) else str(item))
        except UnicodeDecodeError as exc:
            raise RequestError("element %d of input %s is not UTF-8" % (i, name), param="inputs") from exc
    return out


def _parameters(inputs):
    """Returns the request's parameters object ({} without one)."""
    if not inputs.contains_key(PARAMETERS):
        return {}
    try:
        params = inputs.get_as_json(PARAMETERS)
    except ValueError as exc:
        raise RequestError("parameters is not JSON: %s" % exc, param="parameters") from exc
    if not isinstance(params, dict):
        raise RequestError("parameters must be an object", param="parameters")
    return params


def answer(results, shape):
    """Returns the Output of a tensor request: its results as the BYTES tensor output, of the text's shape."""
    import numpy

    out = numpy.empty(len(results), dtype=object)
    out[:] = [encode_json(r) for r in results]
    return Output().add_property("content-type", CONTENT_TYPE).add_as_numpy({OUTPUT: out.reshape(shape)})
