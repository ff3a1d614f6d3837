"""The djl_python Input API."""

import json
import unittest

from djl_python import Input
from djl_python.pair_list import PairList
from tests.helpers import numpy_or_skip


def make(props=None, items=()):
    """Returns an Input of props and items ((key, value) pairs)."""
    items = list(items)
    return Input(dict(props or {}), PairList([k for k, _ in items], [v for _, v in items]))


class InputTest(unittest.TestCase):
    def test_default_item(self):
        cases = [
            ("data wins", [("q", b"1"), ("data", b"body")], b"body"),
            ("first item without data", [("q", b"1"), ("r", b"2")], b"1"),
            ("no content", [], None),
        ]
        for name, items, want in cases:
            with self.subTest(name):
                self.assertEqual(make(items=items).get_as_bytes(), want)

    def test_getters(self):
        inp = make({"Content-Type": "application/json", "handler": "go"},
                   [("data", '{"inputs": "héllo"}'.encode()), ("q", b"x")])
        self.assertEqual(inp.get_as_json(), {"inputs": "héllo"})
        self.assertEqual(inp.get_as_string("q"), "x")
        self.assertEqual(inp.get_data(), {"inputs": "héllo"})
        self.assertEqual(inp.get_property("content-type"), "application/json")
        self.assertEqual(inp.get_property("CONTENT-TYPE"), "application/json")
        self.assertIsNone(inp.get_property("missing"))
        self.assertTrue(inp.contains_key("q"))
        self.assertFalse(inp.contains_key("z"))
        self.assertEqual(inp.get_function_name(), "go")
        self.assertIs(inp.get_properties(), inp.properties)
        self.assertEqual(inp.get_content().get_keys(), ["data", "q"])
        with self.assertRaises(KeyError):
            inp.get_as_bytes("z")

    def test_get_data_by_content_type(self):
        cases = [
            ("application/json; charset=utf-8", b'[1, 2]', [1, 2]),
            ("text/plain", b"hi", "hi"),
            ("application/octet-stream", b"\x00\x01", b"\x00\x01"),
            (None, b"raw", b"raw"),
        ]
        for kind, body, want in cases:
            with self.subTest(kind):
                props = {"content-type": kind} if kind else {}
                self.assertEqual(make(props, [("data", body)]).get_data(), want)
        self.assertIsNone(make({"content-type": "text/plain"}).get_data())

    def test_empty(self):
        inp = make({"model_id": "m"})
        self.assertTrue(inp.is_empty())
        self.assertFalse(inp.is_batch())
        self.assertEqual(inp.get_batch_size(), 1)
        self.assertEqual(inp.get_batches(), [inp])
        with self.assertRaises(ValueError):
            inp.get_as_string()

    def test_csv(self):
        inp = make({}, [("data", b"a,b\n1,2\n3,4\n")])
        self.assertEqual(inp.get_as_csv(), [{"a": "1", "b": "2"}, {"a": "3", "b": "4"}])


class BatchTest(unittest.TestCase):
    def _batch(self, fmt):
        props = {"batch_size": "3", "x-shared": "s"}
        items = []
        for i in range(3):
            props[fmt % i + ".content-type"] = "text/plain"
            props[fmt % i + ".tag"] = "t%d" % i
            items.append((fmt % i + ".data", ("body%d" % i).encode()))
        return make(props, items)

    def test_get_batches(self):
        for name, fmt in [("padded", "batch_%03d"), ("unpadded", "batch_%d")]:
            with self.subTest(name):
                inp = self._batch(fmt)
                self.assertTrue(inp.is_batch())
                self.assertEqual(inp.get_batch_size(), 3)
                batches = inp.get_batches()
                self.assertEqual(len(batches), 3)
                for i, item in enumerate(batches):
                    self.assertEqual(item.get_as_string(), "body%d" % i)
                    self.assertEqual(item.get_data(), "body%d" % i)
                    self.assertEqual(item.get_property("tag"), "t%d" % i)
                    self.assertIsNone(item.get_property("x-shared"))  # as in DJL: the batch's own
                    self.assertNotIn("batch_size", item.get_properties())
                    self.assertFalse(item.is_batch())

    def test_underscore_keys(self):
        """DJL's test_model builds batches keyed batch_<iii>_<name>."""
        inp = make({"batch_size": "2", "batch_000_eula": "true", "batch_001_Content-type": "text/plain",
                    "engine": "Python"}, [("batch_000_data", b"a"), ("batch_001_data", b"b")])
        first, second = inp.get_batches()
        self.assertEqual(first.get_properties(), {"eula": "true"})
        self.assertEqual(second.get_properties(), {"Content-type": "text/plain"})
        self.assertEqual((first.get_as_string(), second.get_as_string()), ("a", "b"))

    def test_keys_in_order_and_extra_items(self):
        inp = make({"batch_size": "2"}, [("batch_001.data", b"b"), ("batch_000.data", b"a"),
                                         ("batch_001.q", b"z"), ("shared", b"s")])
        first, second = inp.get_batches()
        self.assertEqual(first.get_content().items(), [("shared", b"s"), ("data", b"a")])
        self.assertEqual(second.get_content().items(), [("shared", b"s"), ("data", b"b"), ("q", b"z")])

    def test_index_beyond_batch_size(self):
        inp = make({"batch_size": "1"}, [("batch_000.data", b"a"), ("batch_2.data", b"c")])
        batches = inp.get_batches()
        self.assertEqual(len(batches), 3)
        self.assertTrue(batches[1].is_empty())


def decode_again(data):
    """Returns an NDList's arrays decoded."""
    from switchyard_runtime.djl.ndlist import decode_ndlist

    return decode_ndlist(data)


class TensorTest(unittest.TestCase):
    def test_ndlist_round_trip(self):
        numpy = numpy_or_skip(self)
        from djl_python.np_util import from_nd_list, to_nd_list

        arrays = [numpy.arange(6, dtype=numpy.float32).reshape(2, 3), numpy.array([1, -2], dtype=numpy.int64)]
        back = from_nd_list(to_nd_list(arrays))
        self.assertEqual(len(back), 2)
        for want, got in zip(arrays, back):
            self.assertEqual(got.dtype.newbyteorder("="), want.dtype)
            numpy.testing.assert_array_equal(got, want)
        inp = make({"content-type": "tensor/ndlist"}, [("data", to_nd_list(arrays))])
        numpy.testing.assert_array_equal(inp.get_data()[0], arrays[0])

    def test_ndlist_golden(self):
        numpy = numpy_or_skip(self)
        from switchyard_runtime.djl.ndlist import decode_ndlist

        # one float32 array [1.0, 2.0] named "w", little-endian data, DJL's layout
        data = (b"\x00\x00\x00\x01" b"\x00\x04NDAR" b"\x00\x00\x00\x03" b"\x01" b"\x00\x01w"
                b"\x00\x07default" b"\x00\x07FLOAT32" b"\x00\x00\x00\x01" b"\x00\x00\x00\x00\x00\x00\x00\x02"
                b"\x00\x00\x00\x01" b"\x00?" b"<" b"\x00\x00\x00\x08"
                + numpy.array([1.0, 2.0], dtype="<f4").tobytes())
        (array,) = decode_ndlist(data)
        numpy.testing.assert_array_equal(array, [1.0, 2.0])
        self.assertEqual(decode_ndlist(data).names, ["w"])
        with self.assertRaises(ValueError):
            decode_ndlist(data[:-3])

    def test_names_strings_and_bools(self):
        numpy = numpy_or_skip(self)
        from switchyard_runtime.djl.ndlist import NDList, encode_ndlist

        texts = numpy.array([[b"a", "\u00e9".encode()], [b"", b"xyz"]], dtype=object)
        data = encode_ndlist({"text": texts, "flag": numpy.array([True, False]), "u": numpy.array(["hi"])})
        inp = make({"content-type": "tensor/ndlist"}, [("data", data)])
        got = inp.get_as_ndlist()
        self.assertIsInstance(got, NDList)
        self.assertEqual(got.names, ["text", "flag", "u"])
        self.assertEqual(got.get("text").dtype, object)
        self.assertEqual(got.get("text").tolist(), texts.tolist())
        self.assertEqual(got.get("flag").dtype, numpy.bool_)
        self.assertEqual(got.get("flag").tolist(), [True, False])
        self.assertEqual(got.get("u").tolist(), [b"hi"])
        self.assertEqual([n for n, _ in got.items()], got.names)
        with self.assertRaises(KeyError):
            got.get("nope")
        self.assertEqual(inp.get_as_numpy().names, got.names)
        again = decode_again(encode_ndlist(got))
        self.assertEqual(again.names, got.names)
        self.assertEqual(decode_again(encode_ndlist([numpy.zeros(2)])).names, [None])
        with self.assertRaises(ValueError):
            NDList([numpy.zeros(1)], names=["a", "b"])

    def test_strings_big_endian(self):
        numpy_or_skip(self)
        # one STRING array ["ab"] with big-endian lengths, as a Java client may write it
        data = (b"\x00\x00\x00\x01" b"\x00\x04NDAR" b"\x00\x00\x00\x03" b"\x00" b"\x00\x07default" b"\x00\x06STRING"
                b"\x00\x00\x00\x01" b"\x00\x00\x00\x00\x00\x00\x00\x01" b"\x00\x00\x00\x01" b"\x00?" b">"
                b"\x00\x00\x00\x06" b"\x00\x00\x00\x02ab")
        self.assertEqual(decode_again(data)[0].tolist(), [b"ab"])
        with self.assertRaises(ValueError):
            decode_again(data[:-1])

    def test_npz(self):
        numpy = numpy_or_skip(self)
        from switchyard_runtime.djl.ndlist import encode_npz

        blob = encode_npz([numpy.ones(3)])
        for kind in ("tensor/npz", "tensor/ndlist"):
            with self.subTest(kind):
                got = make({"content-type": kind}, [("data", blob)]).get_data()
                numpy.testing.assert_array_equal(got[0], numpy.ones(3))


class PairListTest(unittest.TestCase):
    def test_pair_list(self):
        pl = PairList(pair_list=[("a", 1), ("b", 2)])
        pl.add("c", 3)
        pl.add("z", 0, index=0)
        pl.add(pair=("a", 9))
        self.assertEqual(pl.get_keys(), ["z", "a", "b", "c", "a"])
        self.assertEqual(pl.get("a"), 1)
        self.assertIsNone(pl.get("missing"))
        self.assertEqual((pl.key_at(1), pl.value_at(1), pl.size()), ("a", 1, 5))
        self.assertEqual(PairList(pair_map={"k": "v"}).items(), [("k", "v")])
        self.assertTrue(PairList().is_empty())
        with self.assertRaises(ValueError):
            PairList(["a"], [])

    def test_json_helpers_leave_values(self):
        inp = make({}, [("data", json.dumps({"a": 1}).encode())])
        self.assertEqual(inp.get_as_json("data"), {"a": 1})


if __name__ == "__main__":
    unittest.main()
