"""Parse the Jargon File (Debian's jargon-text) into (term, definition) entries.

The lexicon part of jargon.txt has one entry per header line such as

       :cruft: /kruhft/

followed by paragraphs: an optional ``[etymology]``, then either one text or
numbered senses (``1. n. ...``). Cross references are written ``{term}``.
The appendices start at the line "Part III. Appendices".
"""

from __future__ import annotations

import gzip
import re
from dataclasses import dataclass

JARGON_PATH = "/usr/share/doc/jargon-text/jargon.txt.gz"

_HEADER = re.compile(r"^   :(?P<term>[^:]+(?::[^:\s][^:]*)*):(?P<rest>.*)$")
_POS = re.compile(r"^(?:\[[^\]]*\]\s*)?(n|v|vt|vi|adj|adv|interj|pref|suff|excl|prep|conj|pron|num)\.(?:\s|,|$)")
_SENSE = re.compile(r"^\d+\.\s+")
_POS_NAMES = {
    "n": "noun", "v": "verb", "vt": "verb", "vi": "verb", "adj": "adjective",
    "adv": "adverb", "interj": "interjection", "excl": "exclamation",
}
_ABBREV = ("e.g.", "i.e.", "esp.", "etc.", "vs.", "cf.", "Mr.", "Dr.", "St.", "U.S.", "approx.", "orig.", "incl.")
_END = "Part III. Appendices"


@dataclass
class Entry:
    """Entry is one lexicon term with its part of speech and definition."""

    term: str
    pos: str
    definition: str


def read_lines(path: str = JARGON_PATH) -> list[str]:
    """read_lines returns the lines of the (gzipped) Jargon File."""
    with gzip.open(path, "rt", encoding="utf-8") as f:
        return f.read().splitlines()


def split_entries(lines: list[str]) -> list[tuple[str, str, list[str]]]:
    """split_entries groups the lexicon into (term, header rest, paragraphs)."""
    out, cur, para = [], None, []
    for line in lines:
        if line.strip() == _END:
            break
        m = _HEADER.match(line)
        if m:
            cur = (m["term"].strip(), m["rest"].strip(), [])
            out.append(cur)
            para = []
        elif cur is not None:
            para = _add_line(cur[2], para, line)
    return out


def _add_line(paras: list[str], para: list[str], line: str) -> list[str]:
    if not line.strip():
        return []
    if not para:
        paras.append("")
    para.append(line.strip())
    paras[-1] = " ".join(para)
    return para


def clean(text: str) -> str:
    """clean removes {braces} and collapses whitespace."""
    text = re.sub(r"\{([^}]*)\}", r"\1", text)
    return re.sub(r"\s+", " ", text).strip()


def strip_brackets(text: str) -> str:
    """strip_brackets drops a leading [etymology] or (also ...) aside."""
    for opening, closing in (("[", "]"), ("(", ")")):
        if text.startswith(opening):
            end = _matching(text, opening, closing)
            if end > 0:
                text = text[end + 1:].lstrip()
    return text


def _matching(text: str, opening: str, closing: str) -> int:
    depth = 0
    for i, ch in enumerate(text):
        depth += (ch == opening) - (ch == closing)
        if depth == 0:
            return i
    return -1


def part_of_speech(header_rest: str, body: str) -> tuple[str, str]:
    """part_of_speech finds 'n.'/'vt.'/... in the header or body start."""
    tail = header_rest.split("/")[-1].strip(" ,")
    m = _POS.match(tail)
    if m:
        return _POS_NAMES.get(m[1], ""), body
    m = _POS.match(body)
    if m:
        return _POS_NAMES.get(m[1], ""), body[m.end():].lstrip(" ,")
    return "", body


def sentences(text: str, limit: int) -> str:
    """sentences returns the first sentence, plus the second if it is short."""
    ends = [m.end() for m in re.finditer(r"[.!?][”’\"')]*(?=\s+[A-Z“‘\"(]|$)", text)]
    ends = [e for e in ends if not text[:e].endswith(_ABBREV)]
    if not ends:
        return text[:limit].rsplit(" ", 1)[0] if len(text) > limit else text
    first = text[: ends[0]]
    if len(ends) > 1 and len(first) < limit // 2 and ends[1] <= limit:
        return text[: ends[1]]
    return first


def definition(paras: list[str], header_rest: str, limit: int = 240) -> tuple[str, str]:
    """definition returns (part of speech, first one or two sentences).

    It reads sense 1 when the entry has numbered senses, else the first
    paragraph that is more than an etymology, and strips leading asides.
    """
    texts = [clean(p) for p in paras]
    senses = [t for t in texts if _SENSE.match(t)]
    body = senses[0] if senses else next((t for t in texts if strip_brackets(t)), "")
    pos, body = part_of_speech(header_rest, _strip_front(body))
    while True:
        old = body
        body = _strip_front(body)
        m = _POS.match(body)
        if m:
            pos, body = pos or _POS_NAMES.get(m[1], ""), body[m.end():].lstrip(" ,")
        if body == old:
            return pos, sentences(body, limit).strip()


def _strip_front(body: str) -> str:
    return strip_brackets(_SENSE.sub("", body, count=1))


def parse(lines: list[str]) -> list[Entry]:
    """parse returns every lexicon entry that has a usable definition."""
    out = []
    for term, rest, paras in split_entries(lines):
        if not paras:
            continue
        pos, text = definition(paras, rest)
        if clean(term) and len(text) >= 12 and (text[0].isalnum() or text[0] in "“‘\"("):
            out.append(Entry(term=clean(term), pos=pos, definition=text))
    return out
