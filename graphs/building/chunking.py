"""Split documents into paragraph-sized evidence units with exact character offsets.

Window choice: about 120 words, never more than 180, overlap of one sentence when a long paragraph must be
cut. Why: the embedder (all-MiniLM-L6-v2) reads at most 256 word pieces (≈ 180 English words of medical
text) and was trained on ~128-token inputs, so longer units are silently truncated and their tails become
unretrievable; a clinician also wants a citation that points at a paragraph, not a 2,000-character page.
The EbmKG paper's 1,024-token units suit its LLM reader, not a MiniLM encoder. Short neighbouring
paragraphs (list items, headings) are merged up to the target so that no unit is a bare heading. One
sentence of overlap keeps a claim that straddles a cut readable in at least one unit.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

TARGET_WORDS = 120
MAX_WORDS = 180
MIN_WORDS = 25

_PARAGRAPH = re.compile(r"\n\s*\n|\n(?=\s*[-•*]\s)|\s{3,}(?=[-•*]\s)|\n")
_SENTENCE = re.compile(r"(?<=[.!?])\s+(?=[A-Z0-9(\"'])")
_WORD = re.compile(r"\S+")


@dataclass(frozen=True)
class Span:
    start: int
    end: int


def _pieces(text: str, pattern: re.Pattern[str], lo: int, hi: int) -> list[Span]:
    """Non-empty, whitespace-trimmed spans of ``text[lo:hi]`` separated by ``pattern``."""
    out: list[Span] = []
    pos = lo
    for m in pattern.finditer(text, lo, hi):
        out.append(Span(pos, m.start()))
        pos = m.end()
    out.append(Span(pos, hi))
    trimmed = []
    for s in out:
        a, b = s.start, s.end
        while a < b and text[a].isspace():
            a += 1
        while b > a and text[b - 1].isspace():
            b -= 1
        if b > a:
            trimmed.append(Span(a, b))
    return trimmed


def _words(text: str, span: Span) -> int:
    return len(_WORD.findall(text, span.start, span.end))


def _split_long(text: str, para: Span) -> list[Span]:
    """Cut an over-long paragraph at sentence boundaries, one sentence of overlap between windows."""
    sentences = _pieces(text, _SENTENCE, para.start, para.end)
    out: list[Span] = []
    i = 0
    while i < len(sentences):
        j, words = i, 0
        while j < len(sentences) and (words == 0 or words + _words(text, sentences[j]) <= TARGET_WORDS):
            words += _words(text, sentences[j])
            j += 1
        window = Span(sentences[i].start, sentences[j - 1].end)
        if _words(text, window) > MAX_WORDS:  # one enormous "sentence": cut by words
            out.extend(_split_words(text, window))
        else:
            out.append(window)
        if j >= len(sentences):
            break
        i = j - 1 if j - 1 > i else j
    return out


def _split_words(text: str, span: Span) -> list[Span]:
    words = list(_WORD.finditer(text, span.start, span.end))
    step = TARGET_WORDS - 20
    return [
        Span(words[k].start(), words[min(k + TARGET_WORDS, len(words)) - 1].end())
        for k in range(0, len(words), step)
        if k == 0 or k + 20 < len(words)
    ]


def split_evidence(text: str) -> list[Span]:
    """Evidence spans of ``text`` in order; ``text[s.start:s.end]`` is each unit's exact text."""
    units: list[Span] = []
    current: Span | None = None
    for para in _pieces(text, _PARAGRAPH, 0, len(text)):
        n = _words(text, para)
        if n > MAX_WORDS:
            if current is not None:
                units.append(current)
                current = None
            units.extend(_split_long(text, para))
            continue
        if current is None:
            current = para
        elif _words(text, current) + n <= TARGET_WORDS or _words(text, current) < MIN_WORDS:
            merged = Span(current.start, para.end)
            if _words(text, merged) <= MAX_WORDS:
                current = merged
            else:
                units.append(current)
                current = para
        else:
            units.append(current)
            current = para
    if current is not None:
        if (
            units
            and _words(text, current) < MIN_WORDS
            and _words(text, Span(units[-1].start, current.end)) <= MAX_WORDS
        ):
            units[-1] = Span(units[-1].start, current.end)
        else:
            units.append(current)
    return units
