"""rolling_batch=disable for a causal LM: model.generate per request or per dynamic batch.

A dynamic batch (batch_size > 1) is one model.generate call over the
left-padded prompts of every request that asks for the same generation
settings (requests that differ are a call of their own), and each request
is answered whole. A lone request that asks to stream gets one JSON line
per token as the model produces them: generate runs on a thread and hands
each new token to the stream through a streamer; a client that leaves
stops the generation at the next token.

With option.enable_lora each request may name a LoRA adapter (the
front-end's property "adapter", or the body's "adapters"): the requests of
one call run with their own adapters in the same forward passes (PEFT's
adapter_names; adapters.py puts them on the device first, at most
max_loras at once, so a group that names more is split), and the answer
reports the adapters loaded and evicted for it (ADAPTER_EVENTS).

Answers follow the request's schema (chat, completion, generation). A
generation request ({"inputs", "parameters"}) answered whole gets what
DJL's Hugging Face handler and transformers' text-generation pipeline give:
[{"generated_text": <prompt + continuation>}], the prompt left out with
parameters.return_full_text=false.
"""

import logging
import queue
import threading

from ..djl.outputs import Output
from ..generative import outputs as genoutput
from ..generative.schemas import GENERATION, RequestError, fit_context, parse_input, refuse_adapter
from .adapters import BASE, AdapterError
from .causal import PieceMaker

# The property of an answer that names the adapters loaded and evicted for
# it ("loaded:a,evicted:b"), which the front-end counts and shows.
ADAPTER_EVENTS = "x-switchyard-adapter-events"
# The property of an answer that names the adapter that answered it (none
# for the base), which the front-end counts per adapter.
ADAPTER_USED = "x-switchyard-adapter"

_log = logging.getLogger("switchyard.hf.generate")


class Prepared:
    """Prepared is one checked request with its prompt, ready to generate."""

    __slots__ = ("req", "text", "ids", "key", "adapter")

    def __init__(self, req, text, ids, adapter=None):
        self.req = req
        self.text = text
        self.ids = ids
        self.adapter = adapter or BASE
        self.key = (req.max_new_tokens, req.temperature, req.top_p, req.seed, tuple(req.stop))


class GenerateBackend:
    """GenerateBackend serves a causal LM with model.generate (rolling_batch=disable)."""

    def __init__(self, model, settings, caps, adapters=None):
        self.model = model
        self.settings = settings
        self.caps = caps
        self.adapters = adapters  # an adapters.Adapters with option.enable_lora, else None
        self.calls = 0  # generate calls made, for the log and the tests

    def prepare(self, inputs):
        """Returns the Prepared request of one Input; raises RequestError for a bad one."""
        req = parse_input(inputs, "disable", self.settings.default_max, self.caps)
        adapter = inputs.get_property("adapter") or req.adapter
        if self.adapters is None:
            refuse_adapter(inputs, req)
        elif adapter and adapter != BASE:
            self.adapters.get(adapter)
        text, ids = self.model.prompt(req)
        fit_context(req, len(ids), self.caps.context_length)
        return Prepared(req, text, ids, adapter)

    def answer(self, inputs, whole=False):
        """Returns the Output of one request."""
        try:
            p = self.prepare(inputs)
        except AdapterError as exc:
            return adapter_error(exc)
        if p.req.stream and not whole:
            out = genoutput.stream_output(p.req, self.stream(p))
            return self._with_events(used(out, p))
        return self._with_events(used(self.whole(p, self.generate([p])[0]), p))

    def answer_batch(self, items):
        """Returns one whole Output per request of a dynamic batch."""
        outs, groups = [None] * len(items), {}
        for i, item in enumerate(items):
            try:
                p = self.prepare(item)
            except AdapterError as exc:
                outs[i] = adapter_error(exc)
                continue
            except RequestError as exc:
                outs[i] = genoutput.bad_request(exc)
                continue
            groups.setdefault(p.key, []).append((i, p))
        for members in (part for group in groups.values() for part in self.split(group)):
            try:
                results = self.generate([p for _, p in members])
            except AdapterError as exc:
                results = [exc] * len(members)
            except Exception as exc:
                results = [genoutput.failed(exc)] * len(members)
            for (i, p), events in zip(members, results):
                outs[i] = adapter_error(events) if isinstance(events, AdapterError) else (
                    events if not isinstance(events, list) else used(self.whole(p, events), p))
        self._with_events(next((o for o in outs if o is not None), None))
        return outs

    def split(self, members):
        """Splits a group so that no part names more adapters than fit on the device at once."""
        if self.adapters is None:
            return [members]
        parts, names = [[]], set()
        for member in members:
            name = member[1].adapter
            if name != BASE and name not in names and len(names) == self.adapters.max_loras:
                parts.append([])
                names = set()
            if name != BASE:
                names.add(name)
            parts[-1].append(member)
        return [part for part in parts if part]

    def _with_events(self, out):
        """Adds the adapter loads and evictions since the last answer to out."""
        if out is not None and self.adapters is not None:
            events = self.adapters.take_events()
            if events:
                out.add_property(ADAPTER_EVENTS, events)
        return out

    def whole(self, p, events):
        """Returns the whole answer of one request from its events."""
        result = genoutput.collect(events)
        if p.req.kind != GENERATION:
            return genoutput.whole_output(p.req, result, self.settings.model_name)
        if result.finish_reason == "error":
            raise RuntimeError(result.error or "generation failed")
        text = p.text + result.text if p.req.return_full_text is not False else result.text
        answer = {"generated_text": text}
        if p.req.details:
            answer["details"] = {"finish_reason": result.finish_reason, "generated_tokens": result.completion_tokens,
                                 "prompt_tokens": result.prompt_tokens}
        out = Output().add_property("content-type", genoutput.JSON).add_as_json([answer])
        out.add_property(genoutput.FINISH_REASON, result.finish_reason)
        for warning in p.req.warnings:
            out.add_property(genoutput.WARNING, warning)
        return out

    def kwargs(self, p):
        """Returns model.generate's keywords for a request."""
        req = p.req
        kwargs = {"max_new_tokens": req.max_new_tokens, "do_sample": req.temperature > 0,
                  "pad_token_id": self.model.tokenizer.pad_token_id}
        if req.temperature > 0:
            kwargs.update(temperature=req.temperature, top_p=req.top_p)
        if req.stop:
            kwargs.update(stop_strings=list(req.stop), tokenizer=self.model.tokenizer)
        return kwargs

    def generate(self, prepared, streamer=None, stopping=None, ready=None):
        """Runs one model.generate over the prompts; returns each one's events.

        ready is with_adapters' answer for prepared, when the caller got it
        already; otherwise the adapters are put on the device here.
        """
        import torch
        import transformers

        first = prepared[0]
        if first.req.seed is not None:
            transformers.set_seed(first.req.seed)
        batch = self.model.tokenizer.pad({"input_ids": [p.ids for p in prepared]}, return_tensors="pt")
        batch = {k: v.to(self.model.device) for k, v in batch.items()}
        extra = {}
        if stopping is not None:
            extra["stopping_criteria"] = transformers.StoppingCriteriaList([stopping])
        model, more = ready if ready is not None else self.with_adapters(prepared)
        extra.update(more)
        with torch.no_grad(), ForwardCount(self.model.model) as passes:
            out = model.generate(**batch, **self.kwargs(first), streamer=streamer, **extra)
        self.calls += 1
        _log.debug("generate: one call for %d sequences (adapters %s), %d forward passes", len(prepared),
                   ",".join(p.adapter for p in prepared), passes.n)
        width = batch["input_ids"].shape[1]
        return [self._events(p, out[row, width:].tolist()) for row, p in enumerate(prepared)]

    def with_adapters(self, prepared):
        """Puts the adapters of prepared on the device; returns the model to generate with and its keywords."""
        if self.adapters is None:
            return self.model.model, {}
        names = [p.adapter for p in prepared]
        self.adapters.ensure(names)
        model = self.adapters.generator()
        return model, ({"adapter_names": names} if model is not self.model.model else {})

    def _events(self, p, ids):
        ids = trim(ids, self.model)
        maker = PieceMaker(self.model, p.req, len(p.ids))
        events = []
        for token_id in ids:
            events.extend(maker.add(token_id))
            if maker.stopped:
                break
        return events + maker.done()

    def stream(self, p):
        """Yields the events of one request as the model produces its tokens."""
        tokens = queue.Queue()
        cancel = threading.Event()
        streamer = _QueueStreamer(tokens)
        stopping = _Cancel(cancel)
        error = []
        ready = self.with_adapters([p])  # here, not on the thread: the adapters change the model

        def run():
            try:
                self.generate([p], streamer=streamer, stopping=stopping, ready=ready)
            except Exception as exc:
                error.append(exc)
            finally:
                tokens.put(None)

        thread = threading.Thread(target=run, name="switchyard-generate", daemon=True)
        thread.start()
        try:
            yield from self._stream_events(p, tokens, error)
        finally:
            cancel.set()
            thread.join()

    def _stream_events(self, p, tokens, error):
        maker = PieceMaker(self.model, p.req, len(p.ids))
        while True:
            token_id = tokens.get()
            if token_id is None:
                break
            if token_id == self.model.tokenizer.pad_token_id and token_id not in self.model.eos_ids:
                continue
            yield from maker.add(token_id)
            if maker.stopped:
                break
        if error:
            raise error[0]
        yield from maker.done()


def trim(ids, model):
    """Returns generated ids up to and including the first end token (the rest is padding)."""
    for i, token_id in enumerate(ids):
        if token_id in model.eos_ids:
            return ids[:i + 1]
    return ids


class _QueueStreamer:
    """_QueueStreamer is a transformers streamer that queues each new token id.

    generate() calls put() with the prompt first (skipped), then with each
    new token, and end() when it is done.
    """

    def __init__(self, tokens):
        self.tokens = tokens
        self.prompt_seen = False

    def put(self, value):
        """Queues the new token ids (after the prompt)."""
        if not self.prompt_seen:
            self.prompt_seen = True
            return
        for token_id in value.reshape(-1).tolist():
            self.tokens.put(int(token_id))

    def end(self):
        """Marks the end; the generating thread queues the end itself."""


class _Cancel:
    """_Cancel is a stopping criterion that ends generation once cancel is set."""

    def __init__(self, cancel):
        self.cancel = cancel

    def __call__(self, input_ids, scores, **kwargs):
        import torch

        return torch.full((input_ids.shape[0],), self.cancel.is_set(), dtype=torch.bool, device=input_ids.device)


class ForwardCount:
    """ForwardCount counts a module's forward passes while it is entered (for the debug log and the tests)."""

    def __init__(self, module):
        self.module = module
        self.n = 0
        self.hook = None

    def _count(self, *_):
        self.n += 1

    def __enter__(self):
        self.hook = self.module.register_forward_hook(self._count)
        return self

    def __exit__(self, *_):
        self.hook.remove()


def used(out, p):
    """Names the adapter of p on its answer out (ADAPTER_USED); the base's answer names none."""
    if p.adapter != BASE:
        out.add_property(ADAPTER_USED, p.adapter)
    return out


def adapter_error(exc):
    """Returns the Output of a request whose adapter is unknown (404) or cannot be placed (507)."""
    return genoutput.bad_request(exc)
