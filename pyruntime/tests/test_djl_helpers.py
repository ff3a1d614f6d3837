"""The djl_python helpers handler authors use: test_model and encode_decode.

Written from DJL Serving's documented behaviour of djl_python.test_model and
djl_python.encode_decode; DJL's own unit tests of these modules are run
against the shim from Go (pyruntime's TestDJLPythonTests) where
DJL's source is at hand.
"""

import os
import struct
import subprocess
import sys
import unittest
from unittest import mock

import switchyard_runtime

switchyard_runtime.ensure_djl_python()

from djl_python import Input, Output  # noqa: E402
from djl_python import encode_decode, test_model  # noqa: E402

from tests.helpers import RUNTIME_DIR, keep_import_state, make_model, numpy_or_skip  # noqa: E402

TIMEOUT = 60

# A DJL-style handler: it initializes on the first call, answers a batch item
# by item, and echoes what it was given.
HANDLER = """
from djl_python import Input, Output

initialized = []


def handle(inputs: Input):
    props = inputs.get_properties()
    if not initialized:
        initialized.append(dict(props))
    if inputs.is_empty():
        return None
    out = Output()
    if inputs.is_batch():
        for i, item in enumerate(inputs.get_batches()):
            out.add_as_json({"echo": item.get_as_json(), "props": item.get_properties()}, batch_index=i)
        return out
    return out.add_as_json({"echo": inputs.get_data(), "model_id": props.get("model_id"),
                            "greeting": props.get("greeting"), "model_dir": props.get("model_dir")})


def shout(inputs: Input):
    return Output().add(inputs.get_as_string().upper())
"""

# A rolling-batch handler as DJL's test_model drives one: each batch item's
# answer is a binary-encoded dict with the next piece ("data") and "last".
ROLLING = """
import struct

from djl_python import Output

_sent = {}


def _encode(d):
    out = struct.pack(">h", len(d))
    for k, v in d.items():
        for s in (k, str(v)):
            raw = s.encode("utf-8")
            out += struct.pack(">i", len(raw)) + raw
    return out


def handle(inputs):
    out = Output()
    for i, item in enumerate(inputs.get_batches()):
        text = item.get_as_json()["inputs"]
        if text:
            _sent.setdefault("queue", []).append(list(text))
    pending = _sent["queue"]
    for i, letters in enumerate(pending):
        piece = letters.pop(0)
        out.add(_encode({"data": piece, "last": "true" if not letters else "false"}), key="batch_%d" % i)
    _sent["queue"] = [p for p in pending if p]
    return out
"""


class RequestTest(unittest.TestCase):
    def test_json_and_text(self):
        req = test_model.create_json_request({"inputs": "hi"})
        self.assertEqual(req.get_properties(), {"device_id": "-1", "content-type": "application/json"})
        self.assertEqual(req.get_as_json(), {"inputs": "hi"})
        req = test_model.create_text_request("héllo", key="prompt")
        self.assertEqual((req.get_property("content-type"), req.get_as_string("prompt")), ("text/plain", "héllo"))
        with self.assertRaises(KeyError):
            req.get_as_string("other")

    def test_3p(self):
        req = test_model.create_3p_request({"a": 1}, stream=True)
        self.assertEqual(req.get_property("X-Amzn-SageMaker-Forwarded-Api"), "InvokeEndpointWithResponseStream")
        self.assertEqual(test_model.create_3p_request({}).get_property("X-Amzn-SageMaker-Forwarded-Api"),
                         "InvokeEndpoint")

    def test_numpy_and_npz(self):
        numpy = numpy_or_skip(self)
        arrays = [numpy.arange(6, dtype=numpy.float32).reshape(2, 3), numpy.array([7], dtype=numpy.int64)]
        for name, req, read in [("ndlist", test_model.create_numpy_request(arrays), Input.get_as_numpy),
                                ("npz", test_model.create_npz_request(arrays), Input.get_as_npz)]:
            with self.subTest(name):
                got = read(req)
                self.assertEqual(len(got), 2)
                for a, b in zip(got, arrays):
                    self.assertTrue(numpy.array_equal(a, b))
                    self.assertEqual(a.dtype, b.dtype)

    def test_concurrent_batch(self):
        req = test_model.create_concurrent_batch_request(
            [{"inputs": "a"}, {"inputs": "b"}], [{"x": "1"}, {"x": "2", "y": "3"}], {"engine": "Python"})
        self.assertEqual(req.get_batch_size(), 2)
        self.assertEqual(req.get_property("engine"), "Python")
        self.assertEqual(req.get_function_name(), "handle")
        first, second = req.get_batches()
        self.assertEqual((first.get_properties(), first.get_as_json()), ({"x": "1"}, {"inputs": "a"}))
        self.assertEqual((second.get_properties(), second.get_as_json()), ({"x": "2", "y": "3"}, {"inputs": "b"}))
        named = test_model.create_concurrent_batch_request([{}], serving_properties={"handler": "other"})
        self.assertEqual(named.get_function_name(), "other")

    def test_extract_output(self):
        numpy = numpy_or_skip(self)
        arrays = [numpy.ones((1, 3))]
        out = Output().add_as_json({"k": "v"}, "dict").add_as_numpy(arrays, "nd").add_as_npz(arrays, "npz")
        out.add("raw", key="text")
        self.assertEqual(test_model.extract_output_as_string(out, "dict"), '{"k":"v"}')
        self.assertEqual(test_model.extract_output_as_bytes(out, "text"), b"raw")
        self.assertTrue(numpy.array_equal(test_model.extract_output_as_numpy(out, "nd")[0], arrays[0]))
        self.assertTrue(numpy.array_equal(test_model.extract_output_as_npz(out, "npz")[0], arrays[0]))

    def test_create_request_from_the_command_line(self):
        folder = make_model(self, {"in.json": '{"inputs": 1}'})
        req = test_model.create_request([os.path.join(folder, "in.json"), "note=hello"], ["a=b"])
        self.assertEqual(req.get_property("content-type"), "application/json")
        self.assertEqual((req.get_as_json(), req.get_as_string("note"), req.get_property("a")),
                         ({"inputs": 1}, "hello", "b"))
        text = test_model.create_request(['{"x": 1}'], None)
        self.assertEqual((text.get_property("content-type"), text.get_as_json()), ("application/json", {"x": 1}))
        with self.assertRaises(ValueError):
            test_model.create_request(["x"], ["no-equals-sign"])

    def test_decode_encoded_output_binary(self):
        raw = struct.pack(">h", 2)
        for s in ("data", "tok", "last", "true"):
            raw += struct.pack(">i", len(s)) + s.encode()
        self.assertEqual(test_model.decode_encoded_output_binary(raw), {"data": "tok", "last": "true"})


class PrintTest(unittest.TestCase):
    def test_input_str(self):
        req = test_model.create_text_request("hi", key="mydata")
        self.assertEqual(str(req), "properties: {'device_id': '-1', 'content-type': 'text/plain'}\nmydata: hi")

    def test_output_str_and_finalize(self):
        out = Output(201, "Created").add_property("a", "b").add("x")
        self.assertIn('"code": 201', str(out))
        self.assertIn("\"data\": \"type: <class 'bytes'>\"", str(out))
        self.assertEqual(out.get_property("a"), "b")
        self.assertEqual(Output().finalize(lambda a, b: a + b, 1, 2).execute_finalize(), 3)


class HandlerTest(unittest.TestCase):
    def setUp(self):
        keep_import_state(self)
        cwd = os.getcwd()
        self.addCleanup(os.chdir, cwd)

    def test_inference(self):
        folder = make_model(self, {"model.py": HANDLER,
                                   "serving.properties": "engine=Python\noption.model_id=m1\nbatch_size=4\n"})
        with mock.patch.dict(os.environ, {"OPTION_GREETING": "hi", "OPTION_MODEL_ID": "from-env"}):
            handler = test_model.TestHandler("model.py", folder)
        self.assertEqual(handler.serving_properties,
                         {"engine": "Python", "model_id": "m1", "greeting": "hi", "batch_size": "4"})
        out = handler.inference(test_model.create_json_request({"inputs": "x"}))
        self.assertEqual(test_model.extract_output_as_input(out).get_as_json(),
                         {"echo": {"inputs": "x"}, "model_id": "m1", "greeting": "hi",
                          "model_dir": os.path.realpath(folder)})
        shout = test_model.create_text_request("abc")
        shout.function_name = "shout"
        self.assertEqual(test_model.extract_output_as_string(handler.inference(shout)), "ABC")

    def test_inference_batch(self):
        folder = make_model(self, {"model.py": HANDLER, "serving.properties": "batch_size=8\n"})
        handler = test_model.TestHandler("model.py", folder)
        out = handler.inference_batch([{"inputs": "a"}, {"inputs": "b"}], [{"t": "0"}, {"t": "1"}])
        got = test_model.extract_output_as_input(out)
        self.assertEqual(got.get_as_json("batch_1.data"), {"echo": {"inputs": "b"}, "props": {"t": "1"}})

    def test_module_entry_point(self):
        folder = make_model(self, {"model.py": HANDLER})
        module = test_model.TestHandler("model.py", folder).service.module
        handler = test_model.TestHandler(module)
        out = handler.inference(test_model.create_text_request("q"))
        self.assertEqual(test_model.extract_output_as_input(out).get_as_json()["echo"], "q")

    def test_inference_rolling_batch(self):
        folder = make_model(self, {"model.py": ROLLING})
        handler = test_model.TestHandler("model.py", folder)
        got = handler.inference_rolling_batch([{"inputs": "abc"}, {"inputs": "hello"}])
        self.assertEqual(got, {0: "abc", 1: "hello"})

    def test_command_line(self):
        folder = make_model(self, {"model.py": HANDLER})
        env = dict(os.environ, PYTHONPATH=os.path.join(RUNTIME_DIR, "shim"), PYTHONDONTWRITEBYTECODE="1")
        out = subprocess.run([sys.executable, "-m", "djl_python.test_model", "--model-dir", folder,
                              "--input", '{"inputs": "cli"}'],
                             check=False, capture_output=True, timeout=TIMEOUT, env=env)
        self.assertEqual(out.returncode, 0, out.stderr.decode())
        lines = out.stdout.decode().splitlines()
        self.assertTrue(lines[0].startswith("output: "), lines)
        self.assertIn('"code": 200', out.stdout.decode())
        self.assertIn('data: {"echo":{"inputs":"cli"}', lines[-1])


class EncodeDecodeTest(unittest.TestCase):
    def test_csv_needs_a_known_header(self):
        with self.assertRaises(ValueError) as ctx:
            encode_decode.decode_csv(test_model.create_text_request("a,b\n1,2"))
        for column in ("question", "context", "inputs"):
            self.assertIn(column, str(ctx.exception))

    def test_csv_rows(self):
        cases = [("inputs column", "inputs,other\nx,1\ny,2", {"inputs": ["x", "y"]}),
                 ("question and context", "Question,context\nq,c",
                  {"inputs": [{"Question": "q", "context": "c"}]})]
        for name, text, want in cases:
            with self.subTest(name):
                self.assertEqual(encode_decode.decode(test_model.create_text_request(text), "text/csv"), want)

    def test_numeric_csv(self):
        numpy = numpy_or_skip(self)
        got = encode_decode.decode_csv(test_model.create_text_request("1,2\n3,4"), require_headers=False)
        self.assertTrue(numpy.array_equal(got, numpy.array([[1.0, 2.0], [3.0, 4.0]])))
        with self.assertRaises(ValueError):
            encode_decode.decode_csv(test_model.create_text_request("1,x"), require_headers=False)

    def test_encode_csv(self):
        out = Output()
        encode_decode.encode(out, [{"name": "a", "n": 1}, {"name": "b", "n": 2}], "text/csv")
        self.assertEqual(out.get_property("Content-Type"), "text/csv")
        self.assertEqual(test_model.extract_output_as_string(out).splitlines(), ["name,n", "a,1", "b,2"])

    def test_decode_by_type(self):
        cases = [
            (None, b"", {"inputs": ""}),
            (None, b'{"a": 1}', {"a": 1}),
            ("application/json; charset=utf-8", b'{"a": 1}', {"a": 1}),
            ("text/plain", b"hi", {"inputs": ["hi"]}),
            ("audio/wav", b"\x00\x01", {"inputs": b"\x00\x01"}),
            ("application/x-www-form-urlencoded", b"a=1&b=2", {"inputs": "a=1&b=2"}),
            ("application/octet-stream", b"\xff", {"inputs": b"\xff"}),
        ]
        for kind, body, want in cases:
            with self.subTest(kind=kind, body=body):
                req = Input()
                req.content.add(key="data", value=body)
                self.assertEqual(encode_decode.decode(req, kind), want)

    def test_encode_by_type(self):
        cases = [(None, "application/json"), ("application/json", "application/json"),
                 ("tensor/npz", "tensor/npz"), ("custom/type", "tensor/ndlist")]
        numpy = numpy_or_skip(self)
        for kind, header in cases:
            with self.subTest(kind=kind):
                out = Output()
                encode_decode.encode(out, [numpy.ones(2)] if "json" not in (kind or "json") else {"a": 1}, kind)
                self.assertEqual(out.get_property("Content-Type"), header)


if __name__ == "__main__":
    unittest.main()
