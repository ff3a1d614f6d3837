"""Continuous batching of a causal LM with transformers' own engine.

rolling_batch=auto on a causal LM (when vLLM is not installed) serves it
with transformers' ContinuousBatchingManager: requests reach the worker as
they arrive (up to max_rolling_batch_size at once), each is added to the
manager, which runs one forward pass per step over every sequence in
flight on its own thread, and each new token comes back to the request's
stream on the runtime's asyncio loop. A request whose client left is
canceled in the manager.

Sampling is per request (the manager's per-request temperature, top-k and
top-p); a greedy request (temperature 0) asks for top-k 1, which is
argmax. Stop strings are watched in the decoded text: the request is
canceled once one appears and its answer cut before it.

The paged KV cache is sized for max_rolling_batch_size sequences of the
model's whole context (option.max_model_len when set), in blocks of 32
tokens, rather than from the device's free memory, since other workers
share the device.
"""

import asyncio
import logging
import math
import uuid

from ..generative import outputs as genoutput
from ..generative.schemas import fit_context, parse_input, refuse_adapter
from .causal import PieceMaker

BLOCK_SIZE = 32
MAX_BATCH_TOKENS = 2048
# Base sampling settings that make the manager create its per-request
# temperature, top-k and top-p processors (it only creates one for a
# setting that changes something); each request sets its own values.
BASE_SAMPLING = {"do_sample": True, "temperature": 0.7, "top_k": 50, "top_p": 0.99}

_log = logging.getLogger("switchyard.hf.continuous")


def cache_config(props, context_length, device):
    """Returns the ContinuousBatchingConfig keywords for the model's options."""
    slots = int(props.get("max_rolling_batch_size") or 32)
    raw = props.get("max_model_len")
    length = int(raw) if raw not in (None, "") else (context_length or 2048)
    return {"block_size": BLOCK_SIZE, "num_blocks": math.ceil(slots * length / BLOCK_SIZE) + slots,
            "max_batch_tokens": min(MAX_BATCH_TOKENS, max(length, 256)), "max_requests_per_batch": slots,
            "per_request_processors": True, "use_cuda_graph": None if device.startswith("cuda") else False}


class ContinuousBackend:
    """ContinuousBackend answers generative requests through transformers' continuous batching."""

    def __init__(self, model, settings, caps):
        import transformers

        self.model = model
        self.settings = settings
        self.caps = caps
        config = transformers.GenerationConfig(
            max_new_tokens=settings.default_max, eos_token_id=sorted(model.eos_ids) or None,
            pad_token_id=model.tokenizer.pad_token_id, **BASE_SAMPLING)
        cb = transformers.ContinuousBatchingConfig(
            **cache_config(settings.props, model.context_length, model.device))
        self.manager = model.model.init_continuous_batching(generation_config=config, continuous_batching_config=cb)
        self.manager.start()
        _log.info("transformers continuous batching started: %d sequences, %d cache blocks of %d tokens",
                  cb.max_requests_per_batch, cb.num_blocks, cb.block_size)

    def answer(self, inputs, whole=False):
        """Returns a coroutine of the Output: a streaming one, or the whole answer."""
        req = parse_input(inputs, "auto", self.settings.default_max, self.caps)
        refuse_adapter(inputs, req)
        if whole:
            req.stream = False
        _, ids = self.model.prompt(req)
        fit_context(req, len(ids), self.caps.context_length)
        return self._answer(req, ids)

    async def _answer(self, req, ids):
        events = self.events(req, ids)
        if req.stream:
            return genoutput.stream_output(req, events)
        return await genoutput.arespond(req, events, self.settings.model_name)

    def sampling(self, req):
        """Returns the per-request sampling keywords of the manager."""
        if req.temperature <= 0:
            return {"temperature": 1.0, "top_k": 1, "top_p": 1.0}
        return {"temperature": req.temperature, "top_k": self.model.model.config.vocab_size, "top_p": req.top_p}

    async def events(self, req, ids):
        """Yields the Pieces of one generation as they come, then its Done; cancels it when closed early."""
        request_id = "switchyard-" + uuid.uuid4().hex
        results = asyncio.Queue()
        self.manager.register_result_handler(request_id, results.put_nowait)
        self.manager.add_request(ids, request_id=request_id, max_new_tokens=req.max_new_tokens, streaming=True,
                                 **self.sampling(req))
        maker, seen, finished = PieceMaker(self.model, req, len(ids)), 0, False
        try:
            while not finished and not maker.stopped:
                out = await results.get()
                if out.error:
                    raise RuntimeError("generation failed: %s" % out.error)
                finished = out.is_finished()
                for token_id in out.generated_tokens[seen:]:
                    for piece in maker.add(token_id):
                        yield piece
                seen = len(out.generated_tokens)
            for event in maker.done():
                yield event
        finally:
            if not finished:
                self.manager.cancel_request(request_id)
                with self.manager.output_router._lock:  # pylint: disable=protected-access
                    self.manager.output_router.result_handlers.pop(request_id, None)

    def close(self):
        """Stops the manager's thread."""
        self.manager.stop(block=True, timeout=5)
