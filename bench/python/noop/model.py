"""A DJL-style handler that does no work: the runtime's own cost, measured.

It answers every request with a two-byte body, and a dynamic batch with one
such item per request (keyed batch_<i>.data).
"""

from djl_python import Input, Output

BODY = b"ok"


def handle(inputs: Input) -> Output:
    """Answers b"ok" per request: once, or once per item of a dynamic batch."""
    if inputs.is_empty():
        return None
    out = Output()
    if not inputs.is_batch():
        return out.add(BODY)
    for i in range(inputs.get_batch_size()):
        out.add(BODY, batch_index=i)
    return out
