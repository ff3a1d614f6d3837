"""Drives switchyard with tritonclient.http, untouched, and prints what it saw as JSON.

    python tritonclient_v2.py HOST:PORT NUMERIC TEXT SPARE

HOST:PORT serves both route tables (KServe's deployment: one port).
NUMERIC is the tensorsum fixture (FP32 INPUT0 -> SUM, SCALED, BATCH), TEXT
a text-classification model of the built-in transformers handler (a BYTES
input "text" -> a BYTES output "output" of JSON results), SPARE a folder of
the model store that is not loaded. The Go test (e2e/v2_test.go) checks the
values; this script only records them, calling every client method the
issue names: is_server_live, is_server_ready, is_model_ready,
get_model_metadata, get_model_repository_index, load_model, unload_model,
and infer with JSON and with binary data.
"""

import json
import sys

import numpy as np
import tritonclient.http as httpclient
from tritonclient.utils import InferenceServerException

TEXTS = ["the team won the match", "heavy rain is coming tomorrow", "the soup was delicious"]


def numeric(client, model, binary):
    """Runs one infer on the numeric model; returns its outputs as lists."""
    x = np.array([[1, 2, 3], [4, 5, 6]], dtype=np.float32)
    inp = httpclient.InferInput("INPUT0", list(x.shape), "FP32")
    inp.set_data_from_numpy(x, binary_data=binary)
    names = ("SUM", "SCALED", "BATCH")
    outs = [httpclient.InferRequestedOutput(n, binary_data=binary) for n in names]
    result = client.infer(model, [inp], outputs=outs, request_id="r-%s" % binary, parameters={"scale": 0.5})
    got = {n: result.as_numpy(n).tolist() for n in names}
    got["dtypes"] = {n: str(result.as_numpy(n).dtype) for n in names}
    got["id"] = result.get_response()["id"]
    got["model_version"] = result.get_response()["model_version"]
    return got


def numeric_default_outputs(client, model):
    """Infers without naming outputs: tritonclient asks for every output as binary data."""
    x = np.arange(4, dtype=np.float32).reshape(1, 4)
    inp = httpclient.InferInput("INPUT0", [1, 4], "FP32")
    inp.set_data_from_numpy(x)
    result = client.infer(model, [inp], model_version="1")
    return {o["name"]: result.as_numpy(o["name"]).tolist() for o in result.get_response()["outputs"]}


def text(client, model, binary):
    """Runs one infer on the text model; returns each input's result, decoded."""
    data = np.array([t.encode() for t in TEXTS], dtype=np.object_)
    inp = httpclient.InferInput("text", [len(TEXTS)], "BYTES")
    inp.set_data_from_numpy(data, binary_data=binary)
    result = client.infer(model, [inp], outputs=[httpclient.InferRequestedOutput("output", binary_data=binary)])
    out = result.as_numpy("output")
    return {"shape": list(out.shape), "results": [json.loads(v) for v in out.tolist()]}


def failure(call):
    """Returns the status and message of a call that must fail."""
    try:
        call()
    except InferenceServerException as exc:
        return {"status": exc.status(), "message": exc.message()}
    return {"status": None, "message": "it did not fail"}


def bad_inputs(client, model):
    """Sends inputs the numeric model refuses."""
    def infer(name, datatype, shape, data):
        inp = httpclient.InferInput(name, shape, datatype)
        inp.set_data_from_numpy(data, binary_data=False)
        return client.infer(model, [inp])

    return {
        "wrong_datatype": failure(lambda: infer("INPUT0", "FP64", [1, 2], np.ones((1, 2), dtype=np.float64))),
        "unknown_input": failure(lambda: infer("INPUT9", "FP32", [1, 2], np.ones((1, 2), dtype=np.float32))),
    }


def main():
    """Drives the server named by the arguments and prints the report as JSON."""
    url, num, txt, spare = sys.argv[1:5]
    client = httpclient.InferenceServerClient(url=url)
    report = {
        "live": client.is_server_live(),
        "ready": client.is_server_ready(),
        "server_metadata": client.get_server_metadata(),
        "numeric_ready": client.is_model_ready(num),
        "numeric_ready_v1": client.is_model_ready(num, model_version="1"),
        "numeric_ready_v2": client.is_model_ready(num, model_version="2"),
        "numeric_metadata": client.get_model_metadata(num),
        "numeric_json": numeric(client, num, False),
        "numeric_binary": numeric(client, num, True),
        "numeric_default_outputs": numeric_default_outputs(client, num),
        "text_metadata": client.get_model_metadata(txt),
        "text_json": text(client, txt, False),
        "text_binary": text(client, txt, True),
        "bad_inputs": bad_inputs(client, num),
        "index_before": client.get_model_repository_index(),
        "spare_ready_before": client.is_model_ready(spare),
    }
    client.load_model(spare)
    report["spare_ready_loaded"] = client.is_model_ready(spare)
    report["spare_infer"] = numeric(client, spare, True)
    report["index_loaded"] = client.get_model_repository_index()
    client.unload_model(spare)
    report["spare_ready_unloaded"] = client.is_model_ready(spare)
    report["index_unloaded"] = client.get_model_repository_index()
    report["load_missing"] = failure(lambda: client.load_model("no-such-folder"))
    client.close()
    json.dump(report, sys.stdout)


if __name__ == "__main__":
    main()
