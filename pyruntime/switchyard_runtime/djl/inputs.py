"""The request object handed to a model handler, with DJL's Input API."""

import csv
import io
import json
import re

from ..wire.properties import Properties
from .ndlist import decode_ndlist, decode_npz
from .pairlist import PairList

# batch_<i>.<key> as the front-end sends it; batch_<i>_<key> as DJL's
# test_model.create_concurrent_batch_request builds it.
_BATCH_KEY = re.compile(r"batch_(\d+)[._](.*)", re.DOTALL)
_SPLIT_LIMIT = 4096
_splits = {}  # str key -> (index, name), or () for a shared key: the keys split so far


class Input:
    """Input is one request (or one dynamic batch): properties plus content.

    properties maps names (HTTP headers in lower case, request_id, ...) to
    strings; content is a PairList of named byte strings ("data" is the body).
    The runtime passes a batch's properties as a wire Properties: the
    methods below read single properties from it without decoding the rest,
    and the properties attribute turns it into the dict once, when first read.
    A lone request's come decoded (a wire Decoded, a dict).
    """

    def __init__(self, properties=None, content=None):
        self._props = {} if properties is None else properties
        self.content = PairList() if content is None else content
        self.function_name = self._props.get("handler")

    @property
    def properties(self):
        """The properties as a dict (decoded from the frame on first use, then kept)."""
        props = self._props
        if type(props) is Properties:
            props = self._props = props.to_dict()
        return props

    @properties.setter
    def properties(self, value):
        self._props = value

    def __str__(self):
        """Returns the properties, then each content item decoded by get_data, as DJL prints them."""
        lines = ["properties: " + str(self.properties)]
        for key in self.content.keys:
            lines.append("%s: %s" % (key, self.get_data(key)))
        return "\n".join(lines)

    def get_function_name(self):
        """Returns the handler function the request names (property "handler")."""
        return self.function_name

    def get_properties(self):
        """Returns the properties dict."""
        return self.properties

    def get_property(self, key):
        """Returns a property by name, matched without regard to case, or None."""
        props = self._props
        value = props.get(key)
        if value is not None:
            return value
        if type(props) is Properties:
            return props.get_folded(key)
        wanted = key.lower()
        for name, value in self.properties.items():
            if name is not None and name.lower() == wanted:
                return value
        return None

    def get_content(self):
        """Returns the content PairList."""
        return self.content

    def contains_key(self, key):
        """Reports whether a content item has this key."""
        return key in self.content.keys

    def is_empty(self):
        """Reports whether there is no content (true for the initialization call)."""
        return not self.content.keys

    def is_batch(self):
        """Reports whether this input is a dynamic batch (has batch_size)."""
        return "batch_size" in self._props

    def get_batch_size(self):
        """Returns the batch size: the batch_size property, else 1."""
        return int(self._props.get("batch_size", 1))

    def get_batches(self):
        """Splits a dynamic batch into one Input per request.

        Properties and content keyed batch_<i>.<name> or batch_<i>_<name>
        (index padded or not) go to item i as <name>. As in DJL, the other
        properties (batch_size, device_id, ...) stay on the batch and are not
        copied to the items; content without a prefix is copied to every
        item. An input that is not a batch comes back as [self].
        """
        if not self.is_batch():
            return [self]
        _, per_item = _split(self.properties.items())
        keys, values = self.content.keys, self.content.values
        shared_content, item_content = _split(zip(keys, values))
        size = _batch_count(self.get_batch_size(), per_item, item_content)
        return [self._item(i, per_item, shared_content, item_content) for i in range(size)]

    @staticmethod
    def _item(index, per_item, shared_content, item_content):
        props = dict(per_item.get(index, ()))
        content = PairList()
        for key, value in shared_content.items():
            content.add(key, value)
        for key, value in item_content.get(index, ()):
            content.add(key, value)
        return Input(props, content)

    def _default_bytes(self, key):
        content = self.content
        if not content.keys:
            return None
        if key:
            try:
                return content.values[content.keys.index(key)]
            except ValueError as exc:
                raise KeyError("requested data for key:%s is not found!" % key) from exc
        if "data" in content.keys:
            return content.values[content.keys.index("data")]
        return content.values[0]

    def get_as_bytes(self, key=None):
        """Returns a content item as bytes: key, else "data", else the first item.

        Returns None when there is no content; raises KeyError for a missing key.
        """
        return self._default_bytes(key)

    def get_as_string(self, key=None):
        """Returns a content item decoded as UTF-8."""
        return bytes(self._required(key)).decode("utf-8")

    def get_as_json(self, key=None):
        """Returns a content item parsed as JSON."""
        return json.loads(bytes(self._required(key)).decode("utf-8"))

    def get_as_csv(self, key=None):
        """Returns a content item parsed as CSV with a header row (list of dicts)."""
        return list(csv.DictReader(io.StringIO(self.get_as_string(key))))

    def get_as_numpy(self, key=None):
        """Returns a content item (NDList or npz) as a list of numpy arrays.

        The list is an NDList: its names attribute holds the arrays' names
        (an Open Inference Protocol request's input names), and get(name)
        finds one.
        """
        return decode_ndlist(self._required(key))

    def get_as_ndlist(self, key=None):
        """Returns a content item (NDList or npz) as an NDList: numpy arrays with their names."""
        return decode_ndlist(self._required(key))

    def get_as_npz(self, key=None):
        """Returns a content item (npz archive) as a list of numpy arrays."""
        return decode_npz(self._required(key))

    def get_as_image(self, key=None):
        """Returns a content item opened with PIL (Pillow must be installed)."""
        from PIL import Image  # pylint: disable=import-error  # optional: only this method needs it

        return Image.open(io.BytesIO(bytes(self._required(key))))

    def _required(self, key):
        data = self._default_bytes(key)
        if data is None:
            raise ValueError("Input has no content")
        return data

    def get_data(self, key=None):
        """Returns a content item decoded by the content-type property.

        application/json -> parsed JSON; text/* -> str; tensor/ndlist and
        tensor/npz -> numpy arrays; image/* -> a PIL image when Pillow is
        installed; anything else -> bytes. None when there is no content.
        """
        if self.is_empty():
            return None
        kind = self.get_property("content-type") or ""
        decode = _decoder(kind.split(";", 1)[0].strip().lower())
        return decode(self, key)


def _split(pairs):
    """Sorts pairs into shared ones (a dict) and per-item ones ({index: [(k, v)]})."""
    shared, per_item = {}, {}
    for key, value in pairs:
        where = _splits.get(key) if type(key) is str else None
        if where is None:
            where = _item_of(key)
        if where:
            index, name = where
            per_item.setdefault(index, []).append((name, value))
        else:
            shared[key] = value
    return shared, per_item


def _item_of(key):
    """Returns (index, name) for a batch_<i>.<name> key, else (); str keys are remembered.

    A batch carries the same keys request after request, so the regular
    expression runs once per key rather than once per key and request.
    """
    match = _BATCH_KEY.fullmatch(key) if key else None
    where = () if match is None else (int(match.group(1)), match.group(2))
    if type(key) is str and len(_splits) < _SPLIT_LIMIT:
        _splits[key] = where
    return where


def _batch_count(size, *indexed):
    for groups in indexed:
        if groups:
            size = max(size, max(groups) + 1)
    return size


def _pil_or_bytes(inputs, key):
    try:
        return inputs.get_as_image(key)
    except ImportError:
        return inputs.get_as_bytes(key)


def _decoder(kind):
    if kind == "application/json" or kind.endswith("+json"):
        return Input.get_as_json
    if kind.startswith("text/"):
        return Input.get_as_string
    if kind in ("tensor/ndlist", "application/x-npy"):
        return Input.get_as_numpy
    if kind == "tensor/npz":
        return Input.get_as_npz
    if kind.startswith("image/"):
        return _pil_or_bytes
    return Input.get_as_bytes
