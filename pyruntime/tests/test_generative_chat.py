"""The toy chat model's handler (examples/models/chat/model.py) end to end.

The model folder is found through SWITCHYARD_CHAT_MODEL_DIR, else at
examples/models/chat of the checkout; the tests are skipped where it is not
there or torch and sentencepiece are missing.
"""

# These tests look inside the objects they check.
# pylint: disable=protected-access

import importlib
import json
import os
import sys
import threading
import unittest

from switchyard_runtime import loader
from switchyard_runtime.djl.inputs import Input
from switchyard_runtime.djl.pairlist import PairList
from tests.helpers import REPO_DIR, start_worker, stream_parts

try:  # imported once here, so that no test's import cleanup drops torch from sys.modules
    for _name in ("torch", "sentencepiece"):
        importlib.import_module(_name)
    HAVE_TORCH = True
except ImportError:
    HAVE_TORCH = False

CHAT_DIR = os.environ.get("SWITCHYARD_CHAT_MODEL_DIR") or os.path.join(
    REPO_DIR, "examples", "models", "chat")
HAVE_MODEL = os.path.isfile(os.path.join(CHAT_DIR, "model.py")) and os.path.isfile(
    os.path.join(CHAT_DIR, "pytorch_model.bin"))
SKIP = not (HAVE_TORCH and HAVE_MODEL)
WHY = "needs torch, sentencepiece and the chat model folder (%s)" % CHAT_DIR
TIMEOUT = 60  # a bound on waits so a broken handler fails instead of hanging
LONG = [{"role": "user", "content": "x"}]  # greedy answers to this run to max_tokens (no end token)
QUESTION = [{"role": "user", "content": "What does cruft mean?"}]


def request(body, **props):
    """Returns the Input of a JSON request (body as bytes, or to encode) with props."""
    data = body if isinstance(body, bytes) else json.dumps(body).encode()
    return Input(dict(props, **{"content-type": "application/json"}), PairList(["data"], [data]))


def read_lines(stream):
    """Returns a stream's JSON lines, each checked to end in exactly one newline."""
    raw = list(stream)
    for line in raw:
        assert line.endswith(b"\n") and line.count(b"\n") == 1, line
    return [json.loads(line) for line in raw]


class Spy:
    """Spy records the engine Sequences submitted and sets an event when one is canceled."""

    def __init__(self, engine):
        self.seqs = []
        self.canceled = threading.Event()
        self._submit = engine.submit
        engine.submit = self.submit

    def submit(self, *args, **kwargs):
        """Submits a sequence whose cancel is recorded."""
        seq = self._submit(*args, **kwargs)
        cancel = seq.cancel

        def observed():
            cancel()
            self.canceled.set()
        seq.cancel = observed
        self.seqs.append(seq)
        return seq


@unittest.skipIf(SKIP, WHY)
class ChatHandleTest(unittest.TestCase):
    """handle() called with Input objects, one engine for the class."""

    @classmethod
    def setUpClass(cls):
        cls._path, cls._modules = list(sys.path), set(sys.modules)
        sys.path.insert(0, CHAT_DIR)
        cls.module = loader.import_path(os.path.join(CHAT_DIR, "model.py"))
        cls.module.handle(Input({"model_dir": CHAT_DIR, "max_rolling_batch_size": "4", "threads": "2"}))
        cls.engine = cls.module._model.engine

    @classmethod
    def tearDownClass(cls):
        cls.module._model.close()
        sys.path[:] = cls._path
        for name in set(sys.modules) - cls._modules:
            del sys.modules[name]

    def setUp(self):
        self.spy = Spy(self.engine)
        self.addCleanup(self._unspy)

    def _unspy(self):
        self.engine.submit = self.spy._submit

    def handle(self, body, **props):
        """Returns the handler's Output for body."""
        return self.module.handle(request(body, **props))

    def test_streamed_chat(self):
        out = self.handle({"messages": QUESTION, "stream": True, "max_tokens": 40, "temperature": 0})
        self.assertEqual((out.code, out.properties), (200, {"content-type": "application/jsonlines"}))
        lines = read_lines(out.stream_content)
        tokens, last = stream_parts(self, lines)
        self.assertEqual(len(lines), len(tokens) + 1)
        self.assertEqual(last["finish_reason"], "eos")
        self.assertEqual("".join(token["text"] for token in tokens), last["generated_text"])
        self.assertTrue(last["generated_text"].startswith("cruft"), last["generated_text"])
        usage = last["usage"]
        self.assertEqual(usage["completion_tokens"], len(tokens))
        self.assertEqual(usage["prompt_tokens"], len(self.engine.encode(self.engine.render_chat(QUESTION))))

    def test_max_tokens_honoured(self):
        cases = [("chat", {"messages": LONG, "stream": True, "max_tokens": n, "temperature": 0}, n)
                 for n in (1, 3, 17)] + [
            ("generation", {"inputs": "<|user|>x<|end|><|assistant|>", "stream": True,
                            "parameters": {"max_new_tokens": 5, "do_sample": False}}, 5),
            ("completion", {"prompt": "<|user|>x<|end|><|assistant|>", "stream": True, "max_tokens": 2,
                            "temperature": 0}, 2)]
        for name, body, n in cases:
            with self.subTest(name, n=n):
                lines = read_lines(self.handle(body).stream_content)
                tokens, last = stream_parts(self, lines)
                self.assertEqual(len(tokens), n)
                self.assertEqual(last["usage"]["completion_tokens"], n)
                self.assertEqual(last["finish_reason"], "length")
                self.assertEqual("".join(token["text"] for token in tokens), last["generated_text"])

    def test_greedy_is_repeatable(self):
        for body in ({"messages": QUESTION, "temperature": 0},
                     {"messages": QUESTION, "temperature": 0.9, "seed": 11},
                     {"inputs": "<|user|>Define hack.<|end|><|assistant|>", "parameters": {"do_sample": False}}):
            with self.subTest(body=body):
                first, second = (json.loads(self.handle(body).content.values[0]) for _ in range(2))
                self.assertEqual(first.get("choices", first), second.get("choices", second))

    def test_whole_chat_completion(self):
        out = self.handle({"model": "anything", "messages": [{"role": "system", "content": "Be brief."}] + QUESTION,
                           "max_tokens": 60, "temperature": 0, "max_new_tokens": 2})
        self.assertEqual(out.properties["content-type"], "application/json")
        self.assertIn("max_new_tokens is ignored", out.properties["x-switchyard-warning"])
        answer = json.loads(out.content.values[0])
        self.assertEqual(set(answer), {"id", "object", "created", "model", "choices", "usage"})
        self.assertTrue(answer["id"].startswith("chatcmpl-"))
        self.assertEqual((answer["object"], answer["model"]), ("chat.completion", "chat"))
        choice = answer["choices"][0]
        self.assertEqual((choice["index"], choice["message"]["role"], choice["finish_reason"]),
                         (0, "assistant", "stop"))
        self.assertGreater(answer["usage"]["completion_tokens"], 2)
        self.assertEqual(self.spy.seqs[-1].text, choice["message"]["content"])

    def test_bad_requests(self):
        words = " ".join(["cruft"] * 6000)  # the prompt that used to be cut to its last 255 tokens
        tool = {"type": "function", "function": {"name": "f"}}
        cases = [({"messages": []}, "messages must not be empty"),
                 ({"inputs": ""}, "inputs must not be empty"),
                 ({"messages": QUESTION, "top_p": 0}, "top_p must be a number in (0, 1], not 0"),
                 ({"messages": [{"role": "user", "content": words}]},
                  "this model's context length is 256 tokens, and no room is left for an answer after "),
                 ({"messages": QUESTION, "max_tokens": 250},
                  "this model's context length is 256 tokens, and the request asks for "),
                 ({"messages": QUESTION, "n": 2}, "n=2 asks for more choices than this model returns: at most 1"),
                 ({"messages": QUESTION, "tools": [tool]}, "tools: this model's handler does not call tools")]
        for body, message in cases:
            with self.subTest(message):
                out = self.handle(body)
                self.assertEqual(out.code, 400)
                self.assertTrue(out.message.startswith(message), out.message)
        self.assertEqual(self.spy.seqs, [])

    def test_close_before_reading_cancels(self):
        with self.engine._cv:  # holds the scheduler between steps, so the cancel comes first
            out = self.handle({"messages": LONG, "stream": True, "max_tokens": 200, "temperature": 0})
            out.stream_content.close()
        seq = self.spy.seqs[-1]
        self.assertEqual(list(seq), [])
        self.assertEqual((seq.finish_reason, seq.generated_tokens), ("canceled", 0))

    def test_close_mid_stream_cancels(self):
        out = self.handle({"messages": LONG, "stream": True, "max_tokens": 200, "temperature": 0})
        first = json.loads(next(out.stream_content))
        self.assertEqual(set(first), {"token"})
        out.stream_content.close()
        self.assertTrue(self.spy.canceled.is_set())
        seq = self.spy.seqs[-1]
        list(seq)  # the engine ends it at its next step
        self.assertEqual(seq.finish_reason, "canceled")
        self.assertLess(seq.generated_tokens, 200)

    def test_dynamic_batch(self):
        bodies = [{"messages": QUESTION, "temperature": 0, "max_tokens": 30},
                  {"messages": "nope"},
                  {"inputs": "<|user|>Define hack.<|end|><|assistant|>", "stream": True,
                   "parameters": {"do_sample": False, "details": True}}]
        props = {"batch_size": str(len(bodies))}
        items = PairList()
        for i, body in enumerate(bodies):
            props["batch_%03d.content-type" % i] = "application/json"
            items.add("batch_%03d.data" % i, json.dumps(body).encode())
        out = self.module.handle(Input(props, items))
        self.assertEqual(out.content.keys, ["batch_0.data", "batch_1.data", "batch_2.data"])
        alone = json.loads(self.handle(bodies[0]).content.values[0])
        self.assertEqual(json.loads(out.content.values[0])["choices"], alone["choices"])
        self.assertEqual((out.properties["batch_1.code"], out.properties["batch_1.message"]),
                         ("400", "messages must be a list, not a string"))
        whole = json.loads(out.content.values[2])
        self.assertEqual(whole["details"]["finish_reason"], "eos")
        self.assertTrue(whole["generated_text"].startswith("hack"))


@unittest.skipIf(SKIP, WHY)
class ChatWorkerTest(unittest.TestCase):
    """The chat model served by the runtime over a socket, as rolling-batch (tracked) requests."""

    def setUp(self):
        self.worker = start_worker(self, CHAT_DIR)
        resp = self.worker.init(rolling_batch="scheduler", max_rolling_batch_size="4", threads="2",
                                model_name="chat-test")
        self.assertEqual((resp.code, resp.props), (200, {
            "rolling_batch": "scheduler", "context_length": "256", "supports_tools": "false", "max_choices": "1"}))
        model = self.worker.server.handler.module._model
        self.addCleanup(model.close)  # runs before start_worker's thread check
        self.spy = Spy(model.engine)

    def start(self, tid, body):
        """Sends a tracked request with a JSON body."""
        self.worker.send({"request_tracking_id": tid, "content-type": "application/json"},
                         [("data", json.dumps(body).encode())])

    def test_two_streams_and_a_whole_answer(self):
        self.start("a", {"messages": LONG, "stream": True, "max_tokens": 6, "temperature": 0})
        self.start("b", {"messages": QUESTION, "stream": True, "max_tokens": 5, "temperature": 0})
        self.start("c", {"messages": QUESTION, "max_tokens": 5, "temperature": 0})
        lines, ends, whole = {"a": [], "b": []}, {}, None
        for _ in range(40):
            resp = self.worker.read(max_chunks=1)
            tid = resp.props["request_tracking_id"]
            if not resp.streamed:
                whole = json.loads(resp.values[0])
            else:
                lines[tid] += [json.loads(c) for c in resp.chunks]
                if resp.error is not None:
                    ends[tid] = resp.error
            if len(ends) == 2 and whole is not None:
                break
        self.assertEqual(ends, {"a": "", "b": ""})
        for tid, n in (("a", 6), ("b", 5)):
            tokens, last = stream_parts(self, lines[tid])
            self.assertEqual((len(tokens), last["finish_reason"], last["usage"]["completion_tokens"]),
                             (n, "length", n))
            self.assertEqual("".join(token["text"] for token in tokens), last["generated_text"])
        self.assertEqual(whole["choices"][0]["message"]["content"], lines["b"][-1]["generated_text"])
        self.assertEqual(whole["model"], "chat-test")

    def test_cancel(self):
        self.start("long", {"messages": LONG, "stream": True, "max_tokens": 200, "temperature": 0})
        first = self.worker.read(max_chunks=1)
        self.assertEqual((first.props["content-type"], set(json.loads(first.chunks[0]))),
                         ("application/jsonlines", {"token"}))
        self.worker.send({"request_tracking_id": "long", "cancel": "true"})
        for _ in range(250):  # frames sent before the cancel, then its end frame
            resp = self.worker.read(max_chunks=1)
            if resp.error is not None:
                break
        self.assertEqual(resp.error, "canceled")
        self.assertTrue(self.spy.canceled.wait(TIMEOUT))


if __name__ == "__main__":
    unittest.main()
