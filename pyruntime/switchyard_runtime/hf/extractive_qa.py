"""Extractive question answering on an AutoModelForQuestionAnswering.

transformers 5 no longer ships the question-answering pipeline, so the
handler runs the model itself and reads the answer span the way that
pipeline did (transformers 4.x): the context is tokenized after the
question in windows (max_seq_len tokens, doc_stride overlap), start and end
logits outside the context are masked, each is turned into probabilities,
and a span's score is P(start) * P(end) over spans no longer than
max_answer_len tokens. A span is widened to whole words (align_to_words)
and mapped back to characters of the context; equal answers from several
windows add their scores. The answer is {"score", "start", "end",
"answer"}, or a list of the top_k best when top_k > 1.
"""

import numpy as np

DEFAULTS = {"top_k": 1, "max_answer_len": 15, "max_seq_len": 384, "doc_stride": 128,
            "handle_impossible_answer": False, "align_to_words": True}
# Parameters the 4.x pipeline took that change nothing here.
IGNORED = ("max_question_len", "padding")


class QuestionAnswering:
    """QuestionAnswering answers {"question", "context"} inputs with one model."""

    def __init__(self, model, tokenizer, device):
        self.model = model.to(device).eval()
        self.tokenizer = tokenizer
        self.device = device

    def __call__(self, inputs, **params):
        """Returns one answer per input (a dict, or a list when top_k > 1)."""
        opts = options(params)
        return [self.answer(item["question"], item["context"], opts) for item in inputs]

    def answer(self, question, context, opts):
        """Returns the best answer(s) of one question about one context."""
        enc, start, end = self.logits(question, context, opts)
        found = {}
        for window in range(start.shape[0]):
            for score, s, e in spans(start[window], end[window], context_mask(enc, window), opts):
                key = char_span(enc, window, s, e, opts["align_to_words"])
                found[key] = found.get(key, 0.0) + float(score)
        best = sorted(found.items(), key=lambda kv: -kv[1])[:opts["top_k"]]
        answers = [{"score": score, "start": span[0], "end": span[1], "answer": context[span[0]:span[1]]}
                   for span, score in best]
        if opts["top_k"] == 1:
            return answers[0] if answers else {"score": 0.0, "start": 0, "end": 0, "answer": ""}
        return answers

    def logits(self, question, context, opts):
        """Returns the encoding of the question and the context's windows, and their start and end logits."""
        import torch

        enc = self.tokenizer(question, context, truncation="only_second", max_length=opts["max_seq_len"],
                             stride=opts["doc_stride"], return_overflowing_tokens=True,
                             return_offsets_mapping=True, padding="longest", return_tensors="pt")
        feed = {k: enc[k].to(self.device) for k in ("input_ids", "attention_mask", "token_type_ids") if k in enc}
        with torch.no_grad():
            out = self.model(**feed)
        return enc, out.start_logits.float().cpu().numpy(), out.end_logits.float().cpu().numpy()


def options(params):
    """Returns the answer options: the defaults with params over them; unknown names are refused."""
    opts = dict(DEFAULTS)
    for key, value in params.items():
        if key in IGNORED:
            continue
        if key not in DEFAULTS:
            raise TypeError("question-answering got an unexpected keyword argument %r" % key)
        opts[key] = value
    for key in ("top_k", "max_answer_len", "max_seq_len", "doc_stride"):
        if isinstance(opts[key], bool) or not isinstance(opts[key], int) or opts[key] < 1:
            raise ValueError("parameters.%s must be a positive integer" % key)
    return opts


def context_mask(enc, window):
    """Returns a bool array: True for the tokens of the context in this window."""
    ids = enc.sequence_ids(window)
    return np.array([sid == 1 for sid in ids], dtype=bool)


def spans(start, end, allowed, opts):
    """Yields (score, start token, end token) of the best spans of one window."""
    start = probabilities(np.where(allowed, start, -10000.0))
    end = probabilities(np.where(allowed, end, -10000.0))
    scores = np.triu(np.outer(start, end))
    scores = np.tril(scores, opts["max_answer_len"] - 1)
    scores = np.where(np.outer(allowed, allowed), scores, 0.0)
    flat = scores.ravel()
    want = min(flat.size, opts["top_k"] * 2 + 10)
    width = scores.shape[1]
    for index in np.argsort(-flat, kind="stable")[:want]:
        if flat[index] > 0:
            yield flat[index], int(index // width), int(index % width)


def probabilities(logits):
    """Returns softmax(logits) in float64."""
    shifted = np.exp(logits.astype(np.float64) - logits.max())
    return shifted / shifted.sum()


def char_span(enc, window, s, e, align_to_words):
    """Returns the [first, last) characters of the context that tokens s..e cover."""
    if align_to_words:
        words = enc.word_ids(window)
        if words[s] is not None and words[e] is not None:
            return (enc.word_to_chars(window, words[s], sequence_index=1).start,
                    enc.word_to_chars(window, words[e], sequence_index=1).end)
    offsets = enc["offset_mapping"][window]
    return int(offsets[s][0]), int(offsets[e][1])
