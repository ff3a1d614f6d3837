"""The disable backend of the generative handler, on the fake transformers package."""

import json
import sys
import unittest

from switchyard_runtime.generative import hf_pipeline
from tests.helpers import make_model, start_worker, stream_parts
from tests.test_backends import FAKES, GPT2, REAL


class UnitTest(unittest.TestCase):
    def test_cut_at_stop(self):
        cases = [("a b c", [], ("a b c", None)), ("a b c", ["b", "a b"], ("", "a b")),
                 ("a b c", ["c", "x"], ("a b ", "c")), ("a b c", [""], ("a b c", None))]
        for text, stops, want in cases:
            with self.subTest(stops=stops):
                self.assertEqual(hf_pipeline.cut_at_stop(text, stops), want)

    def test_device(self):
        for props, want in (({}, -1), ({"device_id": "-1"}, -1), ({"device_id": "2"}, 0), ({"device_id": "x"}, -1)):
            with self.subTest(props=props):
                self.assertEqual(hf_pipeline.device(props), want)


@unittest.skipIf(REAL, "real backend packages are installed: %s" % REAL)
class PipelineWorkerTest(unittest.TestCase):
    def start(self, task, **props):
        """Starts a worker on the fake pipeline for task; returns it and the init response, or the fake transformers."""
        worker = start_worker(self, make_model(self, {"config.json": GPT2}))
        sys.path.insert(0, FAKES)
        resp = worker.init(rolling_batch="disable", task=task, model_name="hf", **props)
        if props:
            return worker, resp
        caps = {"context_length": "64", "supports_tools": "false", "max_choices": "1"} if task == "text-generation" \
            else {}
        self.assertEqual((resp.code, resp.props), (200, dict(caps, rolling_batch="disable")))
        return worker, sys.modules["transformers"]

    def call(self, worker, body, content_type="application/json", **props):
        """Sends body (bytes, or JSON) and returns the response."""
        data = body if isinstance(body, bytes) else json.dumps(body).encode()
        return worker.call(dict(props, **{"content-type": content_type}), [("data", data)])

    def test_text_generation(self):
        worker, fake = self.start("text-generation")
        chat = {"messages": [{"role": "user", "content": "hi"}], "max_tokens": 3, "temperature": 0}
        answer = json.loads(self.call(worker, chat).values[0])
        self.assertEqual((answer["object"], answer["model"]), ("chat.completion", "hf"))
        self.assertEqual(answer["choices"][0]["message"]["content"], " w0 w1 w2")
        self.assertEqual((answer["choices"][0]["finish_reason"], answer["usage"]["completion_tokens"]), ("length", 3))
        task, prompt, kwargs = fake.CALLS[-1]
        self.assertEqual((task, prompt), ("text-generation", "user: hi assistant:"))
        self.assertEqual(kwargs, {"max_new_tokens": 3, "return_full_text": False, "do_sample": False})

        resp = self.call(worker, {"inputs": "go", "stream": True, "parameters": {
            "max_new_tokens": 9, "temperature": 0.5, "seed": 4, "stop": " w3"}})
        lines = [json.loads(c) for c in resp.chunks]
        self.assertEqual(resp.error, "")
        tokens, final = stream_parts(self, lines)
        self.assertEqual(tokens, [{"id": 0, "text": " w0"}, {"id": 1, "text": " w1"}, {"id": 2, "text": " w2"}])
        self.assertEqual((final["generated_text"], final["finish_reason"]), (" w0 w1 w2", "stop"))
        self.assertEqual(final["usage"]["completion_tokens"], 3)
        self.assertEqual(fake.SEEDS, [4])
        self.assertEqual(fake.CALLS[-1][2], {"max_new_tokens": 9, "return_full_text": False, "do_sample": True,
                                             "temperature": 0.5, "top_p": 1.0})

        plain = json.loads(self.call(worker, {"inputs": "go", "parameters": {"details": True}}).values[0])
        self.assertEqual(plain, {"generated_text": " w0 w1 w2 w3 w4", "details": {
            "finish_reason": "eos", "generated_tokens": 5, "prompt_tokens": 1}})
        self.assertEqual(self.call(worker, {"inputs": 5}).code, 400)

    def test_batch(self):
        worker, _ = self.start("text-generation")
        props = {"batch_size": "2", "batch_000.content-type": "application/json",
                 "batch_001.content-type": "application/json"}
        items = [("batch_000.data", json.dumps({"inputs": "a", "stream": True, "parameters": {"max_new_tokens": 1}})
                  .encode()), ("batch_001.data", b'{"inputs": []}')]
        resp = worker.call(props, items)
        self.assertEqual(resp.keys, ["batch_0.data", "batch_1.data"])
        self.assertEqual(json.loads(resp.values[0]), {"generated_text": " w0"})
        self.assertEqual((resp.props["batch_1.code"], resp.props["batch_1.message"]),
                         ("400", "inputs must be a string, not a list"))

    def test_other_task(self):
        worker, fake = self.start("text-classification")
        cases = [("json", {"inputs": ["good", "bad"], "parameters": {"top_k": 1}}, "application/json",
                  (["good", "bad"], {"top_k": 1})),
                 ("text", b"just text", "text/plain; charset=utf-8", ("just text", {}))]
        for name, body, kind, call in cases:
            with self.subTest(name):
                resp = self.call(worker, body, kind)
                self.assertEqual(json.loads(resp.values[0]), [{"label": "POSITIVE", "score": 0.9}])
                self.assertEqual(fake.CALLS[-1][1:], call)
        resp = self.call(worker, {"text": "x"})
        self.assertEqual((resp.code, resp.message), (400, "inputs is required"))

    def test_context_length(self):
        worker, _ = self.start("text-generation")
        long = {"messages": [{"role": "user", "content": " ".join(["w"] * 70)}]}
        cases = [
            ("prompt fills the context", long, "messages", "this model's context length is 64 tokens, and no room "
             "is left for an answer after 72 tokens of messages"),
            ("limit does not fit", {"messages": [{"role": "user", "content": "hi"}], "max_tokens": 62}, "max_tokens",
             "this model's context length is 64 tokens, and the request asks for 65 (3 in the messages, "
             "62 in max_tokens)"),
        ]
        for name, body, param, message in cases:
            with self.subTest(name):
                resp = self.call(worker, body)
                self.assertEqual(resp.code, 400)
                answer = json.loads(resp.values[0])
                self.assertTrue(answer["error"].startswith(message), answer)
                self.assertEqual((answer["param"], answer["error_code"]), (param, "context_length_exceeded"))

    def test_tool_calls(self):
        worker, resp = self.start("text-generation", enable_auto_tool_choice="true", tool_call_parser="hermes")
        self.assertEqual(resp.props["supports_tools"], "true")
        fake = sys.modules["transformers"]
        self.addCleanup(setattr, fake, "ANSWER", None)
        fake.ANSWER = ' <tool_call> {"name": "weather", "arguments": {"city": "w1"}} </tool_call>'
        tool = {"type": "function", "function": {"name": "weather", "parameters": {"type": "object"}}}
        body = {"messages": [{"role": "user", "content": "w0"}], "tools": [tool]}
        answer = json.loads(self.call(worker, body).values[0])
        choice = answer["choices"][0]
        self.assertEqual(choice["finish_reason"], "tool_calls")
        call = choice["message"]["tool_calls"][0]
        self.assertEqual((call["function"], choice["message"]["content"]),
                         ({"name": "weather", "arguments": '{"city": "w1"}'}, " "))
        self.assertEqual(fake.CALLS[-1][1], "tools: weather user: w0 assistant:")
        resp = self.call(worker, dict(body, stream=True))
        final = json.loads(resp.chunks[-1])
        self.assertEqual((final["finish_reason"], final["tool_calls"][0]["function"]["name"]),
                         ("tool_calls", "weather"))
        deltas = [d for c in resp.chunks[:-1] for d in json.loads(c).get("tool_calls", ())]
        self.assertEqual([d["function"]["name"] for d in deltas], ["weather"])

    def test_tool_options(self):
        cases = [({"enable_auto_tool_choice": "true"}, "option.enable_auto_tool_choice=true needs "
                  "option.tool_call_parser"),
                 ({"enable_auto_tool_choice": "true", "tool_call_parser": "pythonic"},
                  "option.tool_call_parser=pythonic is not one of hermes")]
        for props, message in cases:
            with self.subTest(props):
                _, resp = self.start("text-generation", **props)
                self.assertEqual(resp.code, 500)
                self.assertIn(message, resp.message)


if __name__ == "__main__":
    unittest.main()
