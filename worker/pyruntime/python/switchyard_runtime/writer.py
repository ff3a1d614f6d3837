"""The single writer of a connection: one lock, so frames are never split."""

import threading

from . import protocol
from .outputs import Output
from .results import error_reply


class Writer(object):
    """Writer sends whole frames on a socket under one lock.

    Hold ``lock`` and call ``send_locked`` to send several frames back to
    back (an untracked stream) without other frames in between.
    """

    def __init__(self, sock):
        self.lock = threading.Lock()
        self._sendall = sock.sendall

    def send(self, frame):
        """Sends one frame."""
        with self.lock:
            self._sendall(frame)

    def send_locked(self, frame):
        """Sends one frame; the caller holds lock."""
        self._sendall(frame)


def reply_frame(reply, props):
    """Returns the whole response frame of reply with props; a 500 frame if it cannot be encoded."""
    try:
        return protocol.encode_response(reply.code, reply.message, props, reply.keys, reply.values)
    except protocol.EncodeError as exc:
        bad = error_reply(500, str(exc))
        return protocol.encode_response(bad.code, bad.message, bad.props, bad.keys, bad.values)


def stream_head(reply, props):
    """Returns the streamed-response head of reply with props (may raise EncodeError)."""
    return protocol.encode_stream_head(reply.code, reply.message, props)


def own_frame(result):
    """Returns the frame of a plain switchyard Output (no stream, no finalize), else None.

    This is the hot path of a request: no Reply is built.
    """
    if type(result) is not Output or result.stream_content is not None or result._finalizers:
        return None
    content = result.content
    try:
        return protocol.encode_response(result.code, result.message, result.properties,
                                        content.keys, content.values)
    except protocol.EncodeError as exc:
        bad = error_reply(500, str(exc))
        return protocol.encode_response(bad.code, bad.message, bad.props, bad.keys, bad.values)
