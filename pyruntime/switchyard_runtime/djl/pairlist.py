"""An ordered list of key/value pairs, the shape of request and reply content.

Keys may repeat, so this is not a dict. The attribute names ``keys`` and
``values`` (two parallel lists) are the ones DJL's ``PairList`` exposes, so code
that reaches into them keeps working.
"""


class PairList:
    """PairList holds ordered (key, value) pairs in two parallel lists."""

    __slots__ = ("keys", "values")

    def __init__(self, keys=None, values=None, pair_list=None, pair_map=None):
        if keys is not None and values is not None:
            if len(keys) != len(values):
                raise ValueError("PairList: %d keys but %d values" % (len(keys), len(values)))
            self.keys = keys
            self.values = values
            return
        self.keys = [] if keys is None else keys
        self.values = [] if values is None else values
        if self.keys or self.values:
            raise ValueError("PairList: keys and values must be given together")
        pairs = pair_map.items() if pair_map is not None else pair_list
        for key, value in pairs or ():
            self.add(key, value)

    def add(self, key=None, value=None, index=None, pair=None):
        """Appends a pair (or inserts it at index); pair=(key, value) also works."""
        if pair is not None:
            key, value = pair
        if index is None:
            self.keys.append(key)
            self.values.append(value)
        else:
            self.keys.insert(index, key)
            self.values.insert(index, value)

    def add_all(self, other):
        """Appends every pair of another PairList."""
        if other is not None:
            self.keys.extend(other.keys)
            self.values.extend(other.values)

    def size(self):
        """Returns the number of pairs."""
        return len(self.keys)

    def is_empty(self):
        """Reports whether there are no pairs."""
        return not self.keys

    def get(self, key):
        """Returns the value of the first pair with this key, or None."""
        try:
            return self.values[self.keys.index(key)]
        except ValueError:
            return None

    def key_at(self, index):
        """Returns the key of the pair at index."""
        return self.keys[index]

    def value_at(self, index):
        """Returns the value of the pair at index."""
        return self.values[index]

    def get_keys(self):
        """Returns the list of keys."""
        return self.keys

    def get_values(self):
        """Returns the list of values."""
        return self.values

    def items(self):
        """Returns the pairs as a list of (key, value) tuples."""
        return list(zip(self.keys, self.values))

    def __len__(self):
        return len(self.keys)

    def __iter__(self):
        return iter(zip(self.keys, self.values))

    def __repr__(self):
        return "PairList(%r)" % (self.items(),)
