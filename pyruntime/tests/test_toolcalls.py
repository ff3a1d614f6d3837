"""Tool calls in generated text (the hermes format) turned into OpenAI deltas."""

import asyncio
import json
import unittest

from switchyard_runtime.generative import outputs as genoutput
from switchyard_runtime.generative import toolcalls
from switchyard_runtime.generative.outputs import Done, Piece


def ids():
    """Returns a function that makes the call ids call_1, call_2, ..."""
    n = [0]

    def new_id():
        n[0] += 1
        return "call_%d" % n[0]
    return new_id


def pieces(*texts):
    """Returns one Piece per text."""
    return [Piece(100 + i, t) for i, t in enumerate(texts)]


def run(texts, reason="eos"):
    """Returns the filtered events of texts ending with reason."""
    return list(toolcalls.filter_events(iter(pieces(*texts) + [Done(reason, 3)]), new_id=ids()))


def call(index, name, args):
    """Returns the whole tool call at index, with the id the test's ids() gives it."""
    return {"index": index, "id": "call_%d" % (index + 1), "type": "function",
            "function": {"name": name, "arguments": args}}


class HermesTest(unittest.TestCase):
    def test_filter(self):
        weather = '{"name": "weather", "arguments": {"city": "Oslo"}}'
        cases = [
            ("plain text", ["Hello", " there"], "Hello there", [], "eos"),
            ("one call", ["<tool_call>\n", weather, "\n</tool_call>"], "",
             [call(0, "weather", '{"city": "Oslo"}')], "tool_calls"),
            ("markers split across tokens", ["Sure. <tool", "_call>", weather[:9], weather[9:], "</tool", "_call>"],
             "Sure. ", [call(0, "weather", '{"city": "Oslo"}')], "tool_calls"),
            ("two calls", ["<tool_call>" + weather + "</tool_call><tool_call>",
                           '{"name": "time", "arguments": "{}"}</tool_call>'], "",
             [call(0, "weather", '{"city": "Oslo"}'), call(1, "time", "{}")], "tool_calls"),
            ("not JSON stays text", ["<tool_call>nope</tool_call> ok"], "<tool_call>nope</tool_call> ok", [], "eos"),
            ("cut off by the limit stays text", ['<tool_call>{"na'], '<tool_call>{"na', [], "length"),
            ("a held prefix that is no marker", ["a <tool", "box>"], "a <toolbox>", [], "eos"),
            ("a held prefix at the end", ["a <to"], "a <to", [], "eos"),
        ]
        for name, texts, text, calls, reason in cases:
            with self.subTest(name):
                events = run(texts, "length" if reason == "length" else "eos")
                done = events[-1]
                self.assertIsInstance(done, Done)
                self.assertEqual((done.text, done.finish_reason, done.completion_tokens), (text, reason, len(texts)))
                got = [d for e in events[:-1] for d in e.tool_calls or ()]
                self.assertEqual(got, calls)
                self.assertEqual("".join(e.text for e in events[:-1]), text)
                result = genoutput.collect(iter(events))
                self.assertEqual((result.text, len(result.tool_calls)), (text, len(calls)))
                self.assertEqual(json.loads(genoutput.final_line(None, result))["generated_text"], text)

    def test_arguments(self):
        cases = [('{"name": "f"}', ("f", "{}")), ('{"name": "f", "parameters": {"a": 1}}', ("f", '{"a": 1}')),
                 ('{"name": "f", "arguments": "raw"}', ("f", "raw")), ('{"arguments": {}}', None), ("[1]", None)]
        for block, want in cases:
            with self.subTest(block):
                self.assertEqual(toolcalls.parse_call(block), want)

    def test_closing_closes_the_source(self):
        class Source:
            """Source is an event source that records whether it was closed."""
            closed = False

            def __iter__(self):
                return iter(pieces("a", "b"))

            def close(self):
                """Records that the source was closed."""
                self.closed = True
        source = Source()
        events = toolcalls.filter_events(source)
        next(events)
        events.close()
        self.assertTrue(source.closed)

    def test_async(self):
        async def source():
            for p in pieces("<tool_call>", '{"name": "f", "arguments": {}}', "</tool_call>"):
                yield p
            yield Done("stop", 1)

        async def collect():
            return await genoutput.acollect(toolcalls.filter_events(source(), new_id=ids()))
        result = asyncio.run(collect())
        self.assertEqual((result.finish_reason, result.tool_calls), ("tool_calls", [
            {"id": "call_1", "type": "function", "function": {"name": "f", "arguments": "{}"}}]))

    def test_unknown_parser(self):
        with self.assertRaises(ValueError) as caught:
            toolcalls.filter_events(iter(()), parser="mistral")
        self.assertIn("option.tool_call_parser=mistral is not one of hermes", str(caught.exception))


if __name__ == "__main__":
    unittest.main()
