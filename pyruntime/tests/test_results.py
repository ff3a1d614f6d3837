"""Handler results and exceptions to status codes."""

import io
import json
import unittest

from djl_python import Output
from switchyard_runtime import frames, results
from switchyard_runtime.wire import protocol


class OutOfMemoryError(RuntimeError):
    """Named like torch.cuda.OutOfMemoryError."""


class FakeDJLOutput:
    """An object shaped like a real djl_python Output (its own PairList class)."""

    class Pairs:
        """Pairs is a PairList of another class."""
        def __init__(self):
            self.keys, self.values = ["data"], [bytearray(b"x")]

    def __init__(self):
        self.code, self.message, self.properties = 200, "OK", {"n": 5}
        self.content = self.Pairs()


class ResultTest(unittest.TestCase):
    def test_from_result(self):
        cases = [
            ("None", None, 204, "No content"),
            ("Output", Output(code=201, message="made").add("x"), 201, "made"),
            ("DJL-shaped output", FakeDJLOutput(), 200, "OK"),
            ("dict", {"a": 1}, 500, "handler returned builtins.dict, want Output or None"),
            ("string", "text", 500, "handler returned builtins.str, want Output or None"),
        ]
        for name, value, code, message in cases:
            with self.subTest(name):
                reply = results.from_result(value)
                self.assertEqual((reply.code, reply.message), (code, message))
        reply = results.from_result(FakeDJLOutput())
        self.assertEqual((reply.keys, reply.values, reply.props), (["data"], [b"x"], {"n": 5}))

    def test_from_exception(self):
        cases = [
            ("value error", ValueError("bad"), 424, "bad"),
            ("empty text", KeyError(), 424, "KeyError"),
            ("MemoryError", MemoryError(), 507, "MemoryError"),
            ("torch OOM", OutOfMemoryError("CUDA out of memory. Tried"), 507, "CUDA out of memory. Tried"),
            ("text", RuntimeError("CUDA error: out of memory"), 507, "CUDA error: out of memory"),
        ]
        for name, exc, code, message in cases:
            with self.subTest(name):
                reply = results.from_exception(exc)
                self.assertEqual((reply.code, reply.message), (code, message))
                body = json.loads(reply.values[0])
                self.assertEqual((body["code"], body["error"]), (code, message))
                self.assertEqual(reply.props, {"content-type": "application/json"})

    def test_last_traceback_line(self):
        try:
            compile("def broken(:\n", "model.py", "exec")
        except SyntaxError as exc:
            self.assertEqual(results.last_traceback_line(exc), "SyntaxError: invalid syntax")
        try:
            import switchyard_no_such_module  # noqa: F401
        except ImportError as exc:
            self.assertEqual(results.last_traceback_line(exc),
                             "ModuleNotFoundError: No module named 'switchyard_no_such_module'")
        exc = OutOfMemoryError("x")
        self.assertEqual(results.last_traceback_line(exc), "%s.OutOfMemoryError: x" % __name__)

    def test_chunk_bytes(self):
        cases = [("str", "é", "é".encode()), ("bytes", b"\x00", b"\x00"), ("dict", {"a": 1}, b'{"a":1}'),
                 ("list", [1], b"[1]"), ("output", Output().add("p").add("q", key="k"), b"pq")]
        for name, item, want in cases:
            with self.subTest(name):
                self.assertEqual(results.chunk_bytes(item), want)
        self.assertEqual(results.chunk_bytes("a", formatter=str.upper), b"A")


def decoded(frame):
    """Returns the response frame decoded."""
    return protocol.read_response(io.BytesIO(frame).read)


class FramesTest(unittest.TestCase):
    def test_own_frame(self):
        out = Output(code=201, message="made").add_property("k", "v").add("x")
        out.content.add("raw", {"a": 1})  # put in directly, as a handler may: sent as JSON, as add would
        resp = decoded(frames.own_frame(out))
        self.assertEqual((resp.code, resp.message, resp.props, resp.keys, resp.values),
                         (201, "made", {"k": "v"}, ["data", "raw"], [b"x", b'{"a":1}']))

    def test_not_own_frame(self):
        cases = [("None", None), ("stream", Output().add_stream_content(iter(()))),
                 ("finalize", Output().finalize(print)), ("DJL-shaped output", FakeDJLOutput())]
        for name, result in cases:
            with self.subTest(name):
                self.assertIsNone(frames.own_frame(result))

    def test_unencodable_is_500(self):
        reply = results.Reply(70000, "too big a code")
        resp = decoded(frames.reply_frame(reply, {}))
        self.assertEqual(resp.code, 500)
        self.assertIn("is not a 16-bit integer", json.loads(resp.values[0])["error"])
        resp = decoded(frames.own_frame(Output(code=70000)))
        self.assertEqual(resp.code, 500)


if __name__ == "__main__":
    unittest.main()
