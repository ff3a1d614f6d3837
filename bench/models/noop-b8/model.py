"""A no-op model for switchyard's benchmark (bench/bench.sh).

A DJL Serving handler that does no work: every request, alone or in a
dynamic batch, is answered with the two bytes "ok". What the benchmark
measures is therefore the server's own cost per request.
"""

# Each model folder stands alone, so noop-b1 holds this same handler.
# pylint: disable=duplicate-code

from djl_python import Input, Output

BODY = b"ok"


def handle(inputs: Input):
    """Answers b"ok" per request: once, or once per item of a dynamic batch."""
    if inputs.is_empty():
        # The initialization call: nothing to load.
        return None
    outputs = Output()
    if inputs.is_batch():
        for i in range(inputs.get_batch_size()):
            outputs.add(BODY, batch_index=i)
    else:
        outputs.add(BODY)
    outputs.add_property("Content-Type", "text/plain")
    return outputs
