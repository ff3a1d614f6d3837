"""The disable backend of the generative handler: a transformers pipeline.

transformers.pipeline(option.task, model=option.model_id or the folder) is
built once. For text-generation the request follows the generative schemas;
the pipeline makes the whole answer at once, so a streamed request gets its
lines after generation ends (same format, no earlier first byte). The token
lines come from encoding the answer again, and the finish reason is stop
(a stop string cut it), length (it used max_new_tokens) or eos.

The prompt is counted before anything is generated: one that does not fit
the model's context (its config's max_position_embeddings or n_positions,
else the tokenizer's model_max_length) answers 400. With tool calls on
(see handler.py) the tools go to the chat template and the
calls in the answer become tool_calls.

Other tasks take {"inputs": ..., "parameters": {...}} (or a plain text body)
and answer the pipeline's result as JSON.
"""

from ..djl.outputs import Output
from . import outputs as genoutput
from . import toolcalls
from .backends import model_path
from .prompts import template_kwargs, template_messages
from .schemas import CHAT, Capabilities, RequestError, decode_body, fit_context, parse_input

GENERATIVE_TASKS = ("text-generation",)


def device(props):
    """Returns the pipeline device: 0 (the one GPU a worker sees) or -1 for the CPU."""
    try:
        return 0 if int(props.get("device_id", -1)) >= 0 else -1
    except ValueError:
        return -1


# No real model has a context this long; tokenizers without a limit report about 1e30.
UNLIMITED = 10 ** 9


def cut_at_stop(text, stops):
    """Returns text cut before the first stop string, and the stop string found (None when none was)."""
    found = [(i, s) for i, s in ((text.find(s), s) for s in stops if s) if i >= 0]
    if not found:
        return text, None
    at, stop = min(found)
    return text[:at], stop


def context_length(pipe):
    """Returns the model's context length in tokens, or None when neither config nor tokenizer says."""
    config = getattr(getattr(pipe, "model", None), "config", None)
    for key in ("max_position_embeddings", "n_positions"):
        value = getattr(config, key, None)
        if isinstance(value, int) and 0 < value < UNLIMITED:
            return value
    value = getattr(getattr(pipe, "tokenizer", None), "model_max_length", None)
    if isinstance(value, int) and 0 < value < UNLIMITED:
        return value
    return None


def token_pieces(tokenizer, ids, text):
    """Returns one Piece per id whose texts add up to text (decoded incrementally)."""
    pieces, shown = [], ""
    for n, token_id in enumerate(ids):
        upto = text if n == len(ids) - 1 else tokenizer.decode(ids[:n + 1])
        delta = upto[len(shown):] if upto.startswith(shown) else ""
        shown += delta
        pieces.append(genoutput.Piece(token_id, delta))
    return pieces


class PipelineBackend:
    """PipelineBackend answers requests with one transformers pipeline."""

    def __init__(self, settings):
        import transformers

        self._transformers = transformers
        self.settings = settings
        task = settings.props.get("task") or None
        self.pipe = transformers.pipeline(task=task, model=model_path(settings.model_dir, settings.props),
                                          device=device(settings.props))
        self.task = task or getattr(self.pipe, "task", None)
        self.caps = None  # a task that does not generate declares nothing
        if self.task in GENERATIVE_TASKS:
            self.caps = Capabilities(context_length(self.pipe), tools=settings.tool_parser is not None)

    def answer(self, inputs, whole=False):
        """Returns the Output for one request."""
        if self.task not in GENERATIVE_TASKS:
            return self._other(inputs)
        req = parse_input(inputs, "disable", self.settings.default_max, self.caps)
        if whole:
            req.stream = False
        prompt = self.prompt(req)
        prompt_tokens = len(self.pipe.tokenizer.encode(prompt))
        fit_context(req, prompt_tokens, self.caps.context_length)
        events = self.events(req, prompt, prompt_tokens)
        if req.tools and req.tool_choice != "none":
            events = toolcalls.filter_events(events, self.settings.tool_parser)
        return genoutput.respond(req, events, self.settings.model_name)

    def _other(self, inputs):
        data, params = _task_input(inputs)
        result = self.pipe(data, **params)
        return Output().add_property("content-type", genoutput.JSON).add_as_json(result)

    def prompt(self, req):
        """Returns the prompt text: the tokenizer's chat template for a chat request."""
        if req.kind != CHAT:
            return req.prompt
        return self.pipe.tokenizer.apply_chat_template(template_messages(req.messages), tokenize=False,
                                                       add_generation_prompt=True, **template_kwargs(req))

    def generate_kwargs(self, req):
        """Returns the pipeline's generation keywords for a request."""
        kwargs = {"max_new_tokens": req.max_new_tokens, "return_full_text": False,
                  "do_sample": req.temperature > 0}
        if req.temperature > 0:
            kwargs.update(temperature=req.temperature, top_p=req.top_p)
        return kwargs

    def events(self, req, prompt, prompt_tokens):
        """Yields the Pieces of the whole generated answer, then its Done."""
        if req.seed is not None:
            self._transformers.set_seed(req.seed)
        out = self.pipe(prompt, **self.generate_kwargs(req))
        text, stop = cut_at_stop(out[0]["generated_text"], req.stop)
        tokenizer = self.pipe.tokenizer
        ids = list(tokenizer.encode(text, add_special_tokens=False))
        yield from token_pieces(tokenizer, ids, text)
        reason = "stop" if stop is not None else ("length" if len(ids) >= req.max_new_tokens else "eos")
        yield genoutput.Done(reason, prompt_tokens, len(ids), text=text, stop_sequence=stop)


def _task_input(inputs):
    """Returns (inputs, parameters) of a non-generative request."""
    kind = (inputs.get_property("content-type") or "").split(";")[0].strip().lower()
    if kind.startswith("text/"):
        return inputs.get_as_string(), {}
    obj = decode_body(inputs.get_as_bytes())
    if obj.get("inputs") is None:
        raise RequestError("inputs is required")
    params = obj.get("parameters") or {}
    if not isinstance(params, dict):
        raise RequestError("parameters must be an object")
    return obj["inputs"], params
