"""Answers of generative models: JSON lines, whole answers, batches."""

import asyncio
import json
import unittest

from switchyard_runtime.generative import outputs as genoutput
from switchyard_runtime.generative.outputs import Done, Piece
from switchyard_runtime.generative.schemas import RequestError, parse

PIECES = [Piece(11, "Hel"), Piece(12, "lo"), Piece(13, "!")]


def lines_of(stream):
    """Returns the JSON lines of a stream."""
    return [json.loads(line) for line in stream]


class Source:
    """Source is a closable event iterator that records whether it was closed."""

    def __init__(self, events, fail_at=None):
        self.events = list(events)
        self.fail_at = fail_at
        self.closed = False
        self.taken = 0

    def __iter__(self):
        return self

    def __next__(self):
        if self.taken == self.fail_at:
            raise RuntimeError("device lost")
        if self.taken >= len(self.events):
            raise StopIteration
        self.taken += 1
        return self.events[self.taken - 1]

    def close(self):
        """Records that the source was closed."""
        self.closed = True


class JsonLinesTest(unittest.TestCase):
    def test_lines(self):
        cases = [
            ("length", PIECES + [Done("length", 4, None)], 3,
             {"token": None, "generated_text": "Hello!", "finish_reason": "length",
              "usage": {"prompt_tokens": 4, "completion_tokens": 3, "total_tokens": 7}}),
            ("eos with counts given", PIECES + [Done("eos", 2, 5)], 3,
             {"token": None, "generated_text": "Hello!", "finish_reason": "eos",
              "usage": {"prompt_tokens": 2, "completion_tokens": 5, "total_tokens": 7}}),
            ("no token", [Done("length", 3, 0)], 0,
             {"token": None, "generated_text": "", "finish_reason": "length",
              "usage": {"prompt_tokens": 3, "completion_tokens": 0, "total_tokens": 3}}),
            ("error after a token", PIECES[:1] + [Done("error", 1, None, "engine: boom")], 1,
             {"token": None, "generated_text": "Hel", "finish_reason": "error",
              "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2}, "error": "engine: boom"}),
            ("text given by the backend", PIECES + [Done("stop", 1, 3, text="Hell")], 3,
             {"token": None, "generated_text": "Hell", "finish_reason": "stop",
              "usage": {"prompt_tokens": 1, "completion_tokens": 3, "total_tokens": 4}}),
            ("events after Done are dropped", PIECES[:2] + [Done("eos", 1)] + PIECES[2:] + [Done("length")], 2,
             {"token": None, "generated_text": "Hello", "finish_reason": "eos",
              "usage": {"prompt_tokens": 1, "completion_tokens": 2, "total_tokens": 3}}),
        ]
        for name, events, token_lines, last in cases:
            with self.subTest(name):
                source = Source(events)
                raw = list(genoutput.JsonLines(source))
                self.assertTrue(all(line.endswith(b"\n") and line.count(b"\n") == 1 for line in raw))
                lines = [json.loads(line) for line in raw]
                self.assertEqual(len(lines), token_lines + 1)
                self.assertEqual(lines[:-1], [{"token": {"id": p.id, "text": p.text}} for p in PIECES[:token_lines]])
                self.assertEqual(lines[-1], last)
                self.assertTrue(source.closed)

    def test_each_line_leaves_with_its_token(self):
        # A token's line comes out before the source is asked for the next event.
        source = Source(PIECES + [Done("eos", 1)])
        stream = genoutput.JsonLines(source)
        for i, piece in enumerate(PIECES):
            self.assertEqual(json.loads(next(stream)), {"token": {"id": piece.id, "text": piece.text}})
            self.assertEqual(source.taken, i + 1)
        final = json.loads(next(stream))
        self.assertEqual((final["token"], final["generated_text"], source.taken), (None, "Hello!", 4))
        self.assertEqual(list(stream), [])
        self.assertTrue(source.closed)

    def test_source_failures(self):
        cases = [
            ("raises after two tokens", Source(PIECES, fail_at=2), "device lost", 2),
            ("raises before a token", Source(PIECES, fail_at=0), "device lost", 0),
            ("ends without Done", Source(PIECES), genoutput.NO_FINISH, 3),
        ]
        for name, source, error, generated in cases:
            with self.subTest(name):
                lines = lines_of(genoutput.JsonLines(source))
                self.assertEqual(len(lines), generated + 1)
                self.assertEqual(lines[:-1], [{"token": {"id": p.id, "text": p.text}} for p in PIECES[:generated]])
                text = "".join(p.text for p in PIECES[:generated])
                self.assertEqual(lines[-1], {
                    "token": None, "generated_text": text, "finish_reason": "error", "error": error,
                    "usage": {"prompt_tokens": 0, "completion_tokens": generated, "total_tokens": generated}})
                self.assertTrue(source.closed)

    def test_close_closes_the_source(self):
        for read in (0, 1, 4):
            with self.subTest(read=read):
                source = Source(PIECES + [Done("eos")])
                stream = genoutput.JsonLines(source)
                for _ in range(read):
                    next(stream)
                stream.close()
                self.assertTrue(source.closed)
                self.assertEqual(list(stream), [])

    def test_async_lines(self):
        closed = []

        async def events(fail):
            try:
                for piece in PIECES:
                    yield piece
                if fail:
                    raise RuntimeError("lost")
                yield Done("length", 1)
            finally:
                closed.append(fail)

        async def read(stream, limit=None):
            out = []
            async for line in stream:
                self.assertTrue(line.endswith(b"\n") and line.count(b"\n") == 1, line)
                out.append(json.loads(line))
                if limit is not None and len(out) == limit:
                    await stream.aclose()
                    break
            return out

        tokens = [{"token": {"id": p.id, "text": p.text}} for p in PIECES]
        lines = asyncio.run(read(genoutput.AsyncJsonLines(events(False))))
        self.assertEqual(lines, tokens + [{
            "token": None, "generated_text": "Hello!", "finish_reason": "length",
            "usage": {"prompt_tokens": 1, "completion_tokens": 3, "total_tokens": 4}}])
        lines = asyncio.run(read(genoutput.AsyncJsonLines(events(True))))
        self.assertEqual(lines, tokens + [{
            "token": None, "generated_text": "Hello!", "finish_reason": "error", "error": "lost",
            "usage": {"prompt_tokens": 0, "completion_tokens": 3, "total_tokens": 3}}])
        self.assertEqual(asyncio.run(read(genoutput.AsyncJsonLines(events(False)), limit=1)), tokens[:1])
        self.assertEqual(closed, [False, True, False])

    def test_async_lines_match_sync(self):
        cases = [
            ("length", PIECES + [Done("length", 4)]),
            ("no token", [Done("eos", 2, 0)]),
            ("error", PIECES[:1] + [Done("error", 1, None, "engine: boom")]),
            ("ends without Done", PIECES),
        ]

        async def agen(events):
            for event in events:
                yield event

        async def read(stream):
            return [line async for line in stream]

        for name, events in cases:
            with self.subTest(name):
                want = list(genoutput.JsonLines(Source(events)))
                self.assertEqual(asyncio.run(read(genoutput.AsyncJsonLines(agen(events)))), want)
                self.assertEqual(len(want), sum(isinstance(e, Piece) for e in events) + 1)


class WholeAnswerTest(unittest.TestCase):
    def result(self, reason="eos", prompt_tokens=5):
        """Returns the Result of PIECES ended with reason."""
        return genoutput.collect(Source(PIECES + [Done(reason, prompt_tokens)]))

    def test_collect(self):
        source = Source(PIECES + [Done("eos", 5)])
        result = genoutput.collect(source)
        self.assertEqual((result.text, result.finish_reason, result.usage()),
                         ("Hello!", "eos", {"prompt_tokens": 5, "completion_tokens": 3, "total_tokens": 8}))
        self.assertTrue(source.closed)

    def test_chat_completion(self):
        cases = [("eos", "stop"), ("stop", "stop"), ("length", "length")]
        for reason, openai in cases:
            with self.subTest(reason):
                got = genoutput.chat_completion(self.result(reason), "chat", now=1700000000.5, ident="chatcmpl-1")
                self.assertEqual(got, {
                    "id": "chatcmpl-1", "object": "chat.completion", "created": 1700000000, "model": "chat",
                    "choices": [{"index": 0, "message": {"role": "assistant", "content": "Hello!"},
                                 "logprobs": None, "finish_reason": openai, "stop_reason": None}],
                    "usage": {"prompt_tokens": 5, "completion_tokens": 3, "total_tokens": 8}})
        self.assertTrue(genoutput.chat_completion(self.result(), "m")["id"].startswith("chatcmpl-"))

    def test_outputs(self):
        cases = [
            ("chat", {"messages": [{"role": "user", "content": "x"}]}, "chat.completion"),
            ("completion", {"prompt": "x"}, "text_completion"),
        ]
        for name, body, kind in cases:
            with self.subTest(name):
                out = genoutput.whole_output(parse(body), self.result(), "m")
                answer = json.loads(out.content.values[0])
                want = {"content-type": "application/json", "x-switchyard-finish-reason": "eos"}
                self.assertEqual((out.code, out.properties), (200, want))
                self.assertEqual((answer["object"], answer["model"]), (kind, "m"))
        plain = json.loads(genoutput.whole_output(parse({"inputs": "x"}), self.result(), "m").content.values[0])
        self.assertEqual(plain, {"generated_text": "Hello!"})
        req = parse({"inputs": "x", "parameters": {"details": True}})
        detailed = json.loads(genoutput.whole_output(req, self.result(), "m").content.values[0])
        self.assertEqual(detailed, {"generated_text": "Hello!", "details": {
            "finish_reason": "eos", "generated_tokens": 3, "prompt_tokens": 5}})

    def test_failed_generation_raises(self):
        result = genoutput.collect(Source(PIECES[:1] + [Done("error", 1, None, "engine: boom")]))
        with self.assertRaisesRegex(RuntimeError, "engine: boom"):
            genoutput.whole_output(parse({"inputs": "x"}), result, "m")

    def test_respond(self):
        req = parse({"messages": [{"role": "user", "content": "x"}], "stream": True, "max_new_tokens": 3})
        out = genoutput.respond(req, Source(PIECES + [Done("eos")]), "m")
        self.assertEqual(out.properties, {"content-type": "application/jsonlines", "x-switchyard-warning":
                                          "max_new_tokens is ignored in a chat request; max_tokens sets the limit"})
        lines = lines_of(out.stream_content)
        self.assertEqual(lines[:-1], [{"token": {"id": p.id, "text": p.text}} for p in PIECES])
        self.assertEqual(lines[-1], {"token": None, "generated_text": "Hello!", "finish_reason": "eos",
                                     "usage": {"prompt_tokens": 0, "completion_tokens": 3, "total_tokens": 3}})
        req.stream = False
        out = genoutput.respond(req, Source(PIECES + [Done("eos")]), "m")
        self.assertIn("x-switchyard-warning", out.properties)
        self.assertIsNone(out.stream_content)

    def test_bad_request(self):
        out = genoutput.bad_request(RequestError("messages must not be empty"))
        self.assertEqual((out.code, out.message), (400, "messages must not be empty"))
        self.assertEqual(json.loads(out.content.values[0]), {
            "code": 400, "message": "messages must not be empty", "error": "messages must not be empty"})

    def test_batch_output(self):
        ok = genoutput.whole_output(parse({"inputs": "x"}), self.result(), "m")
        bad = genoutput.bad_request(RequestError("inputs is required"))
        out = genoutput.batch_output([ok, bad, genoutput.failed(MemoryError())])
        self.assertEqual(out.content.keys, ["batch_0.data", "batch_1.data", "batch_2.data"])
        self.assertEqual(out.properties["batch_0.content-type"], "application/json")
        self.assertEqual((out.properties["batch_1.code"], out.properties["batch_1.message"]),
                         ("400", "inputs is required"))
        self.assertEqual(out.properties["batch_2.code"], "507")
        self.assertNotIn("batch_0.code", out.properties)


CALL_PIECES = [Piece(20, "Let me look. "),
               Piece(21, "", [{"index": 0, "id": "call_1", "type": "function",
                               "function": {"name": "weather", "arguments": ""}}]),
               Piece(22, "", [{"index": 0, "function": {"arguments": "{\"city\": "}}]),
               Piece(23, "", [{"index": 0, "function": {"arguments": "\"Oslo\"}"}}])]
CALL = {"id": "call_1", "type": "function", "function": {"name": "weather", "arguments": "{\"city\": \"Oslo\"}"}}


class ToolCallOutputTest(unittest.TestCase):
    """Tool-call deltas on token lines, the whole calls on the last line and in chat.completion."""

    def test_lines(self):
        lines = lines_of(genoutput.JsonLines(Source(CALL_PIECES + [Done("tool_calls", 4)])))
        self.assertEqual(lines[1], {"token": {"id": 21, "text": ""}, "tool_calls": CALL_PIECES[1].tool_calls})
        self.assertEqual(lines[0], {"token": {"id": 20, "text": "Let me look. "}})
        self.assertEqual(lines[-1], {
            "token": None, "generated_text": "Let me look. ", "finish_reason": "tool_calls", "tool_calls": [CALL],
            "usage": {"prompt_tokens": 4, "completion_tokens": 4, "total_tokens": 8}})

    def test_chat_completion(self):
        result = genoutput.collect(Source(CALL_PIECES[1:] + [Done("tool_calls", 4)]))
        choice = genoutput.chat_completion(result, "m")["choices"][0]
        self.assertEqual(choice["message"], {"role": "assistant", "content": None, "tool_calls": [CALL]})
        self.assertEqual((choice["finish_reason"], choice["stop_reason"]), ("tool_calls", None))
        given = genoutput.collect(Source([Piece(1, "x"), Done("tool_calls", tool_calls=[CALL])]))
        self.assertEqual(given.tool_calls, [CALL])

    def test_stop_reason(self):
        cases = [("stop", "###", "###"), ("eos", "###", None), ("stop", None, None)]
        for reason, stop, want in cases:
            with self.subTest(reason=reason, stop=stop):
                result = genoutput.collect(Source(PIECES + [Done(reason, 1, stop_sequence=stop)]))
                choice = genoutput.chat_completion(result, "m")["choices"][0]
                self.assertEqual(choice["stop_reason"], want)

    def test_merge_tool_calls(self):
        calls = genoutput.merge_tool_calls([], [d for p in CALL_PIECES for d in p.tool_calls or ()])
        self.assertEqual(calls, [CALL])
        two = genoutput.merge_tool_calls([], [{"index": 1, "id": "b", "function": {"name": "g", "arguments": "1"}},
                                              {"index": 0, "id": "a", "function": {"name": "f"}}])
        self.assertEqual([(c["id"], c["function"]["name"], c["function"]["arguments"]) for c in two],
                         [("a", "f", ""), ("b", "g", "1")])

    def test_bad_request_names_the_field(self):
        out = genoutput.bad_request(RequestError("too long", param="messages", error_code="context_length_exceeded"))
        self.assertEqual(json.loads(out.content.values[0]), {
            "code": 400, "message": "too long", "error": "too long", "param": "messages",
            "error_code": "context_length_exceeded"})


if __name__ == "__main__":
    unittest.main()
