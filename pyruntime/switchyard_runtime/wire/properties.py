"""A request's property block, checked when the frame is read, decoded when asked.

A request carries its properties as (string, string) pairs: the HTTP
headers and request_id of every request of a batch. Most handlers read one
or two of them, so decoding them all into a dict for every request costs
more than the handler's own work in a no-op model. The reader
(protocol.parse_request) walks the block once, checking every length against
the frame and the per-item cap, and keeps where each key starts; this module
decodes a key's value when it is asked for, and the whole block into a dict
when a handler wants the dict. A small block (a lone request's) is cheaper
to decode while it is walked, as the runtime itself reads two properties of
every request: the reader then hands over a Decoded, a dict with the same
reads.

A lookup gives what the dict would: keys and values decoded as UTF-8 with
U+FFFD for invalid bytes, null strings as None, the last of repeated keys
winning, and the extra properties (the runtime's device_id and model_dir)
winning over the frame's.
"""

import struct

_i = struct.Struct(">i").unpack_from
_REPLACEMENT = "\ufffd"
_CACHE_LIMIT = 256
_patterns = {}  # key -> its bytes in a frame (int32 length + UTF-8), for the keys looked up


class Properties:
    """Properties is a checked property block: block holds its pairs and nothing else.

    keys_at lists where each key's int32 length lies in block, in frame
    order; the caller (protocol.parse_request, protocol.read_request) has
    checked that every length is -1 or 0..cap and that every string lies
    inside the block. extra holds properties added after the frame's (a dict, not
    changed here), as if set on the decoded dict one by one.
    """

    __slots__ = ("_data", "_keys_at", "extra")

    def __init__(self, block, keys_at, extra=None):
        self._data = block
        self._keys_at = keys_at
        self.extra = extra

    def __len__(self):
        """Returns how many pairs the frame carried (repeated keys counted, extra not)."""
        return len(self._keys_at)

    def to_dict(self):
        """Returns every property as a new dict, in the order a dict built pair by pair has."""
        data = self._data
        if data.isascii():
            props = _ascii_dict(data, self._keys_at)
        else:
            props = _utf8_dict(data, self._keys_at)
        if self.extra:
            props.update(self.extra)
        return props

    def get(self, key, default=None):
        """Returns the value of property key (exact match), or default when it is absent."""
        extra = self.extra
        if extra and key in extra:
            return extra[key]
        pattern = _patterns.get(key) or _pattern(key)
        if pattern is None:
            return self.to_dict().get(key, default)
        data = self._data
        at = data.rfind(pattern)
        if at < 0:
            return default
        if at not in self._keys_at:
            at = self._last_key(pattern, at)
            if at < 0:
                return default
        return _string(data, at + len(pattern))[0]

    def __contains__(self, key):
        """Reports whether property key is present (exact match), even with a null value."""
        if self.extra and key in self.extra:
            return True
        pattern = _patterns.get(key) or _pattern(key)
        if pattern is None:
            return key in self.to_dict()
        at = self._data.rfind(pattern)
        return at >= 0 and (at in self._keys_at or self._last_key(pattern, at) >= 0)

    def get_folded(self, key):
        """Returns the value of the first property whose name equals key ignoring case.

        "First" is the dict's order. This is the case-insensitive half of
        DJL's Input.get_property; it answers without decoding the block when
        key and the block are ASCII, else from the dict.
        """
        wanted = key.lower()
        at = self._find_folded(wanted)
        if at is None:
            return _first_folded(self.to_dict(), wanted)
        if at >= 0:
            return self.get(_string(self._data, at)[0])
        return _first_folded(self.extra or {}, wanted)

    def _last_key(self, pattern, hit):
        """Returns where the last key equal to pattern starts, searching before hit; -1: none."""
        data, keys_at = self._data, self._keys_at
        while hit >= 0 and hit not in keys_at:
            hit = data.rfind(pattern, 0, hit + len(pattern) - 1)
        return hit

    def _find_folded(self, wanted):
        """Returns where the first key equal to wanted ignoring ASCII case starts; -1: none.

        None when the bytes cannot tell (non-ASCII key or block: Unicode
        case rules differ from ASCII's).
        """
        data = self._data
        if not wanted.isascii() or not data.isascii():
            return None
        size = len(wanted)
        pattern = (struct.pack(">i", size) + wanted.encode("ascii")).lower()
        lowered, keys_at = data.lower(), self._keys_at
        hit = lowered.find(pattern)
        # Lowering the block lowers length bytes too: a hit counts only
        # where a key starts and its own length is the wanted one.
        while hit >= 0 and (hit not in keys_at or _i(data, hit)[0] != size):
            hit = lowered.find(pattern, hit + 1)
        return hit


class Decoded(dict):
    """Decoded is a property block decoded as it was read: the dict itself, with Properties' reads.

    Setting extra sets its properties on the dict, as the runtime did
    before blocks were decoded when read; set it once.
    """

    __slots__ = ("_extra",)

    @property
    def extra(self):
        """The properties set after the frame's (device_id, model_dir), or None."""
        return getattr(self, "_extra", None)

    @extra.setter
    def extra(self, value):
        self._extra = value
        if value:
            self.update(value)

    def to_dict(self):
        """Returns every property as a new dict."""
        return dict(self)

    def get_folded(self, key):
        """Returns the value of the first property whose name equals key ignoring case."""
        return _first_folded(self, key.lower())


def _pattern(key):
    """Returns key as a frame holds it (int32 length + UTF-8), remembered for the next lookup.

    None when the bytes cannot tell: a key that is not a str, or one whose
    UTF-8 may not be what the frame holds (U+FFFD, lone surrogates).
    """
    if type(key) is not str or _REPLACEMENT in key:
        return None
    try:
        raw = key.encode("utf-8")
    except UnicodeEncodeError:
        return None
    pattern = struct.pack(">i", len(raw)) + raw
    if len(_patterns) < _CACHE_LIMIT and len(raw) <= 64:
        _patterns[key] = pattern
    return pattern


def _ascii_dict(data, keys_at):
    """Returns the pairs of an ASCII block as a dict, decoding the block in one call.

    An ASCII block has no null string (its length is 0xFFFFFFFF), and its
    text has the same offsets as its bytes, so each key is a slice of the
    text, and each value runs from after its length to the next key.
    """
    text = data.decode("ascii")
    ends = keys_at[1:]
    ends.append(len(data))
    props = {}
    for at, end in zip(keys_at, ends):
        at += 4
        n = at + _i(data, at - 4)[0]
        props[text[at:n]] = text[n + 4:end]
    return props


def _utf8_dict(data, keys_at):
    """Returns the pairs of any checked block as a dict, decoding string by string."""
    props = {}
    for at in keys_at:  # _string twice, written out: this is the loop a dict costs
        n = _i(data, at)[0]
        at += 4
        if n < 0:
            key = None
        else:
            key = data[at:at + n].decode("utf-8", "replace")
            at += n
        n = _i(data, at)[0]
        props[key] = None if n < 0 else data[at + 4:at + 4 + n].decode("utf-8", "replace")
    return props


def _string(data, at):
    """Returns the checked string whose length lies at data[at:] and the position after it."""
    n = _i(data, at)[0]
    at += 4
    if n < 0:
        return None, at
    return data[at:at + n].decode("utf-8", "replace"), at + n


def _first_folded(props, wanted):
    for name, value in props.items():
        if name is not None and name.lower() == wanted:
            return value
    return None
