"""The disable backend of the generative handler: a transformers pipeline.

transformers.pipeline(option.task, model=option.model_id or the folder) is
built once. For text-generation the request follows the generative schemas;
the pipeline makes the whole answer at once, so a streamed request gets its
lines after generation ends (same format, no earlier first byte). The token
lines come from encoding the answer again, and the finish reason is stop
(a stop string cut it), length (it used max_new_tokens) or eos.

Other tasks take {"inputs": ..., "parameters": {...}} (or a plain text body)
and answer the pipeline's result as JSON.
"""

from .. import genoutput
from ..backends import model_path
from ..generative import CHAT, RequestError, decode_body, parse_input
from ..outputs import Output

GENERATIVE_TASKS = ("text-generation",)


def device(props):
    """Returns the pipeline device: 0 (the one GPU a worker sees) or -1 for the CPU."""
    try:
        return 0 if int(props.get("device_id", -1)) >= 0 else -1
    except ValueError:
        return -1


def cut_at_stop(text, stops):
    """Returns text cut before the first stop string, and whether one was found."""
    found = [i for i in (text.find(s) for s in stops if s) if i >= 0]
    return (text[:min(found)], True) if found else (text, False)


def token_pieces(tokenizer, ids, text):
    """Returns one Piece per id whose texts add up to text (decoded incrementally)."""
    pieces, shown = [], ""
    for n, token_id in enumerate(ids):
        upto = text if n == len(ids) - 1 else tokenizer.decode(ids[:n + 1])
        delta = upto[len(shown):] if upto.startswith(shown) else ""
        shown += delta
        pieces.append(genoutput.Piece(token_id, delta))
    return pieces


class PipelineBackend(object):
    """PipelineBackend answers requests with one transformers pipeline."""

    def __init__(self, settings):
        import transformers

        self._transformers = transformers
        self.settings = settings
        task = settings.props.get("task") or None
        self.pipe = transformers.pipeline(task=task, model=model_path(settings.model_dir, settings.props),
                                          device=device(settings.props))
        self.task = task or getattr(self.pipe, "task", None)

    def answer(self, inputs, whole=False):
        """Returns the Output for one request."""
        if self.task not in GENERATIVE_TASKS:
            return self._other(inputs)
        req = parse_input(inputs, "disable", self.settings.default_max)
        if whole:
            req.stream = False
        return genoutput.respond(req, self.events(req), self.settings.model_name)

    def _other(self, inputs):
        data, params = _task_input(inputs)
        result = self.pipe(data, **params)
        return Output().add_property("content-type", genoutput.JSON).add_as_json(result)

    def prompt(self, req):
        """Returns the prompt text: the tokenizer's chat template for a chat request."""
        if req.kind != CHAT:
            return req.prompt
        return self.pipe.tokenizer.apply_chat_template(req.messages, tokenize=False, add_generation_prompt=True)

    def generate_kwargs(self, req):
        """Returns the pipeline's generation keywords for a request."""
        kwargs = {"max_new_tokens": req.max_new_tokens, "return_full_text": False,
                  "do_sample": req.temperature > 0}
        if req.temperature > 0:
            kwargs.update(temperature=req.temperature, top_p=req.top_p)
        return kwargs

    def events(self, req):
        """Yields the Pieces of the whole generated answer, then its Done."""
        prompt = self.prompt(req)
        if req.seed is not None:
            self._transformers.set_seed(req.seed)
        out = self.pipe(prompt, **self.generate_kwargs(req))
        text, stopped = cut_at_stop(out[0]["generated_text"], req.stop)
        tokenizer = self.pipe.tokenizer
        ids = list(tokenizer.encode(text, add_special_tokens=False))
        for piece in token_pieces(tokenizer, ids, text):
            yield piece
        reason = "stop" if stopped else ("length" if len(ids) >= req.max_new_tokens else "eos")
        yield genoutput.Done(reason, len(tokenizer.encode(prompt)), len(ids), text=text)


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
