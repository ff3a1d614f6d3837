"""Tensor encodings DJL clients send and accept: NDList ("tensor/ndlist") and npz.

numpy is imported only when one of these functions runs, so the runtime itself
needs nothing beyond the standard library.

NDList layout (big-endian): int32 count, then per array: short-string magic
"NDAR", int32 version 3, one byte that says whether a name follows (then the
name as a short string), a short-string sparse format, a short-string data type
(numpy name in capitals), the shape (int32 rank, rank int64 dimensions, int32
layout length, that many 2-byte layout characters), one byte order character,
int32 data length, and the data.

Strings (the Open Inference Protocol's BYTES) have the type STRING: each
element is a 4-byte length in the array's byte order, then its bytes; they
decode to a numpy object array of bytes, and object, bytes and str arrays
encode to it. The arrays' names are kept: decode_ndlist returns an NDList,
a list that also has them.
"""

import io
import struct

MAGIC = "NDAR"
VERSION = 3
STRING = "STRING"


class NDList(list):
    """NDList is a list of numpy arrays with their names (None for an unnamed one)."""

    def __init__(self, arrays=(), names=None):
        super().__init__(arrays)
        self.names = list(names) if names is not None else [None] * len(self)
        if len(self.names) != len(self):
            raise ValueError("ndlist: %d names for %d arrays" % (len(self.names), len(self)))

    def get(self, name):
        """Returns the array called name; raises KeyError when there is none."""
        for array_name, array in zip(self.names, self):
            if array_name == name:
                return array
        raise KeyError("ndlist: no array named %r (names: %s)" % (name, self.names))

    def items(self):
        """Returns (name, array) pairs in order."""
        return list(zip(self.names, self))


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
    """Returns the arrays of an NDList as an NDList of numpy arrays with their names (an npz archive's too)."""
    if is_npz(data):
        return NDList(decode_npz(data))
    cur = _Cursor(data)
    arrays, names = [], []
    for _ in range(cur.unpack(">i")):
        name, array = _decode_array(cur)
        arrays.append(array)
        names.append(name)
    return NDList(arrays, names)


def _decode_array(cur):
    import numpy

    magic = cur.string()
    if magic != MAGIC:
        raise ValueError("ndlist: bad magic %r" % magic)
    version = cur.unpack(">i")
    if version != VERSION:
        raise ValueError("ndlist: version %d, want %d" % (version, VERSION))
    name = cur.string() if cur.unpack(">b") == 1 else None
    cur.string()  # sparse format: dense only
    type_name = cur.string()
    shape = _decode_shape(cur)
    order = chr(cur.unpack(">b"))
    raw = bytes(cur.take(cur.unpack(">i")))
    if type_name == STRING:
        return name, _decode_strings(raw, shape, order)
    dtype = numpy.dtype("bool" if type_name == "BOOLEAN" else type_name.lower())
    return name, numpy.frombuffer(raw, dtype=dtype.newbyteorder(order)).reshape(shape)


def _decode_strings(raw, shape, order):
    """Returns STRING data as a numpy object array of bytes."""
    import numpy

    fmt = order + "I"
    items, pos = [], 0
    while pos < len(raw):
        if pos + 4 > len(raw):
            raise ValueError("ndlist: truncated string length")
        length = struct.unpack_from(fmt, raw, pos)[0]
        pos += 4
        if pos + length > len(raw):
            raise ValueError("ndlist: truncated string")
        items.append(raw[pos:pos + length])
        pos += length
    out = numpy.empty(len(items), dtype=object)
    out[:] = items
    return out.reshape(shape)


def _decode_shape(cur):
    rank = cur.unpack(">i")
    shape = tuple(cur.unpack(">q") for _ in range(rank))
    for _ in range(cur.unpack(">i")):
        cur.take(2)  # layout characters: not kept
    return shape


def encode_ndlist(arrays):
    """Returns arrays as an NDList, data little-endian.

    arrays is one array, a list or tuple of them, an NDList (its names are
    written), or a dict of arrays by name, in order.
    """
    names = None
    if isinstance(arrays, dict):
        names, arrays = list(arrays.keys()), list(arrays.values())
    elif isinstance(arrays, NDList):
        names = arrays.names
    elif not isinstance(arrays, (list, tuple)):
        arrays = [arrays]
    if names is None:
        names = [None] * len(arrays)
    parts = [struct.pack(">i", len(arrays))]
    for name, array in zip(names, arrays):
        parts.append(_encode_array(array, name))
    return b"".join(parts)


def _short_string(text):
    raw = text.encode("utf-8")
    return struct.pack(">h", len(raw)) + raw


def _encode_array(array, name=None):
    import numpy

    array = numpy.asarray(array)
    if array.dtype.kind in "OSU":
        type_name, data = STRING, _encode_strings(array)
    else:
        array = numpy.ascontiguousarray(array)
        type_name = array.dtype.name.upper()
        data = array.astype(array.dtype.newbyteorder("<"), copy=False).tobytes()
    parts = [_short_string(MAGIC), struct.pack(">i", VERSION)]
    if name is None:
        parts.append(b"\x00")
    else:
        parts.extend((b"\x01", _short_string(str(name))))
    parts.extend((_short_string("default"), _short_string(type_name), struct.pack(">i", array.ndim)))
    parts.extend(struct.pack(">q", dim) for dim in array.shape)
    parts.append(struct.pack(">i", array.ndim))
    parts.extend(struct.pack(">h", ord("?")) for _ in array.shape)
    parts.append(struct.pack(">bi", ord("<"), len(data)))
    parts.append(data)
    return b"".join(parts)


def _encode_strings(array):
    """Returns an object, bytes or str array's elements as STRING data: str as UTF-8, others by str()."""
    parts = []
    for item in array.reshape(-1):
        if isinstance(item, str):
            item = item.encode("utf-8")
        elif not isinstance(item, (bytes, bytearray, memoryview)):
            item = str(item).encode("utf-8")
        parts.append(struct.pack("<I", len(item)))
        parts.append(bytes(item))
    return b"".join(parts)
