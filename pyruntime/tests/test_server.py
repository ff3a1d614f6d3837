"""The worker end to end over a socketpair: initialization, requests, streams, errors."""

import json
import os
import unittest

from tests.helpers import ECHO_MODEL, make_model, start_worker

NO_MODEL = ("no model.py in {dir} and no option.entryPoint, and no Hugging Face model either "
            "(config.json in the folder, or option.model_id naming a folder)")


class InitTest(unittest.TestCase):
    def test_loaded(self):
        worker = start_worker(self, device_id="3")
        resp = worker.init(model_id="m", max_rolling_batch_size="4")
        self.assertEqual((resp.code, resp.message, resp.props), (200, "OK", {"rolling_batch": "disable"}))
        init = worker.server.handler.module.STATE["init"]
        self.assertEqual((init["model_id"], init["device_id"], init["model_dir"]), ("m", "3", ECHO_MODEL))
        self.assertEqual(worker.close(), 0)

    def test_rolling_batch_echoed(self):
        worker = start_worker(self)
        self.assertEqual(worker.init(rolling_batch="vllm").props, {"rolling_batch": "vllm"})

    def test_failed_loads(self):
        cases = [
            ("syntax error", {"model.py": "def broken(:\n"}, {}, 500, "SyntaxError: invalid syntax"),
            ("missing module", {"model.py": "import tensorrt_llm_absent\n"}, {}, 500,
             "ModuleNotFoundError: No module named 'tensorrt_llm_absent'"),
            ("missing model.py", {"README": "x"}, {}, 500,
             NO_MODEL),
            ("init raises", {"model.py": "def handle(inputs):\n    raise ValueError('no weights')\n"}, {}, 500,
             "ValueError: no weights"),
            ("init out of memory", {"model.py": "def handle(inputs):\n    raise MemoryError()\n"}, {}, 507,
             "MemoryError"),
            ("init CUDA OOM text", {"model.py": "def handle(i):\n    raise RuntimeError('CUDA out of memory')\n"},
             {}, 507, "RuntimeError: CUDA out of memory"),
            ("init returns an error Output", {"model.py": (
                "from djl_python import Output\n"
                "def handle(inputs):\n    return Output(code=503, message='not today')\n")}, {}, 503, "not today"),
            ("handler property names a missing function", {"model.py": "def handle(i):\n    pass\n"},
             {"handler": "predict"}, 500, "handler function 'predict' not found in {dir}/model.py"),
        ]
        for name, files, props, code, message in cases:
            with self.subTest(name):
                folder = make_model(self, files)
                worker = start_worker(self, folder)
                resp = worker.init(**props)
                self.assertEqual((resp.code, resp.message), (code, message.format(dir=folder)))
                self.assertEqual(worker.close(), 1)

    def test_closed_before_init(self):
        worker = start_worker(self)
        self.assertEqual(worker.close(), 1)

    def test_init_output_below_300(self):
        folder = make_model(self, {"model.py": """
            from djl_python import Output
            def handle(inputs):
                if inputs.is_empty():
                    return Output(code=202).add_property("x-ready", "yes")
            """})
        resp = start_worker(self, folder).init()
        self.assertEqual((resp.code, resp.props), (200, {"x-ready": "yes", "rolling_batch": "disable"}))


class RequestTest(unittest.TestCase):
    def setUp(self):
        self.worker = start_worker(self)
        self.assertEqual(self.worker.init().code, 200)

    def call(self, handler, body=b"", **props):
        """Sends body to the echo model's handler function and returns the response."""
        props["handler"] = handler
        return self.worker.call(props, [("data", body)])

    def test_echo(self):
        for body in (b"hello", b"", bytes(range(256)) * 1000):
            with self.subTest(size=len(body)):
                resp = self.worker.call({"content-type": "text/plain"}, [("data", body)])
                self.assertEqual((resp.code, resp.keys, resp.values), (200, ["data"], [body]))
                self.assertEqual(resp.props, {"content-type": "text/plain"})

    def test_status_codes(self):
        cases = [
            ("nothing", 204, "No content", None),
            ("fail", 424, "bad input: x", "bad input: x"),
            ("oom", 507, "MemoryError", "MemoryError"),
            ("cuda_oom", 507, "CUDA error: out of memory", "CUDA error: out of memory"),
            ("wrong_type", 500, "handler returned builtins.dict, want Output or None",
             "handler returned builtins.dict, want Output or None"),
            ("no_such_function", 424, "handler function 'no_such_function' not found in %s"
             % os.path.join(ECHO_MODEL, "model.py"), None),
        ]
        for handler, code, message, error in cases:
            with self.subTest(handler):
                resp = self.call(handler, b"x")
                self.assertEqual((resp.code, resp.message), (code, message))
                if error is not None:
                    body = json.loads(resp.values[0])
                    self.assertEqual((body["code"], body["error"]), (code, error))
        self.assertEqual(self.call("handle", b"still alive").values, [b"still alive"])

    def test_batch_of_four(self):
        props = {"batch_size": "4", "handler": "batch"}
        items = []
        for i in range(4):
            props["batch_%03d.content-type" % i] = "text/plain"
            props["batch_%03d.tag" % i] = "t%d" % i
            items.append(("batch_%03d.data" % i, b"item%d" % i))
        resp = self.worker.call(props, items)
        self.assertEqual(resp.code, 200)
        self.assertEqual(resp.keys, ["batch_%d.data" % i for i in range(4)])
        self.assertEqual(resp.values, [b"ITEM%d" % i for i in range(4)])
        self.assertEqual(resp.props, {"batch_%d.tag" % i: "t%d" % i for i in range(4)})
        self.assertEqual(self.worker.server.handler.module.STATE["batch_sizes"], [4])

    def test_stream(self):
        resp = self.call("stream")
        self.assertEqual((resp.code, resp.chunks, resp.error), (200, [b"a", b"b", b'{"c":1}'], ""))

    def test_stream_error(self):
        resp = self.call("stream_fail")
        self.assertEqual((resp.chunks, resp.error), ([b"first"], "generator broke"))
        self.assertEqual(self.call("handle", b"next").values, [b"next"])

    def test_async_handlers_inline(self):
        self.assertEqual(self.call("coroutine", b"q").values, [b"async:q"])
        for handler, chunks in [("agen", [b"x", b"y"]), ("sync_with_async_stream", [b"p1", b"p2"]),
                                ("async_with_sync_stream", [b"s1", b"s2"])]:
            with self.subTest(handler):
                resp = self.call(handler)
                self.assertEqual((resp.chunks, resp.error), (chunks, ""))

    def test_finalize_runs_after_send(self):
        self.assertEqual(self.call("finalized", b"f1").values, [b"done"])
        self.assertEqual(self.call("handle", b"sync").values, [b"sync"])
        self.assertEqual(self.worker.server.handler.module.STATE["finalized"], "f1")

    def test_device_and_model_dir_on_every_request(self):
        folder = make_model(self, {"model.py": """
            from djl_python import Output
            def handle(inputs):
                if not inputs.is_empty():
                    p = inputs.get_properties()
                    return Output().add(p["device_id"] + " " + p["model_dir"])
            """})
        worker = start_worker(self, folder, device_id="1")
        worker.init()
        self.assertEqual(worker.call({}, [("data", b"x")]).values, [("1 " + folder).encode()])


if __name__ == "__main__":
    unittest.main()
