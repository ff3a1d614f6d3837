"""Turning what a handler returns or raises into a reply with a status code.

A handler may return None (204), an Output (its own code), or raise (424, or
507 for out of memory). Any object with code, message, properties and content
attributes counts as an Output, so a real djl_python Output works too.
"""

import inspect
import logging
import traceback

from .djl.errors import is_out_of_memory
from .djl.outputs import Output, encode_json, to_bytes
from .djl.pairlist import PairList


class Reply:
    """Reply is a normalized answer: status, properties and content or a stream."""

    __slots__ = ("code", "message", "props", "keys", "values", "stream", "formatter", "source")

    def __init__(self, code, message, props=None, keys=None, values=None):
        self.code = code
        self.message = message
        self.props = {} if props is None else props
        self.keys = [] if keys is None else keys
        self.values = [] if values is None else values
        self.stream = None
        self.formatter = None
        self.source = None  # the handler's Output, for its finalize functions


NO_CONTENT = (204, "No content")

_log = logging.getLogger("switchyard.results")


def is_output(value):
    """Reports whether value looks like an Output (ours or DJL's)."""
    return hasattr(value, "code") and hasattr(value, "content")


def is_async_iterable(value):
    """Reports whether value is an async iterable (an async generator, say)."""
    return hasattr(value, "__aiter__")


def from_result(result):
    """Returns the Reply for a handler's return value."""
    if type(result) is Output:
        return _from_own(result)
    if result is None:
        return Reply(*NO_CONTENT)
    if is_output(result):
        return _from_output(result)
    if is_async_iterable(result) or inspect.isgenerator(result):
        reply = Reply(200, "OK")
        reply.stream = result
        return reply
    name = type(result).__module__ + "." + type(result).__qualname__
    return error_reply(500, "handler returned %s, want Output or None" % name)


def _from_own(output):
    """Returns the Reply of switchyard's own Output without copying its content."""
    content = output.content
    reply = Reply(int(output.code), output.message, output.properties, content.keys, content.values)
    reply.stream = output.stream_content
    reply.formatter = output.stream_output_formatter
    if output._finalizers:  # pylint: disable=protected-access  # the runtime's own Output
        reply.source = output
    return reply


def _from_output(output):
    keys, values = content_lists(output.content)
    props = getattr(output, "properties", None)
    reply = Reply(int(output.code), output.message, dict(props) if props else {}, keys, values)
    reply.stream = getattr(output, "stream_content", None)
    reply.formatter = getattr(output, "stream_output_formatter", None)
    reply.source = output
    return reply


def content_lists(content):
    """Returns (keys, values) of a PairList-like, dict or list of pairs; values as bytes."""
    if content is None:
        return [], []
    keys = getattr(content, "keys", None)
    if type(keys) is list:
        return list(keys), [to_bytes(v) for v in content.values]
    if isinstance(content, dict):
        content = content.items()
    elif hasattr(content, "size") and hasattr(content, "key_at"):
        content = [(content.key_at(i), content.value_at(i)) for i in range(content.size())]
    pairs = PairList(pair_list=content)
    return pairs.keys, [to_bytes(v) for v in pairs.values]


def error_reply(code, message, error=None):
    """Returns a Reply with a JSON body {"code", "message", "error"}."""
    body = {"code": code, "message": "prediction failure" if code == 424 else message,
            "error": message if error is None else error}
    return Reply(code, message, {"content-type": "application/json"}, ["data"], [encode_json(body)])


def exception_text(exc):
    """Returns str(exc), or the exception's type name when that is empty."""
    text = str(exc)
    return text if text else type(exc).__name__


def from_exception(exc):
    """Returns the Reply for an exception a handler raised: 424, or 507 for OOM."""
    code = 507 if is_out_of_memory(exc) else 424
    return error_reply(code, exception_text(exc), exception_text(exc))


def last_traceback_line(exc):
    """Returns the last line Python prints for exc ("SyntaxError: invalid syntax")."""
    lines = traceback.format_exception_only(type(exc), exc)
    text = "".join(lines).rstrip().splitlines()
    return text[-1].strip() if text else type(exc).__name__


def chunk_bytes(item, formatter=None):
    """Returns one stream item as bytes: str as UTF-8, bytes as is, others JSON.

    An Output yielded as an item contributes its content items, joined.
    """
    if formatter is not None:
        item = formatter(item)
    if is_output(item):
        return b"".join(content_lists(item.content)[1])
    return to_bytes(item)


def close_stream(it):
    """Closes a stream's iterator (a generator runs its finally blocks); failures are logged."""
    close = getattr(it, "close", None)
    if close is None:
        return
    try:
        close()
    except Exception as exc:
        _log.warning("closing a stream failed", exc_info=exc)
