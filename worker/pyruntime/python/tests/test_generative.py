"""Generative request schemas: every 400, the defaults and the warning."""

import json
import unittest

from switchyard_runtime import generative
from switchyard_runtime.generative import RequestError, parse
from switchyard_runtime.inputs import Input
from switchyard_runtime.pairlist import PairList

USER = {"role": "user", "content": "hi"}


def chat(**fields):
    body = {"messages": [USER]}
    body.update(fields)
    return body


def gen(**params):
    return {"inputs": "prompt", "parameters": params}


class BadRequestTest(unittest.TestCase):
    def test_400_naming_the_field(self):
        cases = [
            ("empty body", b"", "the request body is empty; want a JSON object"),
            ("not JSON", b"{nope", "the request body is not valid JSON: "),
            ("not UTF-8", b"\xff\xfe", "the request body is not valid JSON: "),
            ("JSON list", b"[1]", "the request body must be a JSON object, not a list"),
            ("no known field", {"model": "m"}, "messages is required (a chat request), or inputs"),
            ("messages not a list", {"messages": "hi"}, "messages must be a list, not a string"),
            ("messages empty", {"messages": []}, "messages must not be empty"),
            ("message not an object", {"messages": ["hi"]}, "messages[0] must be an object with role and content"),
            ("role missing", {"messages": [{"content": "x"}]}, "messages[0].role is required"),
            ("role unknown", {"messages": [{"role": "tool", "content": "x"}]},
             "messages[0].role must be one of system/user/assistant, not 'tool'"),
            ("system not first", {"messages": [USER, {"role": "system", "content": "x"}]},
             "messages[1].role: a system message may only come first"),
            ("content missing", {"messages": [USER, {"role": "assistant"}]}, "messages[1].content is required"),
            ("content not a string", {"messages": [USER, {"role": "user", "content": 5}]},
             "messages[1].content must be a string, not a number"),
            ("content parts", {"messages": [{"role": "user", "content": [{"type": "text", "text": "x"}]}]},
             "messages[0].content must be a string, not a list"),
            ("max_tokens zero", chat(max_tokens=0), "max_tokens must be a positive integer, not 0"),
            ("max_tokens float", chat(max_tokens=2.5), "max_tokens must be a positive integer, not 2.5"),
            ("max_tokens string", chat(max_tokens="9"), "max_tokens must be a positive integer, not a string"),
            ("max_tokens bool", chat(max_tokens=True), "max_tokens must be a positive integer, not a boolean"),
            ("max_completion_tokens", chat(max_completion_tokens=-1), "max_completion_tokens must be a positive"),
            ("temperature negative", chat(temperature=-0.1), "temperature must be a number >= 0, not -0.1"),
            ("temperature string", chat(temperature="hot"), "temperature must be a number >= 0, not a string"),
            ("top_p zero", chat(top_p=0), "top_p must be a number in (0, 1], not 0"),
            ("top_p above one", chat(top_p=1.5), "top_p must be a number in (0, 1], not 1.5"),
            ("stop number", chat(stop=3), "stop must be a string or a list of strings, not a number"),
            ("stop list item", chat(stop=["a", 1]), "stop[1] must be a string, not a number"),
            ("stream string", chat(stream="yes"), "stream must be true or false, not a string"),
            ("seed float", chat(seed=1.5), "seed must be an integer, not a number"),
            ("inputs number", {"inputs": 7}, "inputs must be a string, not a number"),
            ("inputs list", {"inputs": ["a", "b"]}, "inputs must be a string, not a list"),
            ("parameters list", {"inputs": "x", "parameters": [1]}, "parameters must be an object, not a list"),
            ("max_new_tokens zero", gen(max_new_tokens=0), "parameters.max_new_tokens must be a positive integer"),
            ("parameters temperature", gen(temperature=-1), "parameters.temperature must be a number >= 0"),
            ("parameters top_p", gen(top_p=2), "parameters.top_p must be a number in (0, 1], not 2"),
            ("do_sample string", gen(do_sample="no"), "parameters.do_sample must be true or false"),
            ("parameters stop", gen(stop={"a": 1}), "parameters.stop must be a string or a list of strings"),
            ("details", gen(details=1), "parameters.details must be true or false, not a number"),
            ("generation stream", {"inputs": "x", "stream": 1}, "stream must be true or false, not a number"),
            ("prompt number", {"prompt": 1}, "prompt must be a string, not a number"),
        ]
        for name, body, message in cases:
            with self.subTest(name):
                raw = body if isinstance(body, bytes) else json.dumps(body)
                with self.assertRaises(RequestError) as caught:
                    parse(raw)
                self.assertTrue(str(caught.exception).startswith(message), str(caught.exception))
                self.assertEqual(caught.exception.code, 400)

    def test_raw_string_to_vllm(self):
        with self.assertRaises(RequestError) as caught:
            parse({"inputs": "<|user|>hi<|end|><|assistant|>"}, rolling_batch="vllm")
        text = str(caught.exception)
        self.assertIn("could not find a handler", text)
        self.assertIn("ChatCompletionRequest or CompletionRequest", text)
        for mode in ("scheduler", "disable", "auto", None):
            with self.subTest(mode):
                self.assertEqual(parse({"inputs": "x"}, rolling_batch=mode).kind, "generation")
        self.assertEqual(parse(chat(), rolling_batch="vllm").kind, "chat")
        self.assertEqual(parse({"prompt": "x"}, rolling_batch="vllm").kind, "completion")


class ParseTest(unittest.TestCase):
    def test_chat(self):
        body = {"model": "ignored", "messages": [{"role": "system", "content": "be brief"}, USER,
                                                 {"role": "assistant", "content": "hello", "name": "x"}],
                "max_tokens": 20, "temperature": 0, "top_p": 0.5, "stop": "\n", "stream": True, "seed": 7,
                "unknown": {"deep": 1}}
        req = parse(json.dumps(body).encode())
        self.assertEqual(req.kind, "chat")
        self.assertEqual(req.messages, [{"role": "system", "content": "be brief"}, USER,
                                        {"role": "assistant", "content": "hello"}])
        self.assertEqual((req.max_new_tokens, req.temperature, req.top_p, req.stop, req.seed, req.stream),
                         (20, 0.0, 0.5, ["\n"], 7, True))
        self.assertEqual(req.warnings, [])

    def test_chat_ignores_max_new_tokens(self):
        cases = [
            ("top level", chat(max_new_tokens=5), 256),
            ("with max_tokens", chat(max_new_tokens=5, max_tokens=9), 9),
            ("inside parameters is not top level", chat(parameters={"max_new_tokens": 5}), 256),
        ]
        for name, body, limit in cases:
            with self.subTest(name):
                req = parse(body)
                self.assertEqual(req.max_new_tokens, limit)
                warned = "max_new_tokens" in body
                self.assertEqual(req.warnings, [generative.MAX_NEW_TOKENS_IGNORED] if warned else [])

    def test_defaults(self):
        cases = [
            ("chat", chat(), 256, 1.0),
            ("generation", {"inputs": "x"}, 256, 1.0),
            ("completion", {"prompt": "x"}, 256, 1.0),
            ("nulls are absent", chat(max_tokens=None, temperature=None, stop=None, seed=None), 256, 1.0),
            ("max_completion_tokens", chat(max_completion_tokens=12), 12, 1.0),
            ("do_sample false is greedy", gen(do_sample=False, temperature=0.7), 256, 0.0),
            ("do_sample true keeps temperature", gen(do_sample=True, temperature=0.7), 256, 0.7),
            ("temperature zero", gen(temperature=0), 256, 0.0),
            ("max_new_tokens", gen(max_new_tokens=3), 3, 1.0),
        ]
        for name, body, limit, temperature in cases:
            with self.subTest(name):
                req = parse(body)
                self.assertEqual((req.max_new_tokens, req.temperature, req.top_p), (limit, temperature, 1.0))
                self.assertEqual((req.stop, req.seed, req.stream), ([], None, False))

    def test_generation(self):
        req = parse({"inputs": "hello", "stream": True,
                     "parameters": {"max_new_tokens": 4, "stop": ["x", "y"], "seed": 3, "details": True}})
        self.assertEqual((req.kind, req.prompt, req.max_new_tokens, req.stop, req.seed, req.stream, req.details),
                         ("generation", "hello", 4, ["x", "y"], 3, True, True))

    def test_model_default_limit(self):
        cases = [({}, 256), ({"max_new_tokens": "64"}, 64), ({"max_tokens": "32"}, 32),
                 ({"max_new_tokens": "", "max_tokens": "8"}, 8)]
        for props, want in cases:
            with self.subTest(props=props):
                self.assertEqual(generative.default_max_tokens(props), want)
                self.assertEqual(parse(chat(), default_max=generative.default_max_tokens(props)).max_new_tokens, want)
        for bad in ({"max_new_tokens": "many"}, {"max_tokens": "0"}):
            with self.subTest(bad=bad), self.assertRaises(ValueError):
                generative.default_max_tokens(bad)

    def test_parse_input(self):
        inputs = Input({"content-type": "application/json"}, PairList(["data"], [json.dumps(chat()).encode()]))
        self.assertEqual(generative.parse_input(inputs).messages, [USER])


class FuzzTest(unittest.TestCase):
    """parse either returns a GenRequest or raises RequestError, for any body."""

    def test_mutated_bodies(self):
        import random

        rng = random.Random(6)
        seeds = [json.dumps(b).encode() for b in (chat(stream=True, stop=["a"]), gen(max_new_tokens=3),
                                                   {"prompt": "p", "max_tokens": 2})]
        for i in range(2000):
            data = bytearray(rng.choice(seeds))
            for _ in range(rng.randint(1, 4)):
                data[rng.randrange(len(data))] = rng.randrange(256)
            with self.subTest(i=i):
                try:
                    req = parse(bytes(data))
                except RequestError:
                    continue
                self.assertIn(req.kind, ("chat", "generation", "completion"))
                self.assertGreaterEqual(req.max_new_tokens, 1)


if __name__ == "__main__":
    unittest.main()
