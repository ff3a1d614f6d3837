"""Tool calls in generated text, for the built-in generative handler.

A model that calls tools writes each call into its text in a format its
chat template taught it. option.tool_call_parser names the format (as in
LMI and vLLM), and option.enable_auto_tool_choice=true turns tool calls on.
The one format switchyard's runtime reads is "hermes" (Hermes, Qwen 2.5 and
others):

    <tool_call>
    {"name": "get_weather", "arguments": {"city": "Oslo"}}
    </tool_call>

filter_events() rewrites a stream of generation events: text outside the
markers stays text; the tokens of a call carry no text, and the token that
closes it carries the call as an OpenAI tool-call delta (id, name and the
arguments as a JSON string). A generation that made calls and ended on its
own (eos or a stop string) ends with finish reason tool_calls. A block that
is not valid JSON, or one cut off by the token limit, stays text, so nothing
the model wrote is lost.
"""

import json
import uuid

from .outputs import Done, Piece

HERMES = "hermes"
PARSERS = (HERMES,)
OPEN, CLOSE = "<tool_call>", "</tool_call>"


def check_parser(name):
    """Returns the parser name, or raises ValueError naming the ones there are."""
    if name not in PARSERS:
        raise ValueError("option.tool_call_parser=%s is not one of %s" % (name, ", ".join(PARSERS)))
    return name


def new_call_id():
    """Returns a fresh tool call id."""
    return "call_" + uuid.uuid4().hex[:24]


def parse_call(block):
    """Returns (name, arguments JSON) of one hermes block's JSON, or None when it is not a call."""
    try:
        obj = json.loads(block)
    except ValueError:
        return None
    if not isinstance(obj, dict) or not isinstance(obj.get("name"), str) or not obj["name"]:
        return None
    args = obj.get("arguments", obj.get("parameters", {}))
    if isinstance(args, str):
        return obj["name"], args
    return obj["name"], json.dumps(args if args is not None else {}, ensure_ascii=False)


class HermesFilter:
    """HermesFilter is the state of one generation's filter; see the module doc.

    push() takes one event and returns the events to pass on. new_id makes
    tool call ids (tests pass a deterministic one).
    """

    def __init__(self, new_id=new_call_id):
        self._new_id = new_id
        self._held = ""      # text that may be the start of OPEN, or a call's body
        self._inside = False
        self._text = []      # the content text passed on
        self._calls = 0
        self._pieces = 0     # tokens seen
        self._last_id = 0

    def push(self, event):
        """Returns the events that replace event."""
        if isinstance(event, Done):
            return self._finish(event)
        self._pieces += 1
        self._last_id = event.id
        text, deltas = self._feed(event.text)
        return [Piece(event.id, text, deltas)]

    def _feed(self, text):
        """Takes more text; returns (text to pass on, tool-call deltas)."""
        self._held += text
        out, deltas = [], []
        while True:
            if self._inside:
                end = self._held.find(CLOSE)
                if end < 0:
                    break
                block = self._held[:end]
                delta = self._call(block)
                if delta is None:
                    out.append(OPEN + block + CLOSE)
                else:
                    deltas.append(delta)
                self._held, self._inside = self._held[end + len(CLOSE):], False
                continue
            start = self._held.find(OPEN)
            if start < 0:
                keep = _partial_suffix(self._held, OPEN)
                out.append(self._held[:len(self._held) - keep])
                self._held = self._held[len(self._held) - keep:]
                break
            out.append(self._held[:start])
            self._held, self._inside = self._held[start + len(OPEN):], True
        passed = "".join(out)
        self._text.append(passed)
        return passed, deltas

    def _call(self, block):
        """Returns the delta of one closed block, or None when it is no call (it stays text)."""
        parsed = parse_call(block.strip())
        if parsed is None:
            return None
        name, args = parsed
        delta = {"index": self._calls, "id": self._new_id(), "type": "function",
                 "function": {"name": name, "arguments": args}}
        self._calls += 1
        return delta

    def _finish(self, done):
        """Returns the last events: held text as one more piece when there is any, then the Done.

        The extra piece repeats the last token's id; the token count stays
        the number of tokens generated.
        """
        tail = (OPEN if self._inside else "") + self._held
        self._held, self._inside = "", False
        events = []
        if tail:
            self._text.append(tail)
            events.append(Piece(self._last_id, tail))
        reason = done.finish_reason
        if self._calls and reason in ("eos", "stop"):
            reason = "tool_calls"
        completion = self._pieces if done.completion_tokens is None else done.completion_tokens
        events.append(Done(reason, done.prompt_tokens, completion, done.error, text="".join(self._text),
                           stop_sequence=done.stop_sequence))
        return events


def _partial_suffix(text, marker):
    """Returns the length of the longest end of text that starts marker."""
    for n in range(min(len(marker) - 1, len(text)), 0, -1):
        if marker.startswith(text[-n:]):
            return n
    return 0


def filter_events(events, parser=HERMES, new_id=new_call_id):
    """Returns events (sync or async) with the tool calls in their text turned into deltas.

    Closing the result closes the source.
    """
    check_parser(parser)
    if hasattr(events, "__aiter__"):
        return _afilter(events, HermesFilter(new_id))
    return _filter(events, HermesFilter(new_id))


def _filter(events, state):
    try:
        for event in events:
            yield from state.push(event)
    finally:
        close = getattr(events, "close", None)
        if close is not None:
            close()


async def _afilter(events, state):
    try:
        async for event in events:
            for out in state.push(event):
                yield out
    finally:
        close = getattr(events, "aclose", None)
        if close is not None:
            await close()
