"""An echo model for switchyard's memory benchmark (bench/membench).

A DJL Serving handler that answers every request with its body, byte for
byte, as application/octet-stream. A large request therefore crosses the
front-end twice: once on its way to the worker and once on its way back,
which is what the benchmark wants to see the memory of.
"""

from djl_python import Input, Output


def handle(inputs: Input):
    """Answers each request with its own body."""
    if inputs.is_empty():
        # The initialization call: nothing to load.
        return None
    outputs = Output()
    outputs.add(inputs.get_as_bytes())
    outputs.add_property("Content-Type", "application/octet-stream")
    return outputs
