"""A DJL-style echo handler for switchyard's worker integration tests.

A request comes back with its body and every property as x-echo-<name>. The
property "action" picks a failure instead: bad (ValueError), oom
(MemoryError), none (returns None), hang (sleeps), exit (kills the process).
A dynamic batch is answered per request, and each answer says how many
requests the batch held (x-batch-size). Every answer names the worker's
process (x-pid).
"""

import os
import time

from djl_python import Input, Output


def handle(inputs: Input):
    """Fails, hangs or answers nothing as the action property asks; else echoes the request."""
    if inputs.is_empty():
        return None
    if inputs.is_batch():
        return _batch(inputs)
    action = inputs.get_property("action")
    if action == "bad":
        raise ValueError("bad")
    if action == "oom":
        raise MemoryError("no room")
    if action == "none":
        return None
    if action == "hang":
        print("echo: hanging", flush=True)
        time.sleep(3600)
    out = Output()
    for key, value in inputs.get_properties().items():
        out.add_property("x-echo-" + key, value)
    out.add_property("x-pid", str(os.getpid()))
    return out.add(inputs.get_as_bytes())


def _batch(inputs):
    items = inputs.get_batches()
    out = Output()
    for i, item in enumerate(items):
        out.add(item.get_as_bytes(), batch_index=i)
        out.add_property("batch_%03d.x-batch-size" % i, str(len(items)))
    return out
