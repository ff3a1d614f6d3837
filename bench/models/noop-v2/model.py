"""A no-op numeric model for the Open Inference Protocol benchmark
(bench/bench_v2.sh).

A DJL Serving handler that does no work: every request, alone or in a
dynamic batch, whatever its route and body, is answered with the same
NDList of one FP32 tensor, OUTPUT0 = [0.0], encoded once at load. Through
POST /v2/models/noop-v2/infer the front-end turns it into an inference
response; through /invocations it goes back as it is. The difference
between the two routes is therefore the front-end's v2 parsing and
encoding.
"""

# The no-op models answer batches alike (bench/models/noop-b8).
# pylint: disable=duplicate-code

import json

import numpy as np

from djl_python import Input, Output
from djl_python.np_util import to_nd_list

INPUTS = [{"name": "INPUT0", "datatype": "FP32", "shape": [-1, -1]}]
OUTPUTS = [{"name": "OUTPUT0", "datatype": "FP32", "shape": [-1]}]
BODY = to_nd_list([np.zeros(1, dtype=np.float32)])


def handle(inputs: Input):
    """Answers BODY per request: once, or once per item of a dynamic batch."""
    outputs = Output()
    if inputs.is_empty():
        # The initialization call: declare the tensors.
        outputs.add_property("tensor_inputs", json.dumps(INPUTS))
        outputs.add_property("tensor_outputs", json.dumps(OUTPUTS))
        return outputs
    if inputs.is_batch():
        for i in range(inputs.get_batch_size()):
            outputs.add(BODY, batch_index=i)
    else:
        outputs.add(BODY)
    outputs.add_property("content-type", "tensor/ndlist")
    return outputs
