"""Lazy property blocks answer every lookup as the dict decoded from the frame does."""

import random
import unittest

from switchyard_runtime.djl.inputs import Input
from switchyard_runtime.djl.pairlist import PairList
from switchyard_runtime.wire import protocol

EXTRA = {"device_id": "-1", "model_dir": "/models/m"}


def raw_request(pairs):
    """Returns a request frame with pairs ((bytes or None, bytes or None)) as its property block."""
    parts = [len(pairs).to_bytes(2, "big")]
    for key, value in pairs:
        for raw in (key, value):
            parts.append(b"\xff\xff\xff\xff" if raw is None else len(raw).to_bytes(4, "big") + raw)
    parts.append(b"\x00\x00")
    return b"".join(parts)


def every_way(frame):
    """Returns the props of frame from the in-place parser (decoded there or not) and the stream reader."""
    return [("decoded in place", protocol.parse_request(frame, eager=protocol.MAX_INT16)[0]),
            ("checked in place", protocol.parse_request(frame, eager=-1)[0]),
            ("in place, default", protocol.parse_request(frame)[0]),
            ("stream", protocol.read_request(_reader(frame))[0])]


def _reader(data):
    pos = [0]

    def read(n):
        out = data[pos[0]:pos[0] + n]
        pos[0] += len(out)
        return out
    return read


def decoded(pairs, extra):
    """Returns the dict the runtime built before: pairs decoded one by one, then extra set."""
    props = {}
    for key, value in pairs:
        props[_text(key)] = _text(value)
    props.update(extra)
    return props


def _text(raw):
    return None if raw is None else raw.decode("utf-8", "replace")


# Blocks that make byte lookups easy to get wrong.
CASES = {
    "typical": [(b"host", b"127.0.0.1:8080"), (b"content-type", b"application/json"),
                (b"content-length", b"16"), (b"user-agent", b"fasthttp"), (b"request_id", b"abc"),
                (b"handler", b"handle")],
    "repeated key, last wins": [(b"a", b"1"), (b"b", b"2"), (b"a", b"3")],
    "null key and values": [(None, b"v"), (b"k", None), (b"x", b"")],
    "key pattern inside a value": [(b"v", b"\x00\x00\x00\x07handler\x00\x00\x00\x01x"), (b"handler", b"h")],
    "only inside a value": [(b"v", b"\x00\x00\x00\x07handler\x00\x00\x00\x01x")],
    "mixed case": [(b"Content-Type", b"text/plain"), (b"content-type", b"application/json"),
                   (b"X-Custom", b"1")],
    "upper case first, lower later": [(b"X-A", b"upper"), (b"x-a", b"lower")],
    "invalid utf-8 keys collide": [(b"\xff", b"1"), (b"\xfe", b"2"), (b"\xef\xbf\xbd", b"3")],
    "kelvin sign": [("\u212a".encode(), b"kelvin"), (b"k", b"ascii")],
    "non-ascii value": [(b"name", "é".encode()), (b"Name", b"x")],
    "length byte is a capital letter": [(b"A" * 65, b"long"), (b"a" * 97, b"longer"), (b"b", b"B" * 66)],
    "a longer key starts with the wanted one": [(b"a" * 97, b"longer"), (b"A" * 65, b"long")],
    "extra already in the frame": [(b"model_dir", b"/frame"), (b"Device_ID", b"7")],
    "empty": [],
}

LOOKUPS = ["host", "content-type", "Content-Type", "CONTENT-TYPE", "handler", "a", "b", "k", "K",
           "\u212a", "x", "X-A", "x-a", "v", "\ufffd", "\udc80", "name", "NAME", "A" * 65, "a" * 65,
           "a" * 97, "model_dir", "device_id", "DEVICE_ID", "missing", "", None, 7]


class PropertiesTest(unittest.TestCase):
    def test_lookups_match_the_dict(self):
        for name, pairs in CASES.items():
            for how, props in every_way(raw_request(pairs)):
                with self.subTest(name, how=how):
                    props.extra = EXTRA
                    self._check(props, decoded(pairs, EXTRA))

    def _check(self, props, want):
        self.assertEqual(props.to_dict(), want)
        self.assertEqual(list(props.to_dict()), list(want))
        for key in LOOKUPS:
            self.assertEqual(props.get(key, "default"), want.get(key, "default"), key)
            self.assertEqual(key in props, key in want, key)
            if isinstance(key, str):
                self.assertEqual(props.get_folded(key), _first_folded(want, key), key)

    def test_input_reads_the_same(self):
        for name, pairs in CASES.items():
            for how, props in every_way(raw_request(pairs)):
                with self.subTest(name, how=how):
                    self._check_input(_input(props), pairs)

    def _check_input(self, lazy, pairs):
        eager = Input(decoded(pairs, EXTRA), PairList(["data"], [b"{}"]))
        for key in LOOKUPS:
            if isinstance(key, str):
                self.assertEqual(lazy.get_property(key), eager.get_property(key), key)
        self.assertEqual(lazy.function_name, eager.function_name)
        self.assertEqual(lazy.is_batch(), eager.is_batch())
        self.assertEqual(lazy.properties, eager.properties)
        self.assertEqual(list(lazy.properties), list(eager.properties))

    def test_random_blocks(self):
        rng = random.Random(12)
        words = [b"a", b"A", b"b", b"k", b"K", b"\xff", b"x-a", b"X-A", None, b"\x00\x00\x00\x01a", b""]
        for _ in range(400):
            pairs = [(rng.choice(words), rng.choice(words)) for _ in range(rng.randrange(6))]
            for how, props in every_way(raw_request(pairs)):
                props.extra = EXTRA
                with self.subTest(pairs=pairs, how=how):
                    self._check(props, decoded(pairs, EXTRA))

    def test_ascii_and_other_blocks_decode_alike(self):
        long_value = b"v" * 200  # its length has a byte over 0x7f: the block is not ASCII
        for pairs in ([(b"a", b"1"), (b"b", b"")], [(b"a", long_value)], [(b"a", "\u00e9".encode())],
                      [(b"a", None)], [(b"\x00", b"\x7f")]):
            props = protocol.parse_request(raw_request(pairs), eager=-1)[0]
            with self.subTest(pairs=pairs):
                self.assertEqual(props.to_dict(), decoded(pairs, {}))

    def test_batches_match_the_dict(self):
        rng = random.Random(6)
        keys = [b"handler", b"batch_000.a", b"batch_0.a", b"batch_0_a", b"batch_001.a",
                b"batch_001.B", b"batch_1.b", b"batch_002.", b"batch_x.a", b"batch_003.\xff", b"\xff", None,
                b"batch_10.c", b"Batch_001.a", b"batch_001.a\nb"]
        values = [b"1", b"2", b"x", None, b"", "\u00e9".encode()]
        content_keys = ["batch_000.data", "batch_001.data", "data", "batch_1_extra", None]
        for _ in range(300):
            pairs = [(b"batch_size", rng.choice([b"1", b"2", b"3"]))]
            pairs += [(rng.choice(keys), rng.choice(values)) for _ in range(rng.randrange(12))]
            names = rng.sample(content_keys, rng.randrange(len(content_keys) + 1))
            content = [bytes([i]) for i in range(len(names))]
            eager = Input(decoded(pairs, EXTRA), PairList(list(names), list(content)))
            want = [(item.properties, item.content.keys, item.content.values) for item in eager.get_batches()]
            for how, props in every_way(raw_request(pairs)):
                props.extra = EXTRA
                inputs = Input(props, PairList(list(names), list(content)))
                got = [(item.properties, item.content.keys, item.content.values) for item in inputs.get_batches()]
                with self.subTest(pairs=pairs, names=names, how=how):
                    self.assertEqual(got, want)
                    self.assertEqual([list(p) for p, _, _ in got], [list(p) for p, _, _ in want])

    def test_dict_is_built_once_and_kept(self):
        inputs = _input(protocol.parse_request(raw_request(CASES["typical"]))[0])
        self.assertEqual(inputs.get_property("Content-Type"), "application/json")
        first = inputs.get_properties()
        first["added"] = "1"
        self.assertIs(inputs.properties, first)
        self.assertEqual(inputs.get_property("added"), "1")
        inputs.properties = {"handler": "other"}
        self.assertEqual(inputs.get_property("HANDLER"), "other")

    def test_batch_reads(self):
        pairs = [(b"batch_size", b"2"), (b"batch_000.content-type", b"text/plain"), (b"batch_001.x", b"y")]
        inputs = Input(protocol.parse_request(raw_request(pairs))[0],
                       PairList(["batch_000.data", "batch_001.data"], [b"a", b"b"]))
        self.assertTrue(inputs.is_batch())
        self.assertEqual(inputs.get_batch_size(), 2)
        items = inputs.get_batches()
        self.assertEqual([item.properties for item in items], [{"content-type": "text/plain"}, {"x": "y"}])
        self.assertEqual(items[0].get_data(), "a")

    def test_block_is_a_copy(self):
        frame = raw_request(CASES["typical"]) + b"\x00" * 1000
        props = protocol.parse_request(frame, eager=-1)[0]
        self.assertEqual(props.get("host"), "127.0.0.1:8080")
        self.assertLess(len(props._data), 200)  # pylint: disable=protected-access


def _input(props):
    props.extra = EXTRA
    return Input(props, PairList(["data"], [b"{}"]))


def _first_folded(props, key):
    wanted = key.lower()
    return next((v for k, v in props.items() if k is not None and k.lower() == wanted), None)


if __name__ == "__main__":
    unittest.main()
