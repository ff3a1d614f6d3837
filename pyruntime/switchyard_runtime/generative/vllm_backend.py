"""The vllm backend of the generative handler: vLLM's AsyncLLMEngine.

It is written against vLLM's documented engine API: AsyncEngineArgs,
AsyncLLMEngine.from_engine_args, generate(prompt, SamplingParams,
request_id) (an async generator of RequestOutput with cumulative text and
token ids), get_tokenizer() (for the chat template) and abort(request_id).
Requests run on the runtime's asyncio loop; a stream that is closed before
its generation finished (a cancel, a client that left) aborts the request.

The context length the handler declares is the engine's max_model_len
(option.max_model_len when set, else what vLLM derived from the model).
A prompt is counted with the engine's tokenizer before it is submitted, so
one that does not fit answers 400 from switchyard's schema check, naming
the limit. With tool calls on, the tools go to the chat template and the
calls in the text become tool_calls (see handler.py).
"""

import inspect
import uuid

from . import outputs as genoutput
from . import toolcalls
from .backends import model_path
from .prompts import template_kwargs, template_messages
from .schemas import CHAT, Capabilities, RequestError, fit_context, parse_input, refuse_adapter

# DJL's dtype names, as vLLM spells them.
DTYPES = {"fp16": "float16", "bf16": "bfloat16", "fp32": "float32"}


def engine_args(settings):
    """Returns the AsyncEngineArgs keywords for the model's options."""
    props = settings.props
    args = {"model": model_path(settings.model_dir, props)}
    _put(args, "max_num_seqs", props.get("max_rolling_batch_size"), int)
    degree = props.get("tensor_parallel_degree")
    if degree not in (None, "", "max"):
        args["tensor_parallel_size"] = int(degree)
    dtype = props.get("dtype")
    if dtype:
        args["dtype"] = DTYPES.get(dtype.lower(), dtype)
    _put(args, "max_model_len", props.get("max_model_len"), int)
    _put(args, "gpu_memory_utilization", props.get("gpu_memory_utilization"), float)
    if str(props.get("trust_remote_code", "")).lower() == "true":
        args["trust_remote_code"] = True
    return args


def _put(args, key, raw, convert):
    if raw not in (None, ""):
        args[key] = convert(raw)


def max_model_len(engine, props):
    """Returns the context length: option.max_model_len, else the engine's model config's, else None."""
    raw = props.get("max_model_len")
    if raw not in (None, ""):
        return int(raw)
    for holder in (engine, getattr(engine, "engine", None)):
        config = getattr(holder, "model_config", None)
        value = getattr(config, "max_model_len", None)
        if isinstance(value, int) and value > 0:
            return value
    return None


def finish_reason(completion):
    """Returns switchyard's finish reason for a finished vLLM CompletionOutput.

    vLLM says "stop" both for the end token (stop_reason None) and for a stop
    string or stop token; "abort" is a canceled request.
    """
    reason = getattr(completion, "finish_reason", None)
    if reason == "stop":
        return "eos" if getattr(completion, "stop_reason", None) is None else "stop"
    if reason == "abort":
        return "canceled"
    return reason or "error"


class Deltas:
    """Deltas turns vLLM's cumulative outputs into one Piece per new token.

    The new text goes with the last new token; when one output brings
    several tokens the others carry "".
    """

    def __init__(self):
        self.ids = 0
        self.chars = 0

    def pieces(self, completion):
        """Returns the Pieces that completion adds to what was seen before."""
        ids = list(completion.token_ids or ())[self.ids:]
        if not ids:
            return []
        text = completion.text or ""
        delta = text[self.chars:] if len(text) > self.chars else ""
        self.ids += len(ids)
        self.chars = max(self.chars, len(text))
        return [genoutput.Piece(i, "") for i in ids[:-1]] + [genoutput.Piece(ids[-1], delta)]


class VllmBackend:
    """VllmBackend answers generative requests with vLLM's async engine."""

    def __init__(self, settings):
        import vllm

        self._vllm = vllm
        self.settings = settings
        self.engine = vllm.AsyncLLMEngine.from_engine_args(vllm.AsyncEngineArgs(**engine_args(settings)))
        self._tokenizer = None
        self.caps = Capabilities(max_model_len(self.engine, settings.props), tools=settings.tool_parser is not None)

    def answer(self, inputs, whole=False):
        """Returns a coroutine of the Output: a streaming one, or the whole answer."""
        req = parse_input(inputs, "vllm", self.settings.default_max, self.caps)
        refuse_adapter(inputs, req)
        if whole:
            req.stream = False
        return self._answer(req)

    async def _answer(self, req):
        prompt = await self.prompt(req)
        tokenizer = await self.tokenizer()
        if self.caps.context_length and hasattr(tokenizer, "encode"):
            try:
                fit_context(req, len(tokenizer.encode(prompt)), self.caps.context_length)
            except RequestError as exc:
                return genoutput.bad_request(exc)
        events = self.events(req, prompt)
        if req.tools and req.tool_choice != "none":
            events = toolcalls.filter_events(events, self.settings.tool_parser)
        if req.stream:
            return genoutput.stream_output(req, events)
        return await genoutput.arespond(req, events, self.settings.model_name)

    async def tokenizer(self):
        """Returns the engine's tokenizer, asked for once (get_tokenizer is a coroutine
        before vLLM 0.3x and a plain call since)."""
        if self._tokenizer is None:
            tokenizer = self.engine.get_tokenizer()
            self._tokenizer = await tokenizer if inspect.isawaitable(tokenizer) else tokenizer
        return self._tokenizer

    def sampling(self, req):
        """Returns the SamplingParams of a request."""
        return self._vllm.SamplingParams(n=1, max_tokens=req.max_new_tokens, temperature=req.temperature,
                                         top_p=req.top_p, stop=req.stop or None, seed=req.seed)

    async def prompt(self, req):
        """Returns the prompt text: the chat template applied to messages, or the prompt."""
        if req.kind != CHAT:
            return req.prompt
        tokenizer = await self.tokenizer()
        return tokenizer.apply_chat_template(template_messages(req.messages), tokenize=False,
                                             add_generation_prompt=True, **template_kwargs(req))

    async def events(self, req, prompt):
        """Yields the Pieces of one generation, then its Done; aborts it when closed early."""
        request_id = "switchyard-" + uuid.uuid4().hex
        results = self.engine.generate(prompt, self.sampling(req), request_id)
        deltas, finished = Deltas(), False
        try:
            async for out in results:
                completion = out.outputs[0]
                for piece in deltas.pieces(completion):
                    yield piece
                if out.finished:
                    finished = True
                    yield _done(out, completion)
                    return
        finally:
            if not finished:
                await self.engine.abort(request_id)
            await _aclose(results)


def _done(out, completion):
    prompt_ids = getattr(out, "prompt_token_ids", None) or ()
    stop = getattr(completion, "stop_reason", None)
    return genoutput.Done(finish_reason(completion), len(prompt_ids), len(completion.token_ids or ()),
                          text=completion.text, stop_sequence=stop if isinstance(stop, str) else None)


async def _aclose(it):
    close = getattr(it, "aclose", None)
    if close is not None:
        await close()
