"""The reply object a model handler returns, with DJL's Output API."""

import json

from .ndlist import encode_ndlist, encode_npz
from .pairlist import PairList


class _Encoder(json.JSONEncoder):
    """_Encoder turns numpy scalars and arrays, datetimes and sets into JSON."""

    def default(self, o):
        """Returns a JSON-ready form of o, or raises TypeError."""
        if type(o).__module__ == "numpy":
            if hasattr(o, "tolist"):
                return o.tolist()
        if hasattr(o, "isoformat"):
            return o.isoformat()
        if isinstance(o, (set, frozenset)):
            return list(o)
        return json.JSONEncoder.default(self, o)


def encode_json(value):
    """Returns value as compact UTF-8 JSON bytes (numpy values converted)."""
    text = json.dumps(value, ensure_ascii=False, separators=(",", ":"), cls=_Encoder)
    return text.encode("utf-8")


def to_bytes(value):
    """Returns str as UTF-8, bytes-like as bytes, anything else as JSON."""
    kind = type(value)
    if kind is bytes:
        return value
    if kind is str:
        return value.encode("utf-8")
    if kind in (bytearray, memoryview):
        return bytes(value)
    return encode_json(value)


def _item_key(key, batch_index):
    if key is not None and type(key) is not str:
        key = str(key)
    if batch_index is None:
        return "data" if key is None else key
    return "batch_%d.%s" % (batch_index, "data" if key is None else key)


class Output:
    """Output is a handler's answer: status, properties and content or a stream.

    The methods that change it return the Output itself, so calls chain.
    """

    def __init__(self, code=200, message="OK"):
        self.code = code
        self.message = message
        self.properties = {}
        self.content = PairList()
        self.stream_content = None
        self.stream_output_formatter = None
        self._finalizers = []

    def __str__(self):
        """Returns code, message, properties and the type of each content item as JSON, as DJL prints them."""
        content = {key: "type: " + str(type(value)) for key, value in self.content.items()}
        return json.dumps({"code": self.code, "message": self.message, "properties": self.properties,
                           "content": content}, indent=2, default=str)

    @staticmethod
    def _encode_json(value):
        """Returns value as JSON bytes; DJL's test_model helpers call it by this name."""
        return encode_json(value)

    def set_code(self, code):
        """Sets the status code."""
        self.code = code
        return self

    def set_message(self, message):
        """Sets the status message."""
        self.message = message
        return self

    def add_property(self, key, val):
        """Sets a reply property (a response header for the client)."""
        self.properties[key] = val
        return self

    def get_properties(self):
        """Returns the reply properties."""
        return self.properties

    def get_property(self, key):
        """Returns one reply property, or None."""
        return self.properties.get(key)

    def add(self, value, key=None, batch_index=None):
        """Adds a content item: str as UTF-8, bytes as they are, others as JSON.

        key defaults to "data"; batch_index=i prefixes it with "batch_<i>.".
        """
        self.content.add(_item_key(key, batch_index), to_bytes(value))
        return self

    def add_as_string(self, value, key=None, batch_index=None):
        """Adds str(value) as a UTF-8 content item."""
        return self.add(str(value), key=key, batch_index=batch_index)

    def add_as_json(self, value, key=None, batch_index=None):
        """Adds value encoded as JSON (even when it is a str)."""
        self.content.add(_item_key(key, batch_index), encode_json(value))
        return self

    def add_as_numpy(self, np_list, key=None, batch_index=None):
        """Adds numpy arrays encoded as a DJL NDList.

        np_list is one array, a list of them, an NDList (with names) or a
        dict of arrays by name; the names become an Open Inference Protocol
        answer's output names.
        """
        return self.add(encode_ndlist(np_list), key=key, batch_index=batch_index)

    def add_as_npz(self, np_list, key=None, batch_index=None):
        """Adds numpy arrays encoded as an npz archive."""
        return self.add(encode_npz(np_list), key=key, batch_index=batch_index)

    def error(self, error, code=424, message="prediction failure"):
        """Turns this Output into an error with a JSON body {code, message, error}."""
        self.code = code
        self.message = message
        self.add_property("content-type", "application/json")
        return self.add_as_json({"code": code, "message": message, "error": error})

    def add_stream_content(self, stream, output_formatter=None):
        """Makes the reply a stream: one chunk per item of stream.

        stream is an iterable or an async iterable. Items that are str go out
        as UTF-8, bytes as they are, anything else as JSON. output_formatter,
        when given, is applied to each item first.
        """
        self.stream_content = stream
        self.stream_output_formatter = output_formatter
        return self

    def finalize(self, function, *args):
        """Registers function(*args) to run after the reply has been sent."""
        self._finalizers.append((function, args))
        return self

    def execute_finalize(self):
        """Runs the registered finalize functions in order; returns the last one's result."""
        result = None
        for function, args in self._finalizers:
            result = function(*args)
        return result
