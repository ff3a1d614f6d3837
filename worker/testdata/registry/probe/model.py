"""A model for the registry's tests; files in its folder change how it loads.

At import: a file BROKEN makes the import fail (a traceback on stderr); a
file SINGLE is locked, so that a second worker of the folder fails to load
while the first one lives; a file GATE holds the import until a file OPEN
appears (at most two minutes), so that a test can keep the model loading.

Each request comes back with its body and the worker's pid (x-pid). The
property action picks something else: sleep (for the property seconds),
wait (until a file named by the property gate appears in the folder, at
most two minutes), crash (the process exits with status 3). When a file SEEN exists, every
body that reaches the handler is appended to it, one per line. Options
option.declare_<key>=<value> become properties of the initialization reply
(how a generative handler declares its capabilities).
"""

import fcntl
import os
import time

from djl_python import Input, Output

_HERE = os.path.dirname(os.path.abspath(__file__))

if os.path.exists(os.path.join(_HERE, "BROKEN")):
    raise RuntimeError("probe: the BROKEN marker is present")

if os.path.exists(os.path.join(_HERE, "GATE")):
    _deadline = time.monotonic() + 120
    while not os.path.exists(os.path.join(_HERE, "OPEN")) and time.monotonic() < _deadline:
        time.sleep(0.01)

if os.path.exists(os.path.join(_HERE, "SINGLE")):
    # Held open, and so locked, for as long as the worker runs.
    _LOCK = open(os.path.join(_HERE, "SINGLE"), "a", encoding="utf-8")  # pylint: disable=consider-using-with
    try:
        fcntl.flock(_LOCK, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError as exc:
        raise RuntimeError("probe: another worker holds SINGLE") from exc


def handle(inputs: Input):
    """Declares the probe's properties at initialization, then answers requests."""
    if inputs.is_empty():
        return _declare(inputs.get_properties())
    if inputs.is_batch():
        return _batch(inputs.get_batches())
    body = inputs.get_as_bytes()
    _record(body)
    action = inputs.get_property("action")
    if action == "sleep":
        time.sleep(float(inputs.get_property("seconds") or "3600"))
    elif action == "wait":
        _wait_for(inputs.get_property("gate") or "OPEN")
    elif action == "crash":
        os._exit(3)
    out = Output()
    out.add_property("x-pid", str(os.getpid()))
    return out.add(body)


def _declare(props):
    """Answers the initialization call: each option.declare_<key> becomes reply property <key>."""
    declared = {k[len("declare_"):]: v for k, v in props.items() if k.startswith("declare_")}
    if not declared:
        return None
    out = Output()
    for key, value in declared.items():
        out.add_property(key, value)
    return out


def _batch(items):
    out = Output()
    for i, item in enumerate(items):
        body = item.get_as_bytes()
        _record(body)
        out.add(body, batch_index=i)
        out.add_property("batch_%03d.x-pid" % i, str(os.getpid()))
    return out


def _wait_for(name):
    """Waits until a file name appears in the model's folder (two minutes at most)."""
    path = os.path.join(_HERE, os.path.basename(name))
    deadline = time.monotonic() + 120
    while not os.path.exists(path) and time.monotonic() < deadline:
        time.sleep(0.01)


def _record(body):
    path = os.path.join(_HERE, "SEEN")
    if os.path.exists(path):
        with open(path, "ab") as f:
            f.write(body + b"\n")
