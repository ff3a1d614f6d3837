"""Incremental detokenization with stop strings.

Sentencepiece pieces carry their leading space (``▁word``) and byte-fallback
pieces may split one character over several tokens, so the text of a token
is only known in context. TextStream decodes the whole generated prefix each
time and hands out the new part of it. It holds back:

* a trailing U+FFFD, which is an unfinished multi-byte character;
* a tail that could be the start of a stop string, so that no part of a stop
  string is ever streamed.

When a stop string appears the text is cut just before it. flush() hands
out whatever was held back when generation ends for another reason.
"""

from __future__ import annotations

from typing import Callable

REPLACEMENT = "\ufffd"


class TextStream:
    """TextStream turns a growing list of token ids into text deltas."""

    def __init__(self, decode: Callable[[list[int]], str], stop: list[str] | None = None):
        self._decode = decode
        self.stop = [s for s in (stop or []) if s]
        self.ids: list[int] = []
        self.text = ""  # the text handed out so far
        self.matched: str | None = None  # the stop string that ended the text, once one has

    def push(self, token_id: int) -> tuple[str, bool]:
        """push adds one token; it returns the new text that is safe to hand
        out and whether a stop string has ended the text."""
        self.ids.append(token_id)
        full = self._decode(self.ids)
        cut = self._find_stop(full)
        if cut >= 0:
            return self._emit(full[:cut]), True
        return self._emit(full[: self._safe_end(full)]), False

    def flush(self) -> str:
        """flush hands out everything not yet handed out."""
        return self._emit(self._decode(self.ids))

    def _emit(self, upto: str) -> str:
        if len(upto) <= len(self.text):
            return ""
        delta = upto[len(self.text):]
        self.text += delta
        return delta

    def _find_stop(self, full: str) -> int:
        found = [(i, s) for i, s in ((full.find(s), s) for s in self.stop) if i >= 0]
        if not found:
            return -1
        at, self.matched = min(found)
        return at

    def _safe_end(self, full: str) -> int:
        end = len(full)
        while end > len(self.text) and full[end - 1] == REPLACEMENT:
            end -= 1
        return end - self._held_tail(full[:end])

    def _held_tail(self, text: str) -> int:
        """_held_tail is the length of the longest end of text that is a
        proper start of some stop string."""
        best = 0
        for s in self.stop:
            for n in range(min(len(s) - 1, len(text)), best, -1):
                if text.endswith(s[:n]):
                    best = n
                    break
        return best
