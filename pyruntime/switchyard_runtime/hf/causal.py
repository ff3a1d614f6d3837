"""A causal language model on transformers: prompts, token pieces, finish reasons.

CausalModel loads the model and its tokenizer once (left padding, the end
token as pad when the tokenizer has none) and gives both backends
(generate.py for rolling_batch=disable, continuous.py for transformers'
continuous batching) what they share:

* the prompt of a request: the tokenizer's own chat template applied to a
  chat request (add_generation_prompt), the text itself for the generation
  and completion schemas, and its token ids (the chat template's text is
  encoded without adding special tokens again);
* Pieces as tokens arrive: Detokenizer decodes incrementally and gives each
  token the text it adds, so that a stream is one chunk per token;
* stop strings: StopText holds back text that may be the start of a stop
  string and cuts the answer before the first one found;
* the finish reason: stop (a stop string), eos (an end token), or length
  (max_new_tokens used up), which /metrics counts.
"""

from ..generative import outputs as genoutput
from ..generative.prompts import template_kwargs, template_messages
from ..generative.schemas import CHAT
from . import loading

# No real model has a context this long; tokenizers without a limit report about 1e30.
UNLIMITED = 10 ** 9
# Decoding as transformers' text-generation pipeline does (clean_up_tokenization_spaces
# is left to the tokenizer: transformers ignores it for BPE tokenizers).
DECODE = {"skip_special_tokens": True}


class CausalModel:
    """CausalModel is a loaded AutoModelForCausalLM with its tokenizer."""

    def __init__(self, folder, props):
        import transformers

        kwargs = loading.load_kwargs(props)
        self.device = loading.device(props)
        self.tokenizer = transformers.AutoTokenizer.from_pretrained(
            folder, trust_remote_code=kwargs["trust_remote_code"])
        self.tokenizer.padding_side = "left"
        if self.tokenizer.pad_token is None:
            self.tokenizer.pad_token = self.tokenizer.eos_token
        self.model = transformers.AutoModelForCausalLM.from_pretrained(folder, **kwargs).to(self.device).eval()
        self.eos_ids = end_tokens(self.model.generation_config, self.tokenizer)
        self.context_length = context_length(self.model.config, self.tokenizer)

    def prompt(self, req):
        """Returns (prompt text, prompt ids) of a checked request."""
        if req.kind != CHAT:
            return req.prompt, list(self.tokenizer(req.prompt)["input_ids"])
        text = self.tokenizer.apply_chat_template(template_messages(req.messages), tokenize=False,
                                                  add_generation_prompt=True, **template_kwargs(req))
        return text, list(self.tokenizer(text, add_special_tokens=False)["input_ids"])

    def decode(self, ids):
        """Returns the text of generated ids, decoded as the text-generation pipeline does."""
        return self.tokenizer.decode(ids, **DECODE)

    def finish_reason(self, ids, max_new_tokens, stopped):
        """Returns stop, eos or length for a generation that produced ids."""
        if stopped:
            return "stop"
        if ids and ids[-1] in self.eos_ids:
            return "eos"
        return "length" if len(ids) >= max_new_tokens else "eos"


def end_tokens(generation_config, tokenizer):
    """Returns the set of end-of-generation token ids (generation config, else the tokenizer's)."""
    eos = getattr(generation_config, "eos_token_id", None)
    if eos is None:
        eos = tokenizer.eos_token_id
    if eos is None:
        return set()
    return set(eos) if isinstance(eos, (list, tuple, set)) else {int(eos)}


def context_length(config, tokenizer):
    """Returns the model's context length in tokens, or None when neither config nor tokenizer says."""
    for key in ("max_position_embeddings", "n_positions"):
        value = getattr(config, key, None)
        if isinstance(value, int) and 0 < value < UNLIMITED:
            return value
    value = getattr(tokenizer, "model_max_length", None)
    if isinstance(value, int) and 0 < value < UNLIMITED:
        return value
    return None


class Detokenizer:
    """Detokenizer gives each new token the text it adds (maybe "").

    It decodes a short window of recent ids, as text-generation-inference
    does, and holds text back while it ends in an incomplete character.
    """

    def __init__(self, model):
        self.model = model
        self.ids = []
        self.prefix = 0
        self.read = 0

    def add(self, token_id):
        """Adds one generated id and returns the text it completes."""
        self.ids.append(int(token_id))
        before = self.model.decode(self.ids[self.prefix:self.read])
        after = self.model.decode(self.ids[self.prefix:])
        if len(after) > len(before) and not after.endswith("\ufffd"):
            self.prefix, self.read = self.read, len(self.ids)
            return after[len(before):]
        return ""

    def text(self):
        """Returns the whole generated text."""
        return self.model.decode(self.ids)


class StopText:
    """StopText cuts generated text at the first stop string and keeps the stream clean of it.

    push() takes a token's text and returns the text that may go out now:
    the end of the text that a stop string starts with is held back.
    Once a stop string is complete, stopped is set and nothing more goes out.
    """

    def __init__(self, stops):
        self.stops = [s for s in stops if s]
        self.longest = max((len(s) for s in self.stops), default=0)
        self.text = ""
        self.sent = 0
        self.stopped = None  # the stop string found

    def push(self, delta):
        """Adds delta and returns the text that is safe to send."""
        if self.stopped is not None:
            return ""
        self.text += delta
        if not self.stops:
            return self._send(len(self.text))
        cut, stop = first_stop(self.text, self.stops)
        if stop is not None:
            self.stopped = stop
            return self._send(cut)
        return self._send(len(self.text) - self._held())

    def _held(self):
        """Returns the length of the longest end of the text that a stop string starts with."""
        for n in range(min(self.longest - 1, len(self.text)), 0, -1):
            tail = self.text[-n:]
            if any(s.startswith(tail) for s in self.stops):
                return n
        return 0

    def flush(self):
        """Returns what was held back, once generation ended without a stop string."""
        if self.stopped is not None:
            return ""
        return self._send(len(self.text))

    def _send(self, upto):
        upto = max(self.sent, upto)
        out = self.text[self.sent:upto]
        self.sent = upto
        return out


def first_stop(text, stops):
    """Returns (index, stop) of the earliest stop string in text, or (len(text), None)."""
    found = [(i, s) for i, s in ((text.find(s), s) for s in stops) if i >= 0]
    if not found:
        return len(text), None
    return min(found)


class PieceMaker:
    """PieceMaker turns generated ids into Pieces and the Done that ends them."""

    def __init__(self, model, req, prompt_tokens):
        self.model = model
        self.req = req
        self.prompt_tokens = prompt_tokens
        self.detok = Detokenizer(model)
        self.stop = StopText(req.stop)
        self.held = []  # pieces whose text is still held back by StopText

    @property
    def stopped(self):
        """Reports whether a stop string ended the text."""
        return self.stop.stopped is not None

    def add(self, token_id):
        """Returns the Pieces that may go out after this token (one per token, in order)."""
        text = self.stop.push(self.detok.add(token_id))
        self.held.append(genoutput.Piece(token_id, ""))
        if text or not self.req.stop or self.stopped:
            return self._release(text)
        return []

    def done(self):
        """Returns the last Pieces and the Done of the generation."""
        pieces = self._release(self.stop.flush())
        ids = self.detok.ids
        text = self.detok.text()
        if self.stopped:
            text = text[:first_stop(text, self.stop.stops)[0]]
        reason = self.model.finish_reason(ids, self.req.max_new_tokens, self.stopped)
        done = genoutput.Done(reason, self.prompt_tokens, len(ids), text=text,
                              stop_sequence=self.stop.stopped)
        return pieces + [done]

    def _release(self, text):
        pieces, self.held = self.held, []
        if pieces and text:
            pieces[-1].text = text
        return pieces
