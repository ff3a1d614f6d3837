"""The vllm backend of the generative handler, on the vllm stand-in (tests/fakes/vllm)."""

# These tests look inside the objects they check.
# pylint: disable=protected-access

import json
import sys
import unittest

from switchyard_runtime.generative import vllm_backend
from switchyard_runtime.generative.handler import Settings
from switchyard_runtime.generative.outputs import Piece
from tests.helpers import make_model, start_worker, stream_parts
from tests.test_backends import FAKES, GPT2, REAL_VLLM

TIMEOUT = 60  # a bound on waits so a broken runtime fails instead of hanging
MAX_FRAMES = 100


class Completion:
    """Completion is shaped like vLLM's CompletionOutput."""
    def __init__(self, text, token_ids, finish_reason=None, stop_reason=None):
        self.text, self.token_ids = text, token_ids
        self.finish_reason, self.stop_reason = finish_reason, stop_reason


class UnitTest(unittest.TestCase):
    def test_engine_args(self):
        cases = [
            ("defaults", {}, {"model": "/m"}),
            ("options", {"max_rolling_batch_size": "8", "tensor_parallel_degree": "2", "dtype": "fp16",
                         "max_model_len": "4096", "gpu_memory_utilization": "0.8", "trust_remote_code": "TRUE"},
             {"model": "/m", "max_num_seqs": 8, "tensor_parallel_size": 2, "dtype": "float16",
              "max_model_len": 4096, "gpu_memory_utilization": 0.8, "trust_remote_code": True}),
            ("max degree and a vLLM dtype", {"tensor_parallel_degree": "max", "dtype": "auto"},
             {"model": "/m", "dtype": "auto"}),
            ("hub id", {"model_id": "org/model"}, {"model": "org/model"}),
        ]
        for name, props, want in cases:
            with self.subTest(name):
                props = dict(props, model_dir="/m")
                self.assertEqual(vllm_backend.engine_args(Settings(props)), want)

    def test_finish_reason(self):
        cases = [("length", None, "length"), ("stop", None, "eos"), ("stop", "\n", "stop"), ("stop", 13, "stop"),
                 ("abort", None, "canceled"), (None, None, "error")]
        for reason, stop_reason, want in cases:
            with self.subTest(reason=reason, stop_reason=stop_reason):
                got = vllm_backend.finish_reason(Completion("", [], reason, stop_reason))
                self.assertEqual(got, want)

    def test_deltas(self):
        deltas = vllm_backend.Deltas()
        steps = [
            (Completion("He", [1]), [(1, "He")]),
            (Completion("He", [1]), []),
            (Completion("Hello wo", [1, 2, 3]), [(2, ""), (3, "llo wo")]),
            (Completion("Hello", [1, 2, 3, 4]), [(4, "")]),  # the text shrank: a stop string was cut
        ]
        for completion, want in steps:
            self.assertEqual([(p.id, p.text) for p in deltas.pieces(completion)], want)
        self.assertIsInstance(deltas.pieces(Completion("Hello!", [1, 2, 3, 4, 5]))[0], Piece)


@unittest.skipIf(REAL_VLLM, "a real vllm is installed; the stand-in plays it here")
class VllmWorkerTest(unittest.TestCase):
    """Requests through the runtime to the built-in handler over the fake engine."""

    def setUp(self):
        folder = make_model(self, {"config.json": GPT2})
        self.worker = start_worker(self, folder)
        sys.path.insert(0, FAKES)
        resp = self.worker.init(rolling_batch="vllm", max_rolling_batch_size="4", model_name="tiny")
        self.assertEqual((resp.code, resp.props), (200, {
            "rolling_batch": "vllm", "context_length": "64", "supports_tools": "false", "max_choices": "1"}))
        self.engine = self.worker.server.handler.module._service.service.backend.engine
        self.addCleanup(self.engine.gate.release, 1000)

    def start(self, tid, body):
        """Sends a tracked request with a JSON body."""
        self.worker.send({"request_tracking_id": tid}, [("data", json.dumps(body).encode())])

    def frames(self, tid):
        """Reads one tracked stream to its end; returns its lines, end text and first frame."""
        lines, first = [], None
        for _ in range(MAX_FRAMES):
            resp = self.worker.read(max_chunks=1)
            self.assertEqual(resp.props["request_tracking_id"], tid)
            first = first or resp
            lines += [json.loads(c) for c in resp.chunks]
            if resp.error is not None:
                return lines, resp.error, first
        raise self.failureException("the stream did not end")

    def test_streamed_chat(self):
        self.start("s1", {"messages": [{"role": "user", "content": "hi"}], "stream": True, "max_tokens": 4,
                          "temperature": 0.5, "top_p": 0.9, "stop": ["zz"], "seed": 3})
        lines, end, first = self.frames("s1")
        self.assertEqual((end, first.props["content-type"]), ("", "application/jsonlines"))
        self.assertEqual(json.loads(first.chunks[0]), {"token": {"id": 100, "text": "t0"}})
        tokens, final = stream_parts(self, lines)
        self.assertEqual(tokens, [{"id": 100 + i, "text": t} for i, t in enumerate(["t0", " t1", " t2", " t3"])])
        self.assertEqual(final, {
            "token": None, "generated_text": "t0 t1 t2 t3", "finish_reason": "length",
            "usage": {"prompt_tokens": 1, "completion_tokens": 4, "total_tokens": 5}})
        self.assertEqual("".join(t["text"] for t in tokens), final["generated_text"])
        _, prompt, params = self.engine.requests[-1]
        self.assertEqual(prompt, "<user>hi<assistant>")
        self.assertEqual((params.max_tokens, params.temperature, params.top_p, params.stop, params.seed),
                         (4, 0.5, 0.9, ["zz"], 3))

    def test_finish_reasons(self):
        cases = [
            ("eos", {"prompt": "a b", "stream": True}, "eos", "t0 t1 t2 t3 t4 t5",
             ["t0", " t1", " t2", " t3", " t4", " t5"], 2),
            # the token that completes the stop string adds no text: vLLM cut it off
            ("stop string", {"prompt": "a", "stream": True, "stop": " t2"}, "stop", "t0 t1", ["t0", " t1", ""], 1),
        ]
        for name, body, reason, text, texts, prompt_tokens in cases:
            with self.subTest(name):
                self.start(name, body)
                lines, end, _ = self.frames(name)
                self.assertEqual(end, "")
                tokens, final = stream_parts(self, lines)
                self.assertEqual(tokens, [{"id": 100 + i, "text": t} for i, t in enumerate(texts)])
                self.assertEqual(final, {"token": None, "generated_text": text, "finish_reason": reason, "usage": {
                    "prompt_tokens": prompt_tokens, "completion_tokens": len(texts),
                    "total_tokens": prompt_tokens + len(texts)}})
                self.assertEqual("".join(texts), text)

    def test_whole_answers(self):
        cases = [
            ("chat", {"messages": [{"role": "user", "content": "hi"}], "max_tokens": 2}, "chat.completion",
             {"role": "assistant", "content": "t0 t1"}),
            ("completion", {"prompt": "x y", "max_tokens": 3}, "text_completion", "t0 t1 t2"),
        ]
        for kind, body, obj, content in cases:
            with self.subTest(kind):
                self.start(kind, body)
                resp = self.worker.read()
                answer = json.loads(resp.values[0])
                self.assertEqual((resp.code, answer["object"], answer["model"]), (200, obj, "tiny"))
                choice = answer["choices"][0]
                self.assertEqual(choice.get("message", choice.get("text")), content)
                self.assertEqual(choice["finish_reason"], "length")
        self.assertEqual(self.engine.aborted, [])

    def test_bad_requests(self):
        cases = [("raw string", {"inputs": "<user>hi<assistant>"},
                  "could not find a handler for this request: a model with rolling_batch=vllm expects a "
                  "ChatCompletionRequest or CompletionRequest"),
                 ("wrong type", {"messages": [{"role": "user", "content": None}]}, "messages[0].content is required"),
                 ("tools", {"messages": [{"role": "user", "content": "x"}],
                            "tools": [{"type": "function", "function": {"name": "f"}}]},
                  "tools: this model's handler does not call tools"),
                 ("context", {"prompt": " ".join(["w"] * 64), "stream": True},
                  "this model's context length is 64 tokens, and no room is left for an answer after 64 tokens "
                  "of prompt"),
                 ("limit", {"prompt": "a b", "max_tokens": 63}, "this model's context length is 64 tokens, and the "
                  "request asks for 65 (2 in the prompt, 63 in max_tokens)")]
        for tid, body, message in cases:
            with self.subTest(tid):
                self.start(tid, body)
                resp = self.worker.read()
                self.assertEqual(resp.code, 400)
                self.assertTrue(resp.message.startswith(message), resp.message)
                self.assertEqual(json.loads(resp.values[0])["error"], resp.message)

    def test_cancel_aborts(self):
        self.start("c1", {"prompt": "[gated]", "stream": True, "max_tokens": 50})
        self.engine.gate.release(1)  # one token; the engine then waits for the next permit
        first = self.worker.read(max_chunks=1)
        self.assertEqual([json.loads(c) for c in first.chunks], [{"token": {"id": 100, "text": "t0"}}])
        self.assertIsNone(first.error)
        self.worker.send({"request_tracking_id": "c1", "cancel": "true"})
        end = self.worker.read(max_chunks=1)
        self.assertEqual((end.props["request_tracking_id"], end.error), ("c1", "canceled"))
        self.assertEqual(end.chunks, [])
        self.assertTrue(self.engine.abort_seen.wait(TIMEOUT))
        self.assertEqual(self.engine.aborted, [self.engine.requests[-1][0]])

    def test_untracked_stream(self):
        resp = self.worker.call({}, [("data", json.dumps({"prompt": "p", "stream": True, "max_tokens": 2}).encode())])
        lines = [json.loads(c) for c in resp.chunks]
        self.assertEqual(resp.error, "")
        tokens, final = stream_parts(self, lines)
        self.assertEqual(tokens, [{"id": 100, "text": "t0"}, {"id": 101, "text": " t1"}])
        self.assertEqual(final, {"token": None, "generated_text": "t0 t1", "finish_reason": "length",
                                 "usage": {"prompt_tokens": 1, "completion_tokens": 2, "total_tokens": 3}})


if __name__ == "__main__":
    unittest.main()
