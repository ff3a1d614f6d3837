"""langid: language identification with lande's pretrained network, in numpy.

lande (npm, MIT, by Fabio Spampinato) is a small neural network: the
frequencies of 620 character n-grams feed a dense layer of 120 ReLU units and
a dense softmax layer over 50 languages (ISO 639-3 codes). convert_lande.py
turned its weights into lande-t50.npz and its vocabulary into lande-t50.json;
this module repeats lande's text normalisation, feature extraction and
forward pass step for step, so the scores match the JavaScript original
(see test_langid.py and testdata/reference.json).

Requests:
  {"inputs": "text"}                     -> [{"label": "eng", "score": 0.97}, ...]
  {"inputs": ["a", "b"]}                 -> [[...], [...]]
  {"inputs": ..., "parameters": {"top_k": 5}}
  a text/plain body                      -> same as {"inputs": "<body>"}
  {"messages": [..., {"role": "user", "content": "text"}], ...}
                                         -> a chat.completion whose message
                                            names the language: "German (deu)"

The chat form lets the model stand in for a fine-tuned small model behind a
chat-completions endpoint (an agent's tool sends that schema): it classifies
the last user message and ignores the system message, max_tokens and
temperature.
"""

# handle() is DJL's usual entry point, as in the langdetect example.
# pylint: disable=duplicate-code

import json
import logging
import os
import re
import time
import unicodedata
from collections import Counter, namedtuple

import numpy as np

from djl_python import Input, Output

DEFAULT_TOP_K = 3
NGRAM_ORDERS = ("unigrams", "bigrams", "trigrams", "quadgrams")

# English names of lande's 50 languages, by ISO 639-3 code.
LANGUAGE_NAMES = {
    "afr": "Afrikaans", "ara": "Arabic", "aze": "Azerbaijani", "bel": "Belarusian",
    "ben": "Bengali", "bul": "Bulgarian", "cat": "Catalan", "ces": "Czech",
    "ckb": "Central Kurdish", "cmn": "Mandarin Chinese", "dan": "Danish", "deu": "German",
    "ell": "Greek", "eng": "English", "est": "Estonian", "eus": "Basque",
    "fin": "Finnish", "fra": "French", "hau": "Hausa", "heb": "Hebrew",
    "hin": "Hindi", "hrv": "Croatian", "hun": "Hungarian", "hye": "Armenian",
    "ind": "Indonesian", "isl": "Icelandic", "ita": "Italian", "jpn": "Japanese",
    "kat": "Georgian", "kaz": "Kazakh", "kor": "Korean", "lit": "Lithuanian",
    "mar": "Marathi", "mkd": "Macedonian", "nld": "Dutch", "nob": "Norwegian Bokmål",
    "pes": "Persian", "pol": "Polish", "por": "Portuguese", "ron": "Romanian",
    "run": "Kirundi", "rus": "Russian", "slk": "Slovak", "spa": "Spanish",
    "srp": "Serbian", "swe": "Swedish", "tgl": "Tagalog", "tur": "Turkish",
    "ukr": "Ukrainian", "vie": "Vietnamese",
}

# Request is one parsed request: its texts, whether it sent one text rather
# than a list, how many labels to answer per text, and whether it came in
# the chat schema (answered with a chat.completion).
Request = namedtuple("Request", "texts single top_k chat")

# JavaScript's \s: WhiteSpace (TAB, VT, FF, SP, NBSP, ZWNBSP, every Zs) and
# LineTerminator (LF, CR, LS, PS). Python's own notion of whitespace differs.
_JS_SPACE = ("\t\n\v\f\r \u00a0\u1680\u2000\u2001\u2002\u2003\u2004\u2005"
             "\u2006\u2007\u2008\u2009\u200a\u2028\u2029\u202f\u205f\u3000\ufeff")
_JS_SPACE_SET = frozenset(_JS_SPACE)
_HYPHENS = re.compile("-+")
_SPACE_RUNS = re.compile("[" + _JS_SPACE + "]{2,}")


def normalize(text):
    """Return text as lande's getNormalized does: letters, marks and spaces,
    lower-cased, trimmed and wrapped in single spaces."""
    text = _HYPHENS.sub(" ", text)
    text = "".join(c for c in text if c in _JS_SPACE_SET or unicodedata.category(c)[0] in "LM")
    text = _SPACE_RUNS.sub(" ", text).lower().strip(_JS_SPACE)
    return " " + text + " "


def utf16_units(text):
    """Return text with every astral character split into its two surrogates.

    JavaScript strings index UTF-16 code units, and lande slices n-grams by
    code unit, so an astral character counts twice in the n-gram totals.
    """
    if all(ord(c) < 0x10000 for c in text):
        return text
    return "".join(_split_astral(c) for c in text)


def _split_astral(c):
    code = ord(c)
    if code < 0x10000:
        return c
    code -= 0x10000
    return chr(0xD800 + (code >> 10)) + chr(0xDC00 + (code & 0x3FF))


def ngram_frequencies(units, n):
    """Return {n-gram: count / total} over all windows of n code units."""
    total = len(units) - n + 1
    if total <= 0:
        return {}
    counts = Counter(units[i:i + n] for i in range(total))
    return {gram: count / total for gram, count in counts.items()}


def softmax_float32(logits):
    """Return toygrad's softmax of float32 logits (rows), rounded as toygrad rounds."""
    shifted = logits.astype(np.float64) - logits.max(axis=1, keepdims=True)
    exps = np.exp(shifted)
    total = exps.sum(axis=1, keepdims=True)
    return (exps.astype(np.float32).astype(np.float64) / total).astype(np.float32)


class LandeNetwork:
    """LandeNetwork holds lande's vocabulary and weights and scores texts."""

    def __init__(self, weights_path, vocab_path):
        with open(vocab_path, encoding="utf-8") as f:
            vocab = json.load(f)
        self.labels = list(vocab["labels"])
        self.columns = self._columns(vocab["ngrams"])
        with np.load(weights_path, allow_pickle=False) as npz:
            self.w1 = npz["dense1_weight"].astype(np.float64).T
            self.b1 = npz["dense1_bias"].astype(np.float64)
            self.w2 = npz["dense2_weight"].astype(np.float64).T
            self.b2 = npz["dense2_bias"].astype(np.float64)
        self.input_size = sum(len(c) for c in self.columns)
        if self.w1.shape[0] != self.input_size or self.w2.shape[1] != len(self.labels):
            raise ValueError("langid: weights do not match the vocabulary")

    @staticmethod
    def _columns(ngrams):
        """Return, per n-gram order, a map from n-gram to its input column."""
        columns, offset = [], 0
        for order in NGRAM_ORDERS:
            grams = [utf16_units(g) for g in ngrams[order]]
            columns.append({g: offset + i for i, g in enumerate(grams)})
            if len(columns[-1]) != len(grams):
                raise ValueError(f"langid: duplicate {order} in the vocabulary")
            offset += len(grams)
        return columns

    def features(self, texts):
        """Return the float32 input matrix (one row per text) lande builds."""
        x = np.zeros((len(texts), self.input_size), dtype=np.float64)
        for row, text in enumerate(texts):
            units = utf16_units(normalize(text))
            for n, columns in enumerate(self.columns, start=1):
                for gram, freq in ngram_frequencies(units, n).items():
                    col = columns.get(gram)
                    if col is not None:
                        x[row, col] = freq
        return x.astype(np.float32)

    def probabilities(self, texts):
        """Return the (len(texts), 50) float32 language probabilities."""
        x = self.features(texts).astype(np.float64)
        hidden = (x @ self.w1 + self.b1).astype(np.float32)
        hidden = np.maximum(hidden, np.float32(0))
        logits = (hidden.astype(np.float64) @ self.w2 + self.b2).astype(np.float32)
        return softmax_float32(logits)

    def top(self, texts, top_k):
        """Return, per text, the top_k [{"label", "score"}] best first (ties in label order)."""
        probs = self.probabilities(texts)
        order = np.argsort(-probs, axis=1, kind="stable")[:, :top_k]
        return [[{"label": self.labels[j], "score": float(p[j])} for j in idx]
                for p, idx in zip(probs, order)]


def parse_request(item):
    """Return the Request one input item holds; ValueError when malformed."""
    content_type = (item.get_property("Content-Type") or "").lower()
    if content_type.startswith("text/"):
        return Request([_body_text(item)], True, DEFAULT_TOP_K, False)
    text = _body_text(item)
    try:
        body = json.loads(text)
    except ValueError:
        raise ValueError('langid: the body is not JSON; send {"inputs": "text"} '
                         "or a text/plain body") from None
    if isinstance(body, dict) and "messages" in body and "inputs" not in body:
        return Request([_chat_text(body)], True, 1, True)
    if not isinstance(body, dict) or "inputs" not in body:
        raise ValueError('langid: the JSON body needs an "inputs" field: '
                         '{"inputs": "text"} or {"inputs": ["text", ...]}, '
                         'or a "messages" list (the chat schema)')
    texts, single = _texts(body["inputs"])
    return Request(texts, single, _top_k(body.get("parameters")), False)


def _chat_text(body):
    """Return the text of the last user message of a chat request."""
    if body.get("stream") is True:
        raise ValueError("langid: stream is not supported: the answer is one short text; "
                         'send "stream": false or leave it out')
    messages = body["messages"]
    if not isinstance(messages, list) or not all(isinstance(m, dict) for m in messages):
        raise ValueError('langid: "messages" must be a list of {"role", "content"} objects')
    for message in reversed(messages):
        if message.get("role") == "user":
            return _message_text(message.get("content"))
    raise ValueError('langid: "messages" holds no user message to classify')


def _message_text(content):
    """Return a message's content as text: a string, or its text parts joined."""
    if isinstance(content, str):
        return content
    if isinstance(content, list) and all(isinstance(p, dict) and p.get("type") == "text"
                                         and isinstance(p.get("text"), str) for p in content):
        return "\n".join(p["text"] for p in content)
    raise ValueError('langid: a user message\'s "content" must be a string or a list of text parts')


def language_name(label):
    """Return how a chat answer names a label: "German (deu)"."""
    return "%s (%s)" % (LANGUAGE_NAMES.get(label, label), label)


def chat_completion(label, model_name, request_id):
    """Return the chat.completion answering a chat request with its top label."""
    return {
        "id": "chatcmpl-" + (request_id or "langid"),
        "object": "chat.completion",
        "created": int(time.time()),
        "model": model_name,
        "choices": [{"index": 0, "message": {"role": "assistant", "content": language_name(label)},
                     "finish_reason": "stop"}],
    }


def _body_text(item):
    data = item.get_as_bytes()
    try:
        return bytes(data or b"").decode("utf-8")
    except UnicodeDecodeError:
        raise ValueError("langid: the body is not valid UTF-8") from None


def _texts(inputs):
    if isinstance(inputs, str):
        return [inputs], True
    if isinstance(inputs, list) and all(isinstance(t, str) for t in inputs):
        return inputs, False
    raise ValueError('langid: "inputs" must be a string or a list of strings')


def _top_k(parameters):
    if parameters is None:
        return DEFAULT_TOP_K
    if not isinstance(parameters, dict):
        raise ValueError('langid: "parameters" must be a JSON object')
    top_k = parameters.get("top_k", DEFAULT_TOP_K)
    if isinstance(top_k, bool) or not isinstance(top_k, int) or top_k < 1:
        raise ValueError('langid: "parameters.top_k" must be a positive integer')
    return top_k


class LanguageIdentifier:
    """LanguageIdentifier is the DJL service: initialize once, then inference per call."""

    def __init__(self):
        self.network = None
        self.initialized = False
        self.model_name = "langid"

    def initialize(self, properties):
        """Load lande's weights from the model folder."""
        model_dir = properties.get("model_dir") or os.path.dirname(os.path.abspath(__file__))
        self.model_name = os.path.basename(os.path.normpath(model_dir))
        self.network = LandeNetwork(os.path.join(model_dir, "lande-t50.npz"),
                                    os.path.join(model_dir, "lande-t50.json"))
        self.initialized = True
        logging.info("langid: loaded lande (%d languages)", len(self.network.labels))

    def predict(self, requests):
        """Return one answer per parsed Request, scoring all their texts in one pass."""
        texts = [t for r in requests for t in r.texts]
        ranked = self.network.top(texts, max((r.top_k for r in requests), default=1))
        answers, start = [], 0
        for r in requests:
            mine = [labels[:r.top_k] for labels in ranked[start:start + len(r.texts)]]
            start += len(r.texts)
            answers.append(mine[0] if r.single else mine)
        return answers

    def inference(self, inputs):
        """Answer a request or a dynamic batch; a malformed item fails the whole call."""
        batch = inputs.get_batches()
        requests = [parse_request(item) for item in batch]
        answers = self.predict(requests)
        for i, (request, item) in enumerate(zip(requests, batch)):
            if request.chat:
                answers[i] = chat_completion(answers[i][0]["label"], self.model_name,
                                             item.get_property("request_id"))
        outputs = Output()
        outputs.add_property("Content-Type", "application/json")
        for i, answer in enumerate(answers):
            if inputs.is_batch():
                outputs.add_as_json(answer, key="data", batch_index=i)
            else:
                outputs.add_as_json(answer)
        return outputs


_service = LanguageIdentifier()


def handle(inputs: Input):
    """DJL entry point: initialize on the first call, None for the warm-up request."""
    if not _service.initialized:
        _service.initialize(inputs.get_properties())
    if inputs.is_empty():
        return None
    return _service.inference(inputs)
