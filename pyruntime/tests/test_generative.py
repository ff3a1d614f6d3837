"""Generative request schemas: every 400, the defaults and the warning."""

import json
import unittest

from switchyard_runtime.djl.inputs import Input
from switchyard_runtime.djl.pairlist import PairList
from switchyard_runtime.generative import schemas
from switchyard_runtime.generative.schemas import RequestError, parse

USER = {"role": "user", "content": "hi"}


def chat(**fields):
    """Returns a chat request body with fields added."""
    body = {"messages": [USER]}
    body.update(fields)
    return body


def gen(**params):
    """Returns a generation request body with params."""
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
            ("role unknown", {"messages": [{"role": "critic", "content": "x"}]},
             "messages[0].role must be one of system/user/assistant/tool, not 'critic'"),
            ("system not first", {"messages": [USER, {"role": "system", "content": "x"}]},
             "messages[1].role: a system message may only come first"),
            ("content missing", {"messages": [USER, {"role": "assistant"}]}, "messages[1].content is required"),
            ("content not a string", {"messages": [USER, {"role": "user", "content": 5}]},
             "messages[1].content must be a string, not a number"),
            ("content image part",
             {"messages": [{"role": "user", "content": [{"type": "image_url", "image_url": {}}]}]},
             "messages[0].content[0].type: only text parts are supported, not 'image_url'"),
            ("content part text", {"messages": [{"role": "user", "content": [{"type": "text", "text": 3}]}]},
             "messages[0].content[0].text must be a string, not a number"),
            ("content part not an object", {"messages": [{"role": "user", "content": ["x"]}]},
             "messages[0].content[0] must be an object, not a string"),
            ("content parts empty", {"messages": [{"role": "user", "content": []}]},
             "messages[0].content must not be an empty list"),
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

    def test_chat_text_parts(self):
        parts = [{"type": "text", "text": "Hallo"}, {"type": "text", "text": "wie geht's?"}]
        req = parse(json.dumps({"messages": [{"role": "system", "content": [{"type": "text", "text": "be brief"}]},
                                             {"role": "user", "content": parts}]}).encode())
        self.assertEqual(req.messages, [{"role": "system", "content": "be brief"},
                                        {"role": "user", "content": "Hallo\nwie geht's?"}])

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
                self.assertEqual(req.warnings, [schemas.MAX_NEW_TOKENS_IGNORED] if warned else [])

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
                self.assertEqual(schemas.default_max_tokens(props), want)
                self.assertEqual(parse(chat(), default_max=schemas.default_max_tokens(props)).max_new_tokens, want)
        for bad in ({"max_new_tokens": "many"}, {"max_tokens": "0"}):
            with self.subTest(bad=bad), self.assertRaises(ValueError):
                schemas.default_max_tokens(bad)

    def test_parse_input(self):
        inputs = Input({"content-type": "application/json"}, PairList(["data"], [json.dumps(chat()).encode()]))
        self.assertEqual(schemas.parse_input(inputs).messages, [USER])


WEATHER = {"type": "function", "function": {"name": "weather", "description": "Weather in a city.",
                                            "parameters": {"type": "object",
                                                           "properties": {"city": {"type": "string"}}}}}
TOOLS = schemas.Capabilities(context_length=100, tools=True, max_choices=2)


class ToolsTest(unittest.TestCase):
    """tools, tool_choice, tool messages and n: honoured when declared, refused naming the field otherwise."""

    def test_tools_reach_the_request(self):
        calls = [{"id": "c1", "type": "function", "function": {"name": "weather", "arguments": "{\"city\": \"Oslo\"}"}}]
        body = chat(tools=[WEATHER], tool_choice="required", n=2, messages=[
            USER, {"role": "assistant", "content": None, "tool_calls": calls},
            {"role": "tool", "tool_call_id": "c1", "content": "sunny"}])
        req = parse(body, caps=TOOLS)
        self.assertEqual(req.tools, [WEATHER])
        self.assertEqual((req.tool_choice, req.n), ("required", 2))
        self.assertEqual(req.messages[1], {"role": "assistant", "content": "", "tool_calls": calls})
        self.assertEqual(req.messages[2], {"role": "tool", "content": "sunny", "tool_call_id": "c1"})
        self.assertEqual(parse(chat(tools=[WEATHER]), caps=TOOLS).tool_choice, "auto")
        named = {"type": "function", "function": {"name": "weather"}}
        self.assertEqual(parse(chat(tools=[WEATHER], tool_choice=named), caps=TOOLS).tool_choice, named)
        self.assertEqual(parse(chat(tools=[]), caps=schemas.NO_CAPABILITIES).tools, [])

    def test_refusals_name_the_field(self):
        tool_msg = {"role": "tool", "tool_call_id": "c1", "content": "x"}
        call = {"role": "assistant", "tool_calls": [{"id": "c", "type": "function",
                                                     "function": {"name": "f", "arguments": "{}"}}]}
        cases = [
            ("tools without support", chat(tools=[WEATHER]), None, "tools", "unsupported_parameter",
             "tools: this model's handler does not call tools"),
            ("tool message without support", chat(messages=[USER, tool_msg]), None, "messages[1].role",
             "unsupported_parameter", "messages[1].role: this model's handler does not call tools"),
            ("tool calls without support", chat(messages=[USER, call]), None, "messages[1].tool_calls",
             "unsupported_parameter", "messages[1].tool_calls: this model's handler does not call tools"),
            ("n above the limit", chat(n=2), None, "n", "unsupported_value",
             "n=2 asks for more choices than this model returns: at most 1"),
            ("n above a declared limit", chat(n=3), TOOLS, "n", "unsupported_value", "n=3 asks for more"),
            ("n zero", chat(n=0), TOOLS, "n", None, "n must be a positive integer, not 0"),
            ("tool not an object", chat(tools=["x"]), TOOLS, "tools[0]", None, "tools[0] must be an object"),
            ("tool type", chat(tools=[{"type": "code", "function": {"name": "f"}}]), TOOLS, "tools[0].type", None,
             "tools[0].type must be \"function\""),
            ("tool name", chat(tools=[{"type": "function", "function": {"name": "a b"}}]), TOOLS,
             "tools[0].function.name", None, "tools[0].function.name must be 1 to 64 letters"),
            ("tool parameters", chat(tools=[{"type": "function", "function": {"name": "f", "parameters": []}}]),
             TOOLS, "tools[0].function.parameters", None, "tools[0].function.parameters must be an object"),
            ("tool_choice without tools", chat(tool_choice="auto"), TOOLS, "tool_choice", None,
             "tool_choice is only allowed when tools are given"),
            ("tool_choice word", chat(tools=[WEATHER], tool_choice="always"), TOOLS, "tool_choice", None,
             "tool_choice must be one of none/auto/required"),
            ("tool_choice unknown name", chat(tools=[WEATHER], tool_choice={"type": "function",
                                                                            "function": {"name": "x"}}),
             TOOLS, "tool_choice", None, "tool_choice names 'x', which is not among the tools"),
            ("tool message id", chat(messages=[USER, {"role": "tool", "content": "x"}]), TOOLS,
             "messages[1].tool_call_id", None, "messages[1].tool_call_id is required"),
            ("tool call arguments", chat(messages=[USER, {"role": "assistant", "tool_calls": [
                {"id": "c", "function": {"name": "f", "arguments": {}}}]}]), TOOLS,
             "messages[1].tool_calls[0].function.arguments", None, "messages[1].tool_calls[0].function.arguments"),
        ]
        for name, body, caps, param, code, message in cases:
            with self.subTest(name):
                with self.assertRaises(RequestError) as caught:
                    parse(body, caps=caps)
                self.assertTrue(str(caught.exception).startswith(message), str(caught.exception))
                self.assertEqual((caught.exception.param, caught.exception.error_code), (param, code))

    def test_capabilities_properties(self):
        self.assertEqual(TOOLS.properties(), {"context_length": "100", "supports_tools": "true", "max_choices": "2"})
        self.assertEqual(schemas.NO_CAPABILITIES.properties(), {"supports_tools": "false", "max_choices": "1"})


class FitContextTest(unittest.TestCase):
    """fit_context: a prompt that fills the context, or a limit that does not fit beside it, is a 400."""

    def test_fit(self):
        cases = [
            ("default shrinks to the room left", chat(), 90, 100, 10, None),
            ("default fits", chat(), 10, 1000, 256, None),
            ("explicit fits exactly", chat(max_tokens=10), 90, 100, 10, None),
            ("no context declared", chat(max_tokens=500), 9000, None, 500, None),
            ("prompt fills the context", chat(), 100, 100, None,
             "this model's context length is 100 tokens, and no room is left for an answer after 100 tokens "
             "of messages"),
            ("explicit does not fit", chat(max_tokens=11), 90, 100, None,
             "this model's context length is 100 tokens, and the request asks for 101 (90 in the messages, "
             "11 in max_tokens); lower max_tokens to at most 10"),
            ("generation", gen(max_new_tokens=20), 90, 100, None, "this model's context length is 100 tokens, "
             "and the request asks for 110 (90 in the inputs, 20 in parameters.max_new_tokens)"),
            ("completion", {"prompt": "p", "max_completion_tokens": 50}, 60, 100, None,
             "this model's context length is 100 tokens, and the request asks for 110 (60 in the prompt, "
             "50 in max_completion_tokens)"),
        ]
        for name, body, prompt_tokens, context, want, message in cases:
            with self.subTest(name):
                req = parse(body)
                if message is None:
                    self.assertEqual(schemas.fit_context(req, prompt_tokens, context), want)
                    self.assertEqual(req.max_new_tokens, want)
                    continue
                with self.assertRaises(RequestError) as caught:
                    schemas.fit_context(req, prompt_tokens, context)
                self.assertTrue(str(caught.exception).startswith(message), str(caught.exception))
                self.assertEqual(caught.exception.error_code, "context_length_exceeded")
                self.assertIn(caught.exception.param, ("messages", "max_tokens", "parameters.max_new_tokens",
                                                       "max_completion_tokens"))


class FuzzTest(unittest.TestCase):
    """parse either returns a GenRequest or raises RequestError, for any body."""

    def test_mutated_bodies(self):
        import random

        rng = random.Random(6)
        tool_chat = chat(tools=[WEATHER], tool_choice="auto", n=1, messages=[
            USER, {"role": "assistant", "tool_calls": [{"id": "c", "type": "function",
                                                        "function": {"name": "weather", "arguments": "{}"}}]},
            {"role": "tool", "tool_call_id": "c", "content": "ok"}])
        seeds = [json.dumps(b).encode() for b in (chat(stream=True, stop=["a"]), gen(max_new_tokens=3),
                                                  {"prompt": "p", "max_tokens": 2}, tool_chat)]
        for i in range(2000):
            data = bytearray(rng.choice(seeds))
            for _ in range(rng.randint(1, 4)):
                data[rng.randrange(len(data))] = rng.randrange(256)
            with self.subTest(i=i):
                try:
                    req = parse(bytes(data), caps=TOOLS if i % 2 else None)
                except RequestError:
                    continue
                self.assertIn(req.kind, ("chat", "generation", "completion"))
                self.assertGreaterEqual(req.max_new_tokens, 1)


if __name__ == "__main__":
    unittest.main()
