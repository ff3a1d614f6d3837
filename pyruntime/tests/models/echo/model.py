"""A test handler with one function per behaviour, picked by the "handler" property."""

import asyncio
import queue
import threading

from djl_python import Input, Output

STATE = {}
_lock = threading.Lock()
GATES = {}  # tracking id -> queue of items to yield (None ends, an exception raises)
CLOSED = {}  # tracking id -> Event set when that request's generator is closed


def gate(tid):
    """Returns the item queue and closed event of a tracking id, creating them once."""
    with _lock:
        if tid not in GATES:
            GATES[tid] = queue.Queue()
            CLOSED[tid] = threading.Event()
        return GATES[tid], CLOSED[tid]


def handle(inputs: Input):
    """Records the initialization properties, then answers each request with its body."""
    if inputs.is_empty():
        STATE["init"] = dict(inputs.get_properties())
        return None
    out = Output().add(inputs.get_as_bytes())
    out.add_property("content-type", inputs.get_property("Content-Type") or "application/octet-stream")
    return out


def batch(inputs: Input):
    """Answers each item of a dynamic batch with its text in upper case."""
    items = inputs.get_batches()
    STATE["batch_sizes"] = STATE.get("batch_sizes", []) + [len(items)]
    out = Output()
    for i, item in enumerate(items):
        out.add(item.get_as_string().upper(), batch_index=i)
        out.add_property("batch_%d.tag" % i, item.get_property("tag"))
    return out


def nothing(_inputs):
    """Returns None (204)."""
    return None


def fail(inputs):
    """Raises ValueError (424)."""
    raise ValueError("bad input: " + inputs.get_as_string())


def oom(inputs):
    """Raises MemoryError (507)."""
    raise MemoryError()


def cuda_oom(inputs):
    """Raises the error CUDA gives when out of memory (507)."""
    raise RuntimeError("CUDA error: out of memory")


def wrong_type(_inputs):
    """Returns a dict, which is not an Output (500)."""
    return {"not": "an Output"}


def stream(_inputs):
    """Streams a str, bytes and a dict."""
    return Output().add_stream_content(["a", b"b", {"c": 1}])


def stream_fail(_inputs):
    """Streams one item, then fails."""
    def gen():
        yield "first"
        raise RuntimeError("generator broke")
    return Output().add_stream_content(gen())


def gated(inputs):
    """Streams the items the test puts into this request's gate."""
    items, closed = gate(inputs.get_property("request_tracking_id"))

    def gen():
        try:
            while True:
                item = items.get()
                if item is None:
                    return
                if isinstance(item, Exception):
                    raise item
                yield item
        finally:
            closed.set()
    return Output().add_property("x-kind", "gated").add_stream_content(gen())


def whole(inputs):
    """Answers whole:<body>."""
    return Output().add("whole:" + inputs.get_as_string())


async def coroutine(inputs):
    """Answers async:<body> from a coroutine."""
    await asyncio.sleep(0)
    return Output().add("async:" + inputs.get_as_string())


async def agen(_inputs):
    """Yields x and y from an async generator."""
    yield "x"
    yield "y"


async def async_hang(inputs):
    """Yields one piece, then waits until canceled."""
    _, closed = gate(inputs.get_property("request_tracking_id"))

    async def pieces():
        try:
            yield "started"
            await asyncio.Event().wait()
        finally:
            closed.set()
    return Output().add_stream_content(pieces())


def finalized(inputs):
    """Answers done and records the body in STATE once the answer is sent."""
    out = Output().add("done")
    return out.finalize(STATE.__setitem__, "finalized", inputs.get_as_string())


def sync_with_async_stream(_inputs):
    """Answers a stream from an async generator, from a plain function."""
    async def pieces():
        yield "p1"
        yield "p2"
    return Output().add_stream_content(pieces())


async def async_with_sync_stream(_inputs):
    """Answers a plain iterator's stream, from a coroutine."""
    return Output().add_stream_content(iter(["s1", "s2"]))
