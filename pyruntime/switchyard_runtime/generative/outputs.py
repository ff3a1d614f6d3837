"""Answers of generative models: token streams as JSON lines, and whole answers.

A generation backend produces events: one Piece per generated token, then one
Done with the finish reason and the token counts. This module turns them into
the answer the front-end expects:

* streamed (the request asked for stream): content-type application/jsonlines,
  one {"token": {"id", "text"}} object per line, sent as soon as the token
  exists; then a last line with "token": null plus generated_text,
  finish_reason (length, stop, eos, tool_calls, error or canceled), usage,
  and error when one happened. A stream of N tokens is N token lines and the
  last line. A token that adds to a tool call carries "tool_calls" beside
  its token: OpenAI's streamed deltas ([{"index", "id", "type", "function":
  {"name", "arguments"}}], id and name on the first delta of a call, then
  pieces of the arguments); the last line then carries the whole calls in
  "tool_calls".
* whole: an OpenAI chat.completion (chat), {"generated_text"} with optional
  details (generation), or an OpenAI text_completion (completion). A chat
  answer with tool calls has message.tool_calls and finish_reason
  "tool_calls"; a choice that a stop string ended names it in "stop_reason",
  as vLLM does.

Closing a stream closes its event source, which is how a backend learns that
the client went away or the request was canceled.
"""

import logging
import time
import uuid

from ..djl.errors import is_out_of_memory
from ..djl.outputs import Output, encode_json
from .schemas import CHAT, COMPLETION, WARNING

JSONLINES = "application/jsonlines"
JSON = "application/json"
# The property (an HTTP header of the answer) that names a whole answer's
# finish reason, which the front-end counts per model (a stream's is in its
# last line).
FINISH_REASON = "x-switchyard-finish-reason"
FINISH_REASONS = ("length", "stop", "eos", "tool_calls", "error", "canceled")
NO_FINISH = "the generation ended without a finish reason"

_log = logging.getLogger("switchyard.genoutput")


class Piece:
    """Piece is one generated token: its id, the text it adds (maybe "") and tool-call deltas.

    tool_calls, when set, is a list of OpenAI streamed tool-call deltas that
    this token adds to (see the module doc).
    """

    __slots__ = ("id", "text", "tool_calls")

    def __init__(self, token_id, text, tool_calls=None):
        self.id = int(token_id)
        self.text = text
        self.tool_calls = tool_calls or None

    def __repr__(self):
        return "Piece(%d, %r, %r)" % (self.id, self.text, self.tool_calls)


class Done:
    """Done ends a generation: finish_reason, token counts and an error text, if any.

    completion_tokens None means "count the pieces"; text None means "join
    the pieces' texts" (a backend whose final text differs, after cutting a
    stop string say, passes it). tool_calls None means "merge the pieces'
    deltas"; stop_sequence is the stop string that ended the text, when known.
    """

    __slots__ = ("finish_reason", "prompt_tokens", "completion_tokens", "error", "text", "tool_calls",
                 "stop_sequence")

    def __init__(self, finish_reason, prompt_tokens=0, completion_tokens=None, error=None, text=None,
                 tool_calls=None, stop_sequence=None):
        self.finish_reason = finish_reason
        self.prompt_tokens = int(prompt_tokens or 0)
        self.completion_tokens = completion_tokens
        self.error = error
        self.text = text
        self.tool_calls = tool_calls
        self.stop_sequence = stop_sequence

    def __repr__(self):
        return "Done(%r, %r, %r, %r)" % (self.finish_reason, self.prompt_tokens, self.completion_tokens, self.error)


class Result:
    """Result is a finished generation: text, tool calls, finish reason and token counts."""

    __slots__ = ("text", "finish_reason", "prompt_tokens", "completion_tokens", "error", "tool_calls",
                 "stop_sequence")

    def __init__(self, text, done, pieces, tool_calls=None):
        self.text = text if done.text is None else done.text
        self.finish_reason = done.finish_reason
        self.prompt_tokens = done.prompt_tokens
        self.completion_tokens = pieces if done.completion_tokens is None else int(done.completion_tokens)
        self.error = done.error
        self.tool_calls = (tool_calls or []) if done.tool_calls is None else list(done.tool_calls)
        self.stop_sequence = done.stop_sequence if done.finish_reason == "stop" else None

    def usage(self):
        """Returns the OpenAI usage object."""
        return {"prompt_tokens": self.prompt_tokens, "completion_tokens": self.completion_tokens,
                "total_tokens": self.prompt_tokens + self.completion_tokens}


# --- lines ---------------------------------------------------------------------


def token_json(piece):
    """Returns the token object of a line, or None for no token."""
    return None if piece is None else {"id": piece.id, "text": piece.text}


def token_line(piece):
    """Returns one streamed line {"token": {...}} as bytes ending in a newline."""
    line = {"token": token_json(piece)}
    if piece is not None and piece.tool_calls:
        line["tool_calls"] = piece.tool_calls
    return encode_json(line) + b"\n"


def final_line(piece, result):
    """Returns the last streamed line: the whole answer's fields, its token null when piece is None."""
    line = {"token": token_json(piece), "generated_text": result.text,
            "finish_reason": result.finish_reason, "usage": result.usage()}
    if result.tool_calls:
        line["tool_calls"] = result.tool_calls
    if result.error is not None:
        line["error"] = result.error
    return encode_json(line) + b"\n"


def merge_tool_calls(calls, deltas):
    """Adds OpenAI tool-call deltas to calls, a list of whole calls, and returns it.

    A delta's index picks the call; id and name are set by the delta that
    has them, and arguments are appended.
    """
    for delta in deltas or ():
        index = int(delta.get("index", 0))
        while len(calls) <= index:
            calls.append({"id": "", "type": "function", "function": {"name": "", "arguments": ""}})
        call, fn = calls[index], delta.get("function") or {}
        if delta.get("id"):
            call["id"] = delta["id"]
        if fn.get("name"):
            call["function"]["name"] = fn["name"]
        call["function"]["arguments"] += fn.get("arguments") or ""
    return calls


class _Tally:
    """_Tally adds up the pieces of a generation: texts, token count and tool calls."""

    def __init__(self):
        self.texts = []
        self.count = 0
        self.tool_calls = []

    def add(self, piece):
        """Adds one generated token."""
        self.texts.append(piece.text)
        self.count += 1
        merge_tool_calls(self.tool_calls, piece.tool_calls)

    def result(self, done):
        """Returns the Result of the pieces added, ended by done."""
        return Result("".join(self.texts), done, self.count, self.tool_calls)


class _Lines:
    """_Lines turns events into lines (see the module doc)."""

    def __init__(self):
        self.tally = _Tally()
        self.ended = False

    def push(self, event):
        """Takes one event; returns the line it completes, or None."""
        if self.ended:
            return None
        if isinstance(event, Done):
            self.ended = True
            return final_line(None, self.tally.result(event))
        self.tally.add(event)
        return token_line(event)

    def fail(self, text):
        """Returns the last line for a source that failed or stopped early."""
        return self.push(Done("error", 0, None, text))


def failure_text(exc):
    """Returns the text of an exception for an error line."""
    return str(exc) or type(exc).__name__


class JsonLines:
    """JsonLines iterates the JSON lines of a synchronous event source.

    close() stops it and closes the source, even before the first line.
    """

    def __init__(self, events):
        self._source = events
        self._events = iter(events)
        self._lines = _Lines()

    def __iter__(self):
        return self

    def __next__(self):
        while not self._lines.ended:
            try:
                event = next(self._events)
            except StopIteration:
                line = self._lines.fail(NO_FINISH)
            except Exception as exc:
                _log.warning("generation failed", exc_info=exc)
                line = self._lines.fail(failure_text(exc))
            else:
                line = self._lines.push(event)
            if line is not None:
                return line
        self.close()
        raise StopIteration

    def close(self):
        """Ends the stream and closes the event source."""
        self._lines.ended = True
        _close(self._source)
        _close(self._events)


class AsyncJsonLines:
    """AsyncJsonLines is JsonLines for an async event source; aclose() closes it."""

    def __init__(self, events):
        self._source = events
        self._events = events.__aiter__()
        self._lines = _Lines()

    def __aiter__(self):
        return self

    async def __anext__(self):
        while not self._lines.ended:
            try:
                event = await self._events.__anext__()
            except StopAsyncIteration:
                line = self._lines.fail(NO_FINISH)
            except Exception as exc:
                _log.warning("generation failed", exc_info=exc)
                line = self._lines.fail(failure_text(exc))
            else:
                line = self._lines.push(event)
            if line is not None:
                return line
        await self.aclose()
        raise StopAsyncIteration

    async def aclose(self):
        """Ends the stream and closes the event source."""
        self._lines.ended = True
        for it in (self._events, self._source):
            close = getattr(it, "aclose", None)
            if close is not None:
                await close()
            else:
                _close(it)


def _close(it):
    close = getattr(it, "close", None)
    if close is not None:
        close()


# --- whole answers -------------------------------------------------------------


def collect(events):
    """Runs a synchronous event source to its end and returns the Result."""
    tally = _Tally()
    it = iter(events)
    try:
        for event in it:
            if isinstance(event, Done):
                return tally.result(event)
            tally.add(event)
    finally:
        _close(it)
        _close(events)
    return tally.result(Done("error", error=NO_FINISH))


async def acollect(events):
    """Runs an async event source to its end and returns the Result."""
    tally = _Tally()
    it = events.__aiter__()
    try:
        async for event in it:
            if isinstance(event, Done):
                return tally.result(event)
            tally.add(event)
    finally:
        if hasattr(it, "aclose"):
            await it.aclose()
    return tally.result(Done("error", error=NO_FINISH))


def openai_finish_reason(reason):
    """Returns OpenAI's name for a finish reason: eos and stop are both "stop"."""
    return "stop" if reason in ("eos", "stop") else reason


def chat_message(result):
    """Returns the assistant message of a chat answer: content, and tool_calls when there are any."""
    if not result.tool_calls:
        return {"role": "assistant", "content": result.text}
    return {"role": "assistant", "content": result.text or None, "tool_calls": result.tool_calls}


def chat_completion(result, model, now=None, ident=None):
    """Returns an OpenAI chat.completion object for a finished chat request."""
    return {"id": ident or "chatcmpl-" + uuid.uuid4().hex, "object": "chat.completion",
            "created": int(time.time() if now is None else now), "model": model,
            "choices": [{"index": 0, "message": chat_message(result), "logprobs": None,
                         "finish_reason": openai_finish_reason(result.finish_reason),
                         "stop_reason": result.stop_sequence}],
            "usage": result.usage()}


def text_completion(result, model, now=None, ident=None):
    """Returns an OpenAI text_completion object for a finished completion request."""
    return {"id": ident or "cmpl-" + uuid.uuid4().hex, "object": "text_completion",
            "created": int(time.time() if now is None else now), "model": model,
            "choices": [{"index": 0, "text": result.text, "logprobs": None,
                         "finish_reason": openai_finish_reason(result.finish_reason)}],
            "usage": result.usage()}


def generation_answer(result, details=False):
    """Returns {"generated_text"}, with details when the request asked for them."""
    answer = {"generated_text": result.text}
    if details:
        answer["details"] = {"finish_reason": result.finish_reason,
                             "generated_tokens": result.completion_tokens,
                             "prompt_tokens": result.prompt_tokens}
    return answer


def answer_json(request, result, model):
    """Returns the whole answer's JSON object for request; raises when generation failed."""
    if result.finish_reason == "error":
        raise RuntimeError(result.error or "generation failed")
    if request.kind == CHAT:
        return chat_completion(result, model)
    if request.kind == COMPLETION:
        return text_completion(result, model)
    return generation_answer(result, request.details)


# --- Outputs -------------------------------------------------------------------


def _with_warnings(out, request):
    if request.warnings:
        out.add_property(WARNING, "; ".join(request.warnings))
    return out


def stream_output(request, events):
    """Returns an Output streaming the events as JSON lines."""
    lines = AsyncJsonLines(events) if hasattr(events, "__aiter__") else JsonLines(events)
    out = Output().add_property("content-type", JSONLINES).add_stream_content(lines)
    return _with_warnings(out, request)


def whole_output(request, result, model):
    """Returns an Output holding the whole answer as JSON, its finish reason as a property."""
    out = Output().add_property("content-type", JSON).add_as_json(answer_json(request, result, model))
    out.add_property(FINISH_REASON, result.finish_reason)
    return _with_warnings(out, request)


def respond(request, events, model):
    """Returns the answer to request from a synchronous event source.

    A streamed request gets a streaming Output; otherwise the source runs to
    its end here and the whole answer comes back.
    """
    if request.stream:
        return stream_output(request, events)
    return whole_output(request, collect(events), model)


async def arespond(request, events, model):
    """Returns the answer to request from an async event source (see respond)."""
    if request.stream:
        return stream_output(request, events)
    return whole_output(request, await acollect(events), model)


def declare(caps):
    """Returns the Output a handler answers the initialization call with: caps as its properties.

    caps is a schemas.Capabilities, or None to declare nothing.
    """
    out = Output()
    for key, value in (caps.properties() if caps is not None else {}).items():
        out.add_property(key, value)
    return out


def bad_request(exc):
    """Returns the 400 Output for a RequestError; its body adds param and error_code when known."""
    text = str(exc)
    code = getattr(exc, "code", 400)
    body = {"code": code, "message": text, "error": text}
    for key in ("param", "error_code"):
        if getattr(exc, key, None):
            body[key] = getattr(exc, key)
    out = Output(code, text).add_property("content-type", JSON)
    return out.add_as_json(body)


def failed(exc):
    """Returns the error Output of one failed batch item: 424, or 507 for out of memory."""
    text = failure_text(exc)
    return Output().error(text, code=507 if is_out_of_memory(exc) else 424)


def batch_output(outputs):
    """Returns one Output answering a dynamic batch from one whole Output per item.

    Item i's content and properties get the prefix batch_<i>.; an item whose
    code is not 200 gets the properties batch_<i>.code and batch_<i>.message.
    """
    out = Output()
    for i, item in enumerate(outputs):
        prefix = "batch_%d." % i
        for key, value in zip(item.content.keys, item.content.values):
            out.content.add(prefix + key, value)
        for key, value in item.properties.items():
            out.add_property(prefix + key, value)
        if item.code != 200:
            out.add_property(prefix + "code", str(item.code))
            out.add_property(prefix + "message", item.message)
    return out
