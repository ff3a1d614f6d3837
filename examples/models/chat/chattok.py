"""The chat template and the sentencepiece tokenizer of the toy chat model.

A conversation renders without newlines or spaces around the tags:

    <|system|>{system}<|end|><|user|>{question}<|end|><|assistant|>{answer}<|end|>

The tags are sentencepiece user-defined symbols, so each is one token. The
tokenizer is trained with ``add_dummy_prefix`` off, identity normalisation and
byte fallback, so ``decode(encode(s)) == s`` for any string, and encoding the
whole rendered string gives the same ids as encoding each piece between tags.
"""

from __future__ import annotations

import os

import sentencepiece as spm

SYSTEM, USER, ASSISTANT, END = "<|system|>", "<|user|>", "<|assistant|>", "<|end|>"
SPECIAL_TOKENS = [SYSTEM, USER, ASSISTANT, END]
ROLES = {"system": SYSTEM, "user": USER, "assistant": ASSISTANT}
TOKENIZER_FILE = "tokenizer.model"

# CHAT_TEMPLATE is the Jinja form of render_chat, for tokenizer_config.json.
CHAT_TEMPLATE = (
    "{% for message in messages %}"
    "{% if message['role'] not in ['system', 'user', 'assistant'] %}"
    "{{ raise_exception('unknown role ' + message['role']) }}{% endif %}"
    "{{ '<|' + message['role'] + '|>' + message['content'] + '<|end|>' }}"
    "{% endfor %}"
    "{% if add_generation_prompt %}{{ '<|assistant|>' }}{% endif %}"
)


def message_text(content) -> str:
    """message_text returns a message's text: a string, or OpenAI text parts."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = [p.get("text", "") for p in content if isinstance(p, dict)]
        if all(p.get("type", "text") == "text" for p in content if isinstance(p, dict)):
            return "".join(parts)
    raise ValueError(f"chattok: unsupported message content {content!r:.60}")


def render_chat(messages: list[dict], add_generation_prompt: bool = True) -> str:
    """render_chat renders messages in order and ends with the assistant tag."""
    out = []
    for m in messages:
        role = m.get("role")
        if role not in ROLES:
            raise ValueError(f"chattok: unknown role {role!r}")
        out.append(ROLES[role] + message_text(m.get("content", "")) + END)
    if add_generation_prompt:
        out.append(ASSISTANT)
    return "".join(out)


class ChatTokenizer:
    """ChatTokenizer wraps tokenizer.model and knows the special token ids."""

    def __init__(self, model_dir: str):
        path = os.path.join(model_dir, TOKENIZER_FILE)
        # sentencepiece takes its keywords through **kwargs, which pylint cannot see.
        self.sp = spm.SentencePieceProcessor(model_file=path)  # pylint: disable=unexpected-keyword-arg
        self.special = {t: self._id(t) for t in SPECIAL_TOKENS}
        self.end_id = self.special[END]
        self.eos_ids = {self.end_id, self.sp.eos_id()}

    def _id(self, piece: str) -> int:
        i = self.sp.piece_to_id(piece)
        if self.sp.id_to_piece(i) != piece:
            raise ValueError(f"chattok: {piece} is not in the vocabulary")
        return i

    @property
    def vocab_size(self) -> int:
        """vocab_size is the number of pieces in the model."""
        return self.sp.get_piece_size()

    def encode(self, text: str) -> list[int]:
        """encode turns text (tags included) into token ids."""
        return self.sp.encode(text)

    def decode(self, ids: list[int]) -> str:
        """decode turns ids back into text; tags come out literally."""
        return self.sp.decode(list(ids))
