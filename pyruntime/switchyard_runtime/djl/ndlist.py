"""Tensor encodings DJL clients send and accept: NDList ("tensor/ndlist") and npz.

numpy is imported only when one of these functions runs, so the runtime itself
needs nothing beyond the standard library.

NDList layout (big-endian): int32 count, then per array: short-string magic
"NDAR", int32 version 3, one byte that says whether a name follows (then the
name as a short string), a short-string sparse format, a short-string data type
(numpy name in capitals), the shape (int32 rank, rank int64 dimensions, int32
layout length, that many 2-byte layout characters), one byte order character,
int32 data length, and the data.
"""

import io
import struct

MAGIC = "NDAR"
VERSION = 3


def is_npz(data):
    """Reports whether data starts like a zip archive (numpy's npz)."""
    return len(data) >= 4 and data[0] == 0x50 and data[1] == 0x4B


def decode_npz(data):
    """Returns the arrays of an npz archive, in archive order."""
    import numpy

    with numpy.load(io.BytesIO(bytes(data))) as archive:
        return [archive[name] for name in archive.files]


def encode_npz(arrays):
    """Returns arrays (one array or a list) saved as an npz archive."""
    import numpy

    if not isinstance(arrays, (list, tuple)):
        arrays = [arrays]
    buf = io.BytesIO()
    numpy.savez(buf, *arrays)
    return buf.getvalue()


class _Cursor:
    """_Cursor reads big-endian fields from a bytes-like object."""

    def __init__(self, data):
        self.data = memoryview(data)
        self.pos = 0

    def take(self, n):
        """Returns the next n bytes as a memoryview."""
        if n < 0 or self.pos + n > len(self.data):
            raise ValueError("ndlist: truncated data")
        out = self.data[self.pos:self.pos + n]
        self.pos += n
        return out

    def unpack(self, fmt):
        """Returns the next value of struct format fmt."""
        return struct.unpack(fmt, self.take(struct.calcsize(fmt)))[0]

    def string(self):
        """Returns the next int16-length-prefixed UTF-8 string."""
        return bytes(self.take(self.unpack(">h"))).decode("utf-8")


def decode_ndlist(data):
    """Returns the arrays of an NDList (or of an npz archive) as numpy arrays."""
    if is_npz(data):
        return decode_npz(data)
    cur = _Cursor(data)
    return [_decode_array(cur) for _ in range(cur.unpack(">i"))]


def _decode_array(cur):
    import numpy

    magic = cur.string()
    if magic != MAGIC:
        raise ValueError("ndlist: bad magic %r" % magic)
    version = cur.unpack(">i")
    if version != VERSION:
        raise ValueError("ndlist: version %d, want %d" % (version, VERSION))
    if cur.unpack(">b") == 1:
        cur.string()  # the array's name: not kept
    cur.string()  # sparse format: dense only
    dtype = numpy.dtype(cur.string().lower())
    shape = _decode_shape(cur)
    order = chr(cur.unpack(">b"))
    raw = bytes(cur.take(cur.unpack(">i")))
    return numpy.frombuffer(raw, dtype=dtype.newbyteorder(order)).reshape(shape)


def _decode_shape(cur):
    rank = cur.unpack(">i")
    shape = tuple(cur.unpack(">q") for _ in range(rank))
    for _ in range(cur.unpack(">i")):
        cur.take(2)  # layout characters: not kept
    return shape


def encode_ndlist(arrays):
    """Returns arrays (one array or a list) as an NDList, data little-endian."""
    if not isinstance(arrays, (list, tuple)):
        arrays = [arrays]
    parts = [struct.pack(">i", len(arrays))]
    for array in arrays:
        parts.append(_encode_array(array))
    return b"".join(parts)


def _short_string(text):
    raw = text.encode("utf-8")
    return struct.pack(">h", len(raw)) + raw


def _encode_array(array):
    import numpy

    array = numpy.ascontiguousarray(array)
    data = array.astype(array.dtype.newbyteorder("<"), copy=False).tobytes()
    parts = [_short_string(MAGIC), struct.pack(">ib", VERSION, 0),
             _short_string("default"), _short_string(array.dtype.name.upper()),
             struct.pack(">i", array.ndim)]
    parts.extend(struct.pack(">q", dim) for dim in array.shape)
    parts.append(struct.pack(">i", array.ndim))
    parts.extend(struct.pack(">h", ord("?")) for _ in array.shape)
    parts.append(struct.pack(">bi", ord("<"), len(data)))
    parts.append(data)
    return b"".join(parts)
