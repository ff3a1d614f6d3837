"""A DJL-style handler that lets the end-to-end tests watch the server.

Every request it sees is recorded: its x-probe-tag header is appended to
seen.log in the model folder (the worker's working directory) before
anything else happens, so a test can tell which requests reached a worker
and in what order. A request with an x-probe-gate header holds the worker
until a file of that name appears in the model folder, which lets a test
keep the only worker busy while it queues more requests. A request with an
x-probe-fail header makes the handler raise (the worker answers 424).

Each answer is JSON: the model's probe_name (option.probe_name in
serving.properties, else the folder's name), the request's tag, the size of
the batch it travelled in, the number of the handler call that answered it
(one call per batch, counted per worker process) and the worker's pid.
"""

import os
import time

from djl_python import Input, Output

SEEN = "seen.log"
GATE_LIMIT = 120.0  # seconds a gated request waits for its file at most
POLL = 0.01

STATE = {"name": None, "calls": 0}  # the model's name, and the handler calls so far


def handle(inputs: Input):
    """Takes the model's name at initialization, then answers each request with its tag, batch and pid."""
    if inputs.is_empty():
        STATE["name"] = inputs.get_property("probe_name") or os.path.basename(os.getcwd())
        return None
    STATE["calls"] += 1
    items = inputs.get_batches()
    for item in items:
        _record(item.get_property("x-probe-tag") or "")
    for item in items:
        _hold(item.get_property("x-probe-gate"))
    for item in items:
        if item.get_property("x-probe-fail"):
            raise ValueError("probe: asked to fail")
    out = Output()
    for i, item in enumerate(items):
        answer = {
            "model": STATE["name"],
            "tag": item.get_property("x-probe-tag") or "",
            "batch_size": len(items),
            "call": STATE["calls"],
            "pid": os.getpid(),
        }
        if inputs.is_batch():
            out.add_as_json(answer, batch_index=i)
        else:
            out.add_as_json(answer)
    out.add_property("Content-Type", "application/json")
    return out


def _record(tag):
    """Appends one line to seen.log and makes it visible to readers at once."""
    with open(SEEN, "a", encoding="utf-8") as f:
        f.write(tag + "\n")


def _hold(gate):
    """Waits until the gate file exists (a bounded wait)."""
    if not gate:
        return
    gate = os.path.basename(gate)
    deadline = time.monotonic() + GATE_LIMIT
    while not os.path.exists(gate) and time.monotonic() < deadline:
        time.sleep(POLL)
