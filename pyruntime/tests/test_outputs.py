"""The djl_python Output API."""

import json
import unittest

from djl_python import Output
from djl_python.outputs import Output as OutputFromModule


class OutputTest(unittest.TestCase):
    def test_same_class_everywhere(self):
        from switchyard_runtime.djl.outputs import Output as Runtime

        self.assertIs(Output, OutputFromModule)
        self.assertIs(Output, Runtime)

    def test_add(self):
        out = Output()
        self.assertIs(out.add("héllo"), out)
        out.add(b"raw", key="b").add(bytearray(b"ba"), key="ba").add({"x": [1, "é"]}, key="j")
        out.add(7, key=3)
        self.assertEqual(out.content.items(), [
            ("data", "héllo".encode()), ("b", b"raw"), ("ba", b"ba"),
            ("j", '{"x":[1,"é"]}'.encode()), ("3", b"7")])

    def test_batch_index(self):
        out = Output().add("a", batch_index=0).add("b", key="k", batch_index=12)
        out.add_as_json("s", batch_index=1)
        self.assertEqual(out.content.get_keys(), ["batch_0.data", "batch_12.k", "batch_1.data"])
        self.assertEqual(out.content.value_at(2), b'"s"')

    def test_status_and_properties(self):
        out = Output(code=201, message="Created").set_code(202).set_message("Accepted").add_property("a", "b")
        self.assertEqual((out.code, out.message, out.properties), (202, "Accepted", {"a": "b"}))

    def test_error(self):
        out = Output().error("broke")
        self.assertEqual((out.code, out.message), (424, "prediction failure"))
        self.assertEqual(out.properties["content-type"], "application/json")
        self.assertEqual(json.loads(out.content.value_at(0)),
                         {"code": 424, "message": "prediction failure", "error": "broke"})
        out = Output().error("no", code=400, message="bad")
        self.assertEqual(json.loads(out.content.value_at(0))["code"], 400)

    def test_numpy_json(self):
        try:
            import numpy
        except ImportError:
            self.skipTest("numpy is not installed")
        out = Output().add_as_json({"f": numpy.float32(1.5), "i": numpy.int64(3), "a": numpy.arange(3)})
        self.assertEqual(json.loads(out.content.value_at(0)), {"f": 1.5, "i": 3, "a": [0, 1, 2]})

    def test_stream_and_finalize(self):
        calls = []
        out = Output().add_stream_content(iter(["a"]), output_formatter=str.upper)
        out.finalize(calls.append, 1).finalize(calls.append, 2)
        self.assertEqual(list(out.stream_content), ["a"])
        self.assertIs(out.stream_output_formatter, str.upper)
        out.execute_finalize()
        self.assertEqual(calls, [1, 2])

    def test_encode_decode(self):
        from djl_python import Input
        from djl_python.encode_decode import decode, encode
        from djl_python.pair_list import PairList

        inp = Input({}, PairList(["data"], [b'{"inputs": "x"}']))
        self.assertEqual(decode(inp, "application/json"), {"inputs": "x"})
        self.assertEqual(decode(inp, "text/plain"), {"inputs": ['{"inputs": "x"}']})
        out = Output()
        encode(out, {"y": 1}, "application/json")
        self.assertEqual((out.content.value_at(0), out.properties["Content-Type"]), (b'{"y":1}', "application/json"))
        out = Output()
        encode(out, [{"a": 1}], "text/csv")
        self.assertEqual(out.content.value_at(0).decode().splitlines(), ["a", "1"])


if __name__ == "__main__":
    unittest.main()
