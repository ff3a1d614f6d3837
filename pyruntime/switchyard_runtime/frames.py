"""Replies as response frames: where the djl part meets the wire part."""

from .djl.outputs import Output, to_bytes
from .results import error_reply
from .wire import protocol


def _frame(code, message, props, keys, values):
    """Returns a whole response frame, or a 500 frame when this one cannot be encoded.

    Content values that are not bytes become bytes as Output.add makes them.
    """
    try:
        return protocol.encode_response(code, message, props, keys, values, to_bytes)
    except protocol.EncodeError as exc:
        bad = error_reply(500, str(exc))
        return protocol.encode_response(bad.code, bad.message, bad.props, bad.keys, bad.values)


def reply_frame(reply, props):
    """Returns the whole response frame of reply with props; a 500 frame if it cannot be encoded."""
    return _frame(reply.code, reply.message, props, reply.keys, reply.values)


def stream_head(reply, props):
    """Returns the streamed-response head of reply with props (may raise EncodeError)."""
    return protocol.encode_stream_head(reply.code, reply.message, props)


def own_frame(result):
    """Returns the frame of a plain switchyard Output (no stream, no finalize), else None.

    This is the hot path of a request: no Reply is built.
    """
    # The runtime's own Output: its finalizer list is read directly, as results does.
    # pylint: disable-next=protected-access
    if type(result) is not Output or result.stream_content is not None or result._finalizers:
        return None
    content = result.content
    return _frame(result.code, result.message, result.properties, content.keys, content.values)
