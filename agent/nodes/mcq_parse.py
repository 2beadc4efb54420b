"""Reading an exam question: the stem and its lettered options, on one line or many.

Why a scanner instead of one line-anchored regex: users paste options on their own lines ("A) …"), inline
("Options: A) x B) y C) z") or in mixed styles ("(a) …", "a) …", "A. …", "A: …"). Markers are read in
letter order (A, B, C, …) and in the style of the first one, so a "B." inside option A's text ("Vitamin B.
deficiency") is not taken for option B when the options are written "A) …, B) …". A lower-case marker
with "." or ":" counts only at the start of a line ("a. …"), because inline "a." is ordinary prose.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

MAX_OPTIONS = 8  # A–H: exam sets use 4–5; more letters in a row are almost always something else
_MARKER = re.compile(
    r"(?P<lead>^|(?<=[\s:;,]))(?P<open>\()?(?P<letter>[A-Ha-h])(?P<close>\)|\.|:)(?=\s|$)", re.MULTILINE
)
_STEM_LABEL = re.compile(r"(?:\b(?:answer\s+)?(?:options|choices)\s*[:\-]?|[:\-])\s*$", re.IGNORECASE)


@dataclass(frozen=True)
class _Marker:
    start: int
    end: int
    letter: str
    style: tuple[bool, str, bool]  # (opening paren, closer, upper case)
    line_start: bool


@dataclass(frozen=True)
class McqParse:
    """The stem (the question before the first option) and the options keyed by upper-case letter."""

    stem: str
    options: dict[str, str] = field(default_factory=dict)

    @property
    def has_stem(self) -> bool:
        """Whether there is a question to answer: at least a few characters with a letter in them."""
        return len(self.stem) >= 3 and any(ch.isalpha() for ch in self.stem)


def _markers(text: str) -> list[_Marker]:
    found: list[_Marker] = []
    for m in _MARKER.finditer(text):
        letter = m.group("letter")
        line_start = text[: m.start()].rstrip(" \t").endswith("\n") or not text[: m.start()].strip()
        opened = m.group("open") is not None
        if letter.islower() and not opened and m.group("close") != ")" and not line_start:
            continue  # inline "a." / "a:" is prose, not an option marker
        found.append(
            _Marker(
                m.start(), m.end(), letter.upper(), (opened, m.group("close"), letter.isupper()), line_start
            )
        )
    return found


def _run_from(markers: list[_Marker], first: int) -> list[_Marker]:
    """The longest A, B, C, … sequence starting at ``markers[first]`` in that marker's style."""
    run = [markers[first]]
    style = markers[first].style
    for mk in markers[first + 1 :]:
        if len(run) >= MAX_OPTIONS:
            break
        if mk.style == style and mk.letter == chr(ord(run[-1].letter) + 1):
            run.append(mk)
    return run


def parse_mcq(question: str) -> McqParse:
    """Split ``question`` into stem and options; no options (fewer than two in sequence) gives ``{}``.

    When several A-sequences exist (a vignette that says "type A." and then the real options), the longest
    wins, and among equals the last, because options follow the stem.
    """
    markers = _markers(question)
    best: list[_Marker] = []
    for i, mk in enumerate(markers):
        if mk.letter == "A":
            run = _run_from(markers, i)
            if len(run) >= max(2, len(best)):
                best = run
    if len(best) < 2:
        return McqParse(stem=question.strip())
    tail_start = len(question)
    if all(mk.line_start for mk in best):  # one option a line: a line after the last one is not part of it
        newline = question.find("\n", best[-1].end)
        tail_start = newline if newline >= 0 else tail_start
    options: dict[str, str] = {}
    for mk, nxt in zip(best, [*best[1:], None], strict=True):
        end = nxt.start if nxt is not None else tail_start
        options[mk.letter] = " ".join(question[mk.end : end].split()).rstrip(" ;,")
    if any(not text for text in options.values()):
        return McqParse(stem=question.strip())  # "A) B) C)": markers without option text are not options
    stem = _STEM_LABEL.sub("", question[: best[0].start].rstrip()).strip()
    stem = " ".join(f"{stem} {question[tail_start:]}".split())
    return McqParse(stem=stem, options=options)
