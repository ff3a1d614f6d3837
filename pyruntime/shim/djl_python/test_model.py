"""djl_python.test_model: run a model folder's handler without a server.

The helpers DJL Serving's module of the same name gives handler authors:
requests built from JSON, text, numpy arrays or npz archives
(create_json_request, create_text_request, create_numpy_request,
create_npz_request), a dynamic batch as the front-end sends one
(create_concurrent_batch_request), an Output read back as an Input
(extract_output_as_input, extract_output_as_bytes, _string, _numpy, _npz),
and TestHandler, which loads a handler module the way a worker does and
calls it. As a program:

    python3 -m djl_python.test_model --model-dir DIR [--entry-point model.py]
        [--handler handle] --input FILE_OR_TEXT [KEY=FILE_OR_TEXT ...]
        [--parameters NAME=VALUE ...]

loads DIR's handler, sends it one request made of the inputs (a file's
bytes, or the text itself when no such file exists) and prints the answer.
With switchyard, `PYTHONPATH=$(switchyard pythonpath)` makes this package
importable.
"""

import argparse
import io
import logging
import os
import struct
import sys
import types

from switchyard_runtime import loader
from switchyard_runtime.djl.outputs import encode_json

from .inputs import Input
from .np_util import to_nd_list
from .pair_list import PairList

__all__ = [
    "TestHandler", "create_request", "create_concurrent_batch_request", "create_json_request",
    "create_text_request", "create_3p_request", "create_numpy_request", "create_npz_request",
    "extract_output_as_input", "extract_output_as_bytes", "extract_output_as_numpy",
    "extract_output_as_npz", "extract_output_as_string", "decode_encoded_output_binary",
    "load_properties", "update_properties_with_env_vars", "run",
]

# Content types the command line gives an input file, by its extension.
_FILE_TYPES = {
    ".json": "application/json", ".txt": "text/plain", ".gif": "images/gif", ".png": "images/png",
    ".jpeg": "images/jpeg", ".jpg": "images/jpeg", ".ndlist": "tensor/ndlist", ".npz": "tensor/npz",
}


def _request(content_type, data, key=None):
    """Returns an Input for a CPU worker with one content item."""
    request = Input()
    request.properties["device_id"] = "-1"
    request.properties["content-type"] = content_type
    request.content.add(key=key, value=data)
    return request


def create_json_request(json_data, key=None):
    """Returns a request whose body (content key, default "data") is json_data as JSON."""
    return _request("application/json", encode_json(json_data), key)


def create_text_request(text, key=None):
    """Returns a text/plain request whose body is text."""
    return _request("text/plain", text.encode("utf-8"), key)


def create_3p_request(json_data, stream=False, key=None):
    """Returns a JSON request as SageMaker forwards it (InvokeEndpoint, or its streaming form)."""
    request = create_json_request(json_data, key)
    api = "InvokeEndpointWithResponseStream" if stream else "InvokeEndpoint"
    request.properties["X-Amzn-SageMaker-Forwarded-Api"] = api
    return request


def create_numpy_request(arrays, key=None):
    """Returns a tensor/ndlist request holding arrays (a list of numpy arrays)."""
    return _request("tensor/ndlist", to_nd_list(arrays), key)


def create_npz_request(arrays, key=None):
    """Returns a tensor/npz request holding arrays as an npz archive."""
    import numpy

    archive = io.BytesIO()
    numpy.savez(archive, *arrays)
    return _request("tensor/npz", archive.getvalue(), key)


def create_concurrent_batch_request(inputs, properties=None, serving_properties=None):
    """Returns one Input that carries inputs (dicts) as a dynamic batch.

    Item i's JSON body goes under batch_<iii>_data and its properties (the
    dicts of properties) under batch_<iii>_<name>; serving_properties are
    the batch's own properties, with batch_size set to len(inputs). The
    handler function is serving_properties' "handler", else "handle".
    """
    batch = dict(serving_properties) if serving_properties else {}
    for index, item_props in enumerate(properties or []):
        for name, value in item_props.items():
            batch["batch_%03d_%s" % (index, name)] = value
    content = PairList()
    for index, data in enumerate(inputs):
        content.add("batch_%03d_data" % index, encode_json(data))
    request = Input()
    request.properties = batch
    request.content = content
    request.function_name = batch.get("handler", "handle")
    batch["batch_size"] = len(inputs)
    return request


def extract_output_as_input(outputs):
    """Returns an Input holding outputs' properties and content, to read them with get_as_*."""
    request = Input()
    request.properties = outputs.properties
    request.content = outputs.content
    return request


def extract_output_as_bytes(outputs, key=None):
    """Returns an answer's content item as bytes."""
    return extract_output_as_input(outputs).get_as_bytes(key)


def extract_output_as_numpy(outputs, key=None):
    """Returns an answer's content item (a DJL NDList) as numpy arrays."""
    return extract_output_as_input(outputs).get_as_numpy(key)


def extract_output_as_npz(outputs, key=None):
    """Returns an answer's content item (an npz archive) as numpy arrays."""
    return extract_output_as_input(outputs).get_as_npz(key)


def extract_output_as_string(outputs, key=None):
    """Returns an answer's content item as text."""
    return extract_output_as_input(outputs).get_as_string(key)


def decode_encoded_output_binary(binary):
    """Returns the properties of a binary-encoded rolling-batch answer (int16 count, int32 strings)."""
    (count,) = struct.unpack_from(">h", binary, 0)
    pos, props = 2, {}
    for _ in range(count):
        key, pos = _utf8(binary, pos)
        props[key], pos = _utf8(binary, pos)
    return props


def _utf8(binary, pos):
    (length,) = struct.unpack_from(">i", binary, pos)
    pos += 4
    if length < 0:
        return None, pos
    return bytes(binary[pos:pos + length]).decode("utf-8"), pos + length


def load_properties(properties_dir):
    """Returns a folder's serving.properties as a dict, option. prefixes stripped ({} without one)."""
    path = os.path.join(properties_dir or "", "serving.properties")
    if not properties_dir or not os.path.exists(path):
        return {}
    props = {}
    with open(path, encoding="utf-8") as f:
        for line in f:
            if not line.strip() or line.startswith("#"):
                continue
            key, value = line.strip().split("=", 1)
            key = key.strip()
            props[key[len("option."):] if key.startswith("option.") else key] = value.strip()
    return props


def update_properties_with_env_vars(kwargs):
    """Adds the options the environment sets (OPTION_<KEY>, HF_MODEL_ID) that kwargs lacks."""
    for name, value in os.environ.items():
        if name == "HF_MODEL_ID":
            kwargs.setdefault("model_id", value)
        if name.startswith("OPTION_"):
            key = name[len("OPTION_"):].lower()
            kwargs.setdefault("entryPoint" if key == "entrypoint" else key, value)
    return kwargs


class _Service:
    """_Service calls one function of a loaded handler module, as a worker does."""

    def __init__(self, module, model_dir):
        self.module = module
        self.model_dir = model_dir

    def invoke_handler(self, function_name, inputs):
        """Calls the handler module's function_name with inputs, model_dir set."""
        inputs.properties["model_dir"] = self.model_dir
        return getattr(self.module, function_name)(inputs)


class TestHandler:
    """TestHandler runs a handler without a server.

    entry_point is a handler module, or the name of one (a .py file in
    model_dir, or a dotted module name) that is loaded from model_dir as a
    worker would load it. The serving properties are the environment's
    OPTION_* variables and model_dir's serving.properties; every request
    gets them as properties.
    """

    __test__ = False  # not a unittest case, whatever its name says

    def __init__(self, entry_point, model_dir=None):
        for mpi, torch in (("OMPI_COMM_WORLD_SIZE", "WORLD_SIZE"), ("OMPI_COMM_WORLD_LOCAL_RANK", "LOCAL_RANK"),
                           ("OMPI_COMM_WORLD_RANK", "RANK")):
            if os.environ.get(mpi):
                os.environ[torch] = os.environ[mpi]
        self.serving_properties = update_properties_with_env_vars({})
        self.serving_properties.update(load_properties(model_dir))
        if isinstance(entry_point, types.ModuleType):
            self.service = _Service(entry_point, model_dir)
            service = getattr(entry_point, "_service", None)
            if service is not None and hasattr(service, "initialized"):
                service.initialized = False  # start from a fresh handler, as DJL's tests expect
            return
        model_dir = os.path.abspath(model_dir)
        os.chdir(model_dir)
        self.service = _Service(loader.load_module(model_dir, entry_point), model_dir)

    def inference(self, inputs):
        """Sends inputs to the handler function it names (default handle) and returns the answer.

        The serving properties are added to the request's, except
        batch_size: on a request it marks a dynamic batch, while a model
        folder's batch_size is the front-end's batching setting (DJL copies
        it too, and a batching model then takes every request for a batch).
        """
        for key, value in self.serving_properties.items():
            if key != "batch_size":
                inputs.properties[key] = value
        return self.service.invoke_handler(inputs.get_function_name() or "handle", inputs)

    def inference_batch(self, inputs, properties=None, serving_properties=None):
        """Sends inputs (dicts) as one dynamic batch; see create_concurrent_batch_request."""
        return self.inference(create_concurrent_batch_request(inputs, properties, serving_properties))

    def inference_rolling_batch(self, inputs, properties=None, serving_properties=None):
        """Drives a rolling-batch handler until every request has its last token.

        Each round sends the requests still running as one batch; each reply
        item is a binary-encoded dict whose "data" is appended to that
        request's text and whose "last" says whether it is done. Returns
        {index: text}.
        """
        texts = {index: "" for index in range(len(inputs))}
        running = list(range(len(inputs)))
        while running:
            outputs = self.inference_batch(inputs, properties, serving_properties)
            done = []
            for position, binary in enumerate(extract_output_as_input(outputs).get_content().values):
                reply = decode_encoded_output_binary(binary)
                texts[running[position]] += reply["data"]
                if reply["last"].lower() == "true":
                    done.append(position)
            for position in reversed(done):
                del running[position]
            inputs = [{"inputs": ""} for _ in running]
        return texts


def create_request(input_files, parameters):
    """Returns the request the command line describes.

    Each input is FILE_OR_TEXT or KEY=FILE_OR_TEXT: a file's bytes, or the
    text itself (JSON when it looks like an object) when no such file
    exists. The content type follows the "data" input's (else the first
    input's) file extension. Each parameter NAME=VALUE is a property.
    """
    request = Input()
    request.properties["device_id"] = "-1"
    for parameter in parameters or ():
        name, sep, value = parameter.partition("=")
        if not sep:
            raise ValueError("Invalid model parameter: %s" % parameter)
        request.properties[name] = value
    data_file = None
    for spec in input_files:
        key, sep, value = spec.partition("=")
        if not sep:
            key, value = None, spec
        if data_file is None or key == "data":
            data_file = value
        request.content.add(key=key, value=_input_bytes(request, value))
    kind = _FILE_TYPES.get(os.path.splitext(data_file or "")[1])
    if kind:
        request.properties["content-type"] = kind
    return request


def _input_bytes(request, value):
    if os.path.exists(value):
        with open(value, "rb") as f:
            return f.read()
    looks_json = value.startswith("{") and value.endswith("}")
    request.properties["content-type"] = "application/json" if looks_json else "text/plain"
    return value.encode("utf-8")


def _arguments():
    parser = argparse.ArgumentParser(prog="djl-test-model", description="Test a DJL Python model")
    parser.add_argument("--model-dir", dest="model_dir", help="model folder")
    parser.add_argument("--entry-point", dest="entry_point", default="model.py", help="handler file or module")
    parser.add_argument("--handler", default="handle", help="handler function to call")
    parser.add_argument("--input", nargs="+", default=["input.txt"], help="input files or texts, KEY=... to name them")
    parser.add_argument("--parameters", nargs="+", help="request properties, NAME=VALUE")
    return parser


def run(argv=None):
    """Loads a model folder's handler, sends it one request and prints the answer.

    The first line is DJL's ("output: " and the answer's code, message,
    properties and content types); then each content item follows as text.
    """
    logging.basicConfig(stream=sys.stdout, format="%(message)s", level=logging.INFO)
    args = _arguments().parse_args(argv)
    request = create_request(args.input, args.parameters)
    handler = TestHandler(args.entry_point, args.model_dir)
    request.function_name = args.handler
    outputs = handler.inference(request)
    print("output: " + str(outputs))
    for key, value in getattr(outputs, "content", PairList()).items():
        print("%s: %s" % (key, bytes(value).decode("utf-8", "replace")))


if __name__ == "__main__":
    run()
