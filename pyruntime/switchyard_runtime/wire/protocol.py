"""Frame codec of the worker wire protocol (docs/protocol.md), big-endian.

string: int32 length + UTF-8 (-1 = null), as DJL Serving has had it since
0.28. bytes: int32 length + bytes. Counts and the status code are int16.
request: int16 nProps + (string, string) pairs, int16 nContent + (string, bytes).
response: int16 code, string message, int16 nProps + pairs, int16 nContent +
items; nContent = -1 starts a stream of chunks (int8 1 + bytes), ended by
int8 0 + int32 0, or by int8 0 + bytes holding an error text.

Readers take a ``read(n)`` function of a buffered binary stream (the socket's
``makefile("rb")``), which returns fewer than n bytes only at end of stream.
"""

import struct

from .properties import Decoded, Properties

DEFAULT_MAX_ITEM = 64 << 20  # the per-item cap of protocol.md
MAX_STRING = 0x7FFFFFFF  # strings carry a 32-bit length
MAX_INT16 = 0x7FFF  # counts and status codes carry a 16-bit one
BIG_READ = 1 << 20  # longer items are read in pieces of this size
EAGER_PAIRS = 8  # parse_request decodes blocks of at most this many pairs (a lone request's) at once

_S16 = struct.Struct(">h")
_S32 = struct.Struct(">i")
_FLAG_LEN = struct.Struct(">bi")
_S8 = struct.Struct(">b")
_h = _S16.unpack_from
_i = _S32.unpack_from
STREAM = _S16.pack(-1)
NULL_STRING = _S32.pack(-1)
END = _FLAG_LEN.pack(0, 0)


class ProtocolError(Exception):
    """ProtocolError reports a frame that breaks the protocol; the connection cannot go on."""


class EncodeError(ValueError):
    """EncodeError reports a value that cannot be put into a frame."""


# --- reading -----------------------------------------------------------------

def read_request(read, max_item=DEFAULT_MAX_ITEM):
    """Reads one request frame; returns (props, keys, values), or None at end of stream.

    props is a Properties: checked now, decoded when read.
    """
    head = read(2)
    if not head:
        return None
    try:
        props = _read_props(read, _count(head), max_item)
        keys, values = _read_items(read, _count(read(2)), max_item)
    except struct.error as exc:
        raise ProtocolError("protocol: connection closed inside a frame") from exc
    return props, keys, values


def _count(raw):
    n = _S16.unpack(raw)[0]
    if n < 0:
        raise ProtocolError("protocol: negative count %d" % n)
    return n


def _read_pairs(read, n, max_item=DEFAULT_MAX_ITEM):
    props = {}
    for _ in range(n):
        key = _read_string(read, max_item)
        props[key] = _read_string(read, max_item)
    return props


def _read_props(read, n, max_item):
    """Reads n pairs as one property block (their bytes as they came) into a Properties."""
    parts, keys_at, at = [], [], 0
    for i in range(n + n):
        if not i & 1:
            keys_at.append(at)
        head = read(4)
        raw = _read_raw_string(read, _S32.unpack(head)[0], max_item)
        parts.append(head)
        parts.append(raw or b"")
        at += 4 + len(raw or b"")
    return Properties(b"".join(parts), keys_at)


def _read_string(read, max_item=DEFAULT_MAX_ITEM):
    raw = _read_raw_string(read, _S32.unpack(read(4))[0], max_item)
    return None if raw is None else raw.decode("utf-8", "replace")


def _read_raw_string(read, n, max_item):
    """Reads the n bytes of a string whose length n was read; None for a null one."""
    if n < 0:
        return _null(n)
    if n > max_item:
        raise ProtocolError("protocol: string length %d over %d" % (n, max_item))
    raw = read(n) if n <= BIG_READ else read_pieces(read, n)
    if len(raw) != n:
        raise ProtocolError("protocol: connection closed inside a string")
    return raw


def _read_items(read, n, max_item):
    keys, values = [], []
    for _ in range(n):
        keys.append(_read_string(read, max_item))
        values.append(read_bytes(read, max_item))
    return keys, values


def read_bytes(read, max_item=DEFAULT_MAX_ITEM):
    """Reads int32 length + bytes; lengths below 0 or over max_item are errors."""
    n = _S32.unpack(read(4))[0]
    if n < 0 or n > max_item:
        raise ProtocolError("protocol: item length %d outside 0..%d" % (n, max_item))
    if n <= BIG_READ:
        raw = read(n)
    else:
        raw = read_pieces(read, n)
    if len(raw) != n:
        raise ProtocolError("protocol: connection closed inside an item")
    return raw


def read_pieces(read, n, pieces=None):
    """Reads n bytes in pieces of at most BIG_READ and returns them joined after pieces.

    Memory grows only with what has arrived; fewer bytes come back only at
    end of stream.
    """
    pieces = [] if pieces is None else pieces
    while n > 0:
        piece = read(min(n, BIG_READ))
        if not piece:
            break
        pieces.append(piece)
        n -= len(piece)
    return b"".join(pieces)


def parse_request(data, pos=0, max_item=DEFAULT_MAX_ITEM, eager=EAGER_PAIRS):
    """Parses a request frame from data[pos:] (bytes) without reading anything.

    Returns (props, keys, values, next_pos), or None when data ends before
    the frame does. Raises ProtocolError for a frame that breaks the
    protocol. props is a Properties: every length is checked here, the
    strings are decoded when read; or, when the block has at most eager
    pairs, a Decoded (a dict with the same reads) decoded here. This is
    FrameReader's fast path; read_request is the general one.
    """
    try:
        props, pos = _skim_props(data, pos, max_item, eager)
        keys, values, pos = _parse_items(data, pos, max_item)
    except struct.error:
        return None
    if pos > len(data):
        return None
    return props, keys, values, pos


def _skim_props(data, pos, max_item, eager):
    """Checks the property block at data[pos:], decoding it only when it has at most eager pairs.

    Returns a Properties over a copy of the block (so that it keeps no
    larger buffer alive), or a Decoded, and the position after it. A
    length past the end of data raises struct.error (the frame is
    incomplete); the last string's bytes are checked against the end by
    parse_request.
    """
    count = _h(data, pos)[0]
    pos += 2
    if count < 0:
        raise ProtocolError("protocol: negative count %d" % count)
    if count <= eager:
        return _decode_props(data, pos, count, max_item)
    start, keys_at = pos, []
    for _ in range(count):
        keys_at.append(pos - start)
        n = _i(data, pos)[0]
        pos += 4 + n if 0 <= n <= max_item else _odd_length(n, max_item)
        n = _i(data, pos)[0]
        pos += 4 + n if 0 <= n <= max_item else _odd_length(n, max_item)
    return Properties(data[start:pos], keys_at), pos


def _decode_props(data, pos, count, max_item):
    """Checks and decodes count pairs at data[pos:] in one pass, as _skim_props checks them."""
    props = Decoded()
    for _ in range(count):  # _parse_string twice, written out: a call per string costs more
        n = _i(data, pos)[0]
        pos += 4
        if 0 <= n <= max_item:
            key = data[pos:pos + n].decode("utf-8", "replace")
            pos += n
        else:
            _odd_length(n, max_item)  # a null string, or an error
            key = None
        n = _i(data, pos)[0]
        pos += 4
        if 0 <= n <= max_item:
            props[key] = data[pos:pos + n].decode("utf-8", "replace")
            pos += n
        else:
            _odd_length(n, max_item)
            props[key] = None
    return props, pos


def _odd_length(n, max_item):
    """Returns the size of a null string (-1); any other length outside 0..max_item is an error."""
    if n > max_item:
        raise ProtocolError("protocol: string length %d over %d" % (n, max_item))
    _null(n)
    return 4


def _parse_string(data, pos, max_item):
    """Returns the string at data[pos:] and the position after it."""
    n = _i(data, pos)[0]
    pos += 4
    if n < 0:
        return _null(n), pos
    if n > max_item:
        raise ProtocolError("protocol: string length %d over %d" % (n, max_item))
    return data[pos:pos + n].decode("utf-8", "replace"), pos + n


def _parse_items(data, pos, max_item):
    count = _h(data, pos)[0]
    pos += 2
    if count < 0:
        raise ProtocolError("protocol: negative count %d" % count)
    keys, values = [], []
    for _ in range(count):
        key, pos = _parse_string(data, pos, max_item)
        keys.append(key)
        n = _i(data, pos)[0]
        pos += 4
        if n < 0 or n > max_item:
            raise ProtocolError("protocol: item length %d outside 0..%d" % (n, max_item))
        values.append(data[pos:pos + n])
        pos += n
    return keys, values, pos


def _null(n):
    if n == -1:
        return None
    raise ProtocolError("protocol: bad string length %d" % n)


# --- writing -----------------------------------------------------------------

def encode_string(text):
    """Returns int32 length + UTF-8 of text (None -> null); too long -> EncodeError."""
    if text is None:
        return NULL_STRING
    raw = text.encode("utf-8") if type(text) is str else str(text).encode("utf-8")
    if len(raw) > MAX_STRING:
        raise EncodeError("protocol: string of %d bytes exceeds %d" % (len(raw), MAX_STRING))
    return _S32.pack(len(raw)) + raw


def encode_message(text, limit=MAX_STRING):
    """Encodes a status message, cut at a character boundary to fit limit bytes."""
    if text is None:
        return NULL_STRING
    raw = str(text).encode("utf-8")
    if len(raw) > limit:
        raw = raw[:limit].decode("utf-8", "ignore").encode("utf-8")
    return _S32.pack(len(raw)) + raw


_CACHE_LIMIT = 256
_status_lines = {}  # (code, message) -> encoded code + message, for common ones
_item_keys = {}  # content key -> encoded key


def _status_line(code, message):
    """Returns int16 code + message, cached for the few (code, message) pairs in use."""
    cacheable = type(code) is int and type(message) is str
    line = _status_lines.get((code, message)) if cacheable else None
    if line is None:
        code = _status(code)
        line = _S16.pack(code) + encode_message(message)
        if cacheable and len(_status_lines) < _CACHE_LIMIT and len(message) < 64:
            _status_lines[(code, message)] = line
    return line


def _item_key(key):
    """Returns an encoded content key, cached for the usual few ("data", "batch_0.data", ...)."""
    raw = _item_keys.get(key)
    if raw is None:
        raw = encode_string(key)
        if len(_item_keys) < _CACHE_LIMIT and type(key) is str:
            _item_keys[key] = raw
    return raw


def encode_bytes(data):
    """Returns int32 length + data."""
    return _S32.pack(len(data)) + data


def _head(code, message, props):
    parts = [_status_line(code, message), _S16.pack(len(props))]
    for key, value in props.items():
        parts.append(encode_string(key))
        parts.append(encode_string(value))
    return parts


def _status(code):
    if type(code) is int and -0x8000 <= code <= MAX_INT16:
        return code
    try:
        value = int(code)
    except (TypeError, ValueError):
        value = None
    if value is None or not -0x8000 <= value <= MAX_INT16:
        raise EncodeError("protocol: status code %r is not a 16-bit integer" % (code,))
    return value


def item_bytes(value):
    """Returns a content value as bytes: bytes-like as it is, str as UTF-8; else EncodeError."""
    if isinstance(value, (bytes, bytearray, memoryview)):
        return bytes(value)
    if isinstance(value, str):
        return value.encode("utf-8")
    raise EncodeError("protocol: content item of type %s is not bytes" % type(value).__name__)


def encode_response(code, message, props, keys, values, to_bytes=item_bytes):
    """Returns a whole response frame as one bytes object.

    Values that are not bytes go through to_bytes first (item_bytes by
    default; the runtime passes one that also writes other values as JSON).
    """
    parts = _head(code, message, props)
    parts.append(_S16.pack(len(keys)))
    for key, value in zip(keys, values):
        if type(value) is not bytes:
            value = to_bytes(value)
        parts.append(_item_key(key))
        parts.append(_S32.pack(len(value)))
        parts.append(value)
    return b"".join(parts)


def encode_stream_head(code, message, props):
    """Returns the head of a streamed response (nContent = -1), chunks to follow."""
    parts = _head(code, message, props)
    parts.append(STREAM)
    return b"".join(parts)


def encode_chunk(data):
    """Returns one stream chunk: int8 1 + int32 length + data."""
    return _FLAG_LEN.pack(1, len(data)) + data


def encode_end(error=None):
    """Returns the stream end marker, carrying error text when given."""
    if not error:
        return END
    raw = str(error).encode("utf-8")
    return _FLAG_LEN.pack(0, len(raw)) + raw


# --- the front-end's side, for tests and benchmarks --------------------------

def encode_request(props, items=()):
    """Returns a request frame for props (a dict) and items ((key, bytes) pairs)."""
    parts = [_S16.pack(len(props))]
    for key, value in props.items():
        parts.append(encode_string(key))
        parts.append(encode_string(value))
    items = list(items)
    parts.append(_S16.pack(len(items)))
    for key, value in items:
        parts.append(encode_string(key))
        parts.append(encode_bytes(value))
    return b"".join(parts)


class Response:
    """Response is a decoded response frame.

    For a streamed frame, chunks holds the chunk payloads read and error the
    end marker's text ("" for a clean end, None while the stream is open).
    """

    def __init__(self, code, message, props, keys=None, values=None):
        self.code = code
        self.message = message
        self.props = props
        self.keys = keys
        self.values = values
        self.chunks = None
        self.error = None

    @property
    def streamed(self):
        """Reports whether the frame is a streamed response."""
        return self.chunks is not None


def read_response(read, max_chunks=None, max_item=DEFAULT_MAX_ITEM):
    """Reads a response frame; for a stream, reads chunks up to the end marker.

    max_chunks bounds how many chunks to read (1 for a tracked frame, which
    holds exactly one). Returns None at end of stream.
    """
    head = read(2)
    if not head:
        return None
    try:
        return _read_response(read, head, max_chunks, max_item)
    except struct.error as exc:
        raise ProtocolError("protocol: connection closed inside a frame") from exc


def _read_response(read, head, max_chunks, max_item):
    code = _S16.unpack(head)[0]
    message = _read_string(read, max_item)
    props = _read_pairs(read, _count(read(2)), max_item)
    n = _S16.unpack(read(2))[0]
    if n >= 0:
        keys, values = _read_items(read, n, max_item)
        return Response(code, message, props, keys, values)
    resp = Response(code, message, props)
    resp.chunks = []
    while max_chunks is None or len(resp.chunks) + (resp.error is not None) < max_chunks:
        flag = _S8.unpack(read(1))[0]
        data = read_bytes(read, max_item)
        if flag == 0:
            resp.error = data.decode("utf-8", "replace")
            break
        resp.chunks.append(data)
    return resp
