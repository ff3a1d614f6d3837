"""switchyard's handler for the toy chat model (DJL handler API).

The worker calls handle(inputs). The empty initialization input starts one
Engine (engine.py: continuous batching with a KV cache) per worker. Each
request is checked with switchyard's generative schemas (chat, generation or
completion; a bad body answers 400), rendered with the chat template,
submitted to the engine, and answered as a JSON-lines stream or as a whole
answer. Closing a stream (what the runtime does when the request is canceled
or its client leaves) cancels the engine sequence. A dynamic batch submits
all its requests first, so they share decode steps, then collects them.

serving.properties sets option.rolling_batch=scheduler: requests come as they
arrive, several at once on the thread pool of the runtime, and the engine
batches them itself.

The answer to the initialization call declares the model's capabilities:
its context length (n_positions, 256 tokens), no tool calls, one choice.
A prompt that does not fit, or a max_tokens that does not fit beside it,
answers 400 naming the limit instead of being cut short; tools and n > 1
answer 400 too.
"""

import os

try:
    from switchyard_runtime.generative import outputs, schemas
except ImportError as missing:  # pragma: no cover - depends on how the folder is served
    raise ImportError("this chat model's handler needs switchyard's worker runtime (the package "
                      "switchyard_runtime): serve the folder with switchyard, or put "
                      "pyruntime on PYTHONPATH (%s)" % missing) from missing

import engine as chat_engine

DEFAULT_THREADS = 2  # torch threads; the toy model gains nothing from more cores
DEFAULT_MAX_BATCH = 8


def _int_option(props, key, default):
    raw = props.get(key)
    return int(raw) if raw not in (None, "") else default


def _device(props):
    if props.get("device"):
        return props["device"]
    if int(props.get("device_id", -1) or -1) >= 0:
        import torch

        if torch.cuda.is_available():
            return "cuda"
    return "cpu"


class SequenceEvents:
    """SequenceEvents turns an engine Sequence into generation events.

    It yields a Piece per token, then a Done. close() before the end
    cancels the sequence, also when nothing was read yet.
    """

    def __init__(self, seq):
        self.seq = seq
        self.ended = False

    def __iter__(self):
        return self

    def __next__(self):
        if self.ended:
            raise StopIteration
        try:
            token = next(self.seq)
        except StopIteration:
            self.ended = True
            seq = self.seq
            return outputs.Done(seq.finish_reason or "error", seq.prompt_tokens, seq.generated_tokens,
                                seq.error, text=seq.text, stop_sequence=seq.stream.matched)
        return outputs.Piece(token.id, token.text)

    def close(self):
        """Cancels the sequence unless its end was read."""
        if not self.ended:
            self.ended = True
            self.seq.cancel()


class ChatModel:
    """ChatModel serves the chat engine to the worker runtime."""

    def __init__(self):
        self.engine = None
        self.model_name = None
        self.default_max = schemas.DEFAULT_MAX_TOKENS
        self.caps = schemas.NO_CAPABILITIES

    def initialize(self, props):
        """Starts the engine for the initialization properties."""
        model_dir = os.path.abspath(props.get("model_dir") or os.path.dirname(os.path.abspath(__file__)))
        self.model_name = props.get("model_name") or os.path.basename(model_dir)
        self.default_max = schemas.default_max_tokens(props)
        threads = _int_option(props, "threads", min(DEFAULT_THREADS, os.cpu_count() or 1))
        max_batch = _int_option(props, "max_rolling_batch_size", DEFAULT_MAX_BATCH)
        self.engine = chat_engine.Engine(model_dir, device=_device(props), max_batch=max_batch, threads=threads)
        self.caps = schemas.Capabilities(context_length=self.engine.config.n_positions)
        return outputs.declare(self.caps)

    def close(self):
        """Stops the engine (unfinished sequences end as canceled)."""
        if self.engine is not None:
            self.engine.close()

    def handle(self, inputs):
        """Answers a request or a dynamic batch; initializes on the empty input."""
        if inputs.is_empty():
            return self.initialize(inputs.get_properties())
        if self.engine is None:
            raise RuntimeError("the chat model is not initialized")
        if inputs.is_batch():
            return self.batch(inputs.get_batches())
        started = self.start(inputs)
        if not isinstance(started, tuple):
            return started
        req, events = started
        return outputs.respond(req, events, self.model_name)

    def start(self, inputs, whole=False):
        """Submits one request; returns (request, events), or the 400 Output for a bad body."""
        try:
            req = schemas.parse_input(inputs, "scheduler", self.default_max, self.caps)
            ids = self.prompt_ids(req)
            schemas.fit_context(req, len(ids), self.caps.context_length)
        except schemas.RequestError as exc:
            return outputs.bad_request(exc)
        if whole:
            req.stream = False
        seq = self.engine.submit(ids, req.max_new_tokens, temperature=req.temperature, top_p=req.top_p,
                                 stop=req.stop or None, seed=req.seed)
        return req, SequenceEvents(seq)

    def prompt_ids(self, req):
        """Returns the prompt's token ids: the chat template applied to messages, or the text."""
        text = self.engine.render_chat(req.messages) if req.kind == schemas.CHAT else req.prompt
        ids = self.engine.encode(text)
        if not ids:
            field = "prompt" if req.kind == schemas.COMPLETION else "inputs"
            raise schemas.RequestError("%s must not be empty" % field)
        return ids

    def batch(self, items):
        """Submits every item of a dynamic batch, then collects whole answers."""
        started = [self._start_item(item) for item in items]
        return outputs.batch_output([self._finish_item(s) for s in started])

    def _start_item(self, item):
        try:
            return self.start(item, whole=True)
        except Exception as exc:
            return outputs.failed(exc)

    def _finish_item(self, started):
        if not isinstance(started, tuple):
            return started
        req, events = started
        try:
            return outputs.whole_output(req, outputs.collect(events), self.model_name)
        except Exception as exc:
            return outputs.failed(exc)


_model = ChatModel()


def handle(inputs):
    """handle is the entry point the worker runtime calls."""
    return _model.handle(inputs)
