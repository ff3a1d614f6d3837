"""Reading request frames from a socket through one reusable buffer."""

from . import protocol

READ_BUFFER = 256 << 10


class FrameReader:
    """FrameReader reads request frames from a socket with recv_into.

    A frame that fits in the buffer is parsed from one snapshot of the bytes
    received (protocol.parse_request); one that does not is read field by
    field, long items in pieces, so memory grows only with the bytes that
    arrived.
    """

    def __init__(self, sock, size=READ_BUFFER, max_item=protocol.DEFAULT_MAX_ITEM):
        self._buf = bytearray(size)
        self._view = memoryview(self._buf)
        self._start = 0  # the next unread byte
        self._end = 0  # one past the last byte received
        self._snap = None  # a copy of buf[snap_at:end]; None once more bytes came
        self._snap_at = 0
        self._recv_into = sock.recv_into
        self._max_item = max_item

    def read_request(self):
        """Returns the next request as (props, keys, values), or None at end of stream."""
        if self._start == self._end and not self._receive():
            return None
        while True:
            got = protocol.parse_request(self._snapshot(), self._start - self._snap_at, self._max_item)
            if got is not None:
                self._start = self._snap_at + got[3]
                return got[0], got[1], got[2]
            if self._start == 0 and self._end == len(self._buf):
                return self._read_large()
            if not self._receive():
                return self._at_eof()

    def _snapshot(self):
        """Returns the received bytes as one bytes object, copied once per receive."""
        if self._snap is None:
            self._snap = bytes(self._view[self._start:self._end])
            self._snap_at = self._start
        return self._snap

    def _receive(self):
        """Receives more bytes (making room first); False at end of stream."""
        self._snap = None
        if self._start == self._end:
            self._start = self._end = 0
        elif self._end == len(self._buf):
            self._compact()
        got = self._recv_into(self._view[self._end:])
        self._end += got
        return got > 0

    def _compact(self):
        held = self._end - self._start
        self._buf[:held] = bytes(self._view[self._start:self._end])
        self._start, self._end = 0, held

    def _read_large(self):
        request = protocol.read_request(self.read, self._max_item)
        if request is None:
            raise protocol.ProtocolError("protocol: connection closed inside a frame")
        return request

    def _at_eof(self):
        if self._start == self._end:
            return None
        raise protocol.ProtocolError("protocol: connection closed inside a frame")

    def read(self, n):
        """Returns the next n bytes (fewer only at end of stream)."""
        self._snap = None
        held = self._end - self._start
        if held >= n:
            out = bytes(self._view[self._start:self._start + n])
            self._start += n
            return out
        pieces = [bytes(self._view[self._start:self._end])]
        self._start = self._end = 0
        return protocol.read_pieces(self._read_some, n - held, pieces)

    def _read_some(self, n):
        """Reads at most n bytes (at most one buffer's worth) into a new bytes object."""
        got = self._recv_into(self._view)
        take = min(got, n)
        self._start, self._end = take, got
        return bytes(self._view[:take])
