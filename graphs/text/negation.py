"""NegEx-style negation scope for entity mentions, hand-written.

Why hand-written: negspacy/medspacy implement ConText on top of spaCy, which EviGraph does not ship; the
part the knowledge-base builder and the question-side ``ner_link`` tool need is small — "is this mention
negated by a nearby trigger in the same sentence?" — and NegEx (Chapman et al., 2001) answers it with word
lists and a token window.

Rules (all on lower-cased word tokens; a token is a run of word characters, with an optional ``'s``/
``n't`` style tail so ``doesn't`` is one token):

* a *pre-negation* trigger ("no", "denies", "negative for", "no evidence of", ...) negates a mention when at
  most ``window`` tokens separate the end of the trigger from the start of the mention;
* a *post-negation* trigger ("... was ruled out", "... is absent", "... unlikely") negates a mention when it
  starts at most ``window`` tokens after the mention's end;
* the scope never crosses a sentence boundary (``.``/``!``/``?`` before whitespace, ``;`` or a newline)
  nor a *termination* word ("but", "however", "although", "except", "which", ...), so in "denies chest
  pain but reports fever" only chest pain is negated;
* *pseudo* triggers ("not only", "no cure", "whether or not", "gram negative", ...) look like negations but
  are not; a trigger that starts inside one is ignored. The pseudo list was tuned on MedQuAD answers, where
  "There is no cure for X" and "It is not known what causes X" are frequent and do not negate X.
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Iterable, Sequence

DEFAULT_WINDOW = 5
"""Maximum number of tokens between a trigger and the mention it negates (NegEx uses five)."""

_TOKEN = re.compile(r"""(?P<scope_break>[.!?]+["')\]]*(?=\s|$)|[;\n]|\s[-–—•]\s)|\w+(?:['’]\w+)?""")
"""Word tokens, and scope breaks: sentence ends, ';', newlines and ' - ' list separators (MedQuAD lists
phenotypes as "A - B - C" on one line, where a negation must not run on to the next item)."""
_STATEMENT_TOKEN = re.compile(
    r"""(?P<scope_break>[.!?]+["')\]]*(?=\s|$)|[;\n]|\s[-–—•]\s|,\s+and\b)|\w+(?:['’]\w+)?"""
)
"""For a statement, also ", and": a new clause. "Rebleeding from a cavernous angioma is common, it is not
predictable, and individuals frequently have multiple CCMs" states the last clause, and the reply check read
it as denied (the claim "individuals frequently have multiple CCMs" was called contradicted by its own
page)."""
_BREAK = "\n"

Phrase = tuple[str, ...]


def _phrases(lines: str) -> tuple[Phrase, ...]:
    """Comma-separated phrases -> token tuples (the lists below stay readable that way)."""
    return tuple(tuple(p.split()) for p in lines.replace("\n", " ").split(",") if p.strip())


PRE_TRIGGERS = _phrases(
    """no, not, without, denies, denied, deny, denying, negative for, absence of, free of, ruled out,
    rules out, rule out, no evidence of, no signs of, no sign of, no symptoms of, no history of, never,
    neither, nor, cannot, doesn't, don't, didn't, isn't, wasn't, aren't, weren't, hasn't, haven't,
    no longer, unremarkable for, fails to reveal, failed to reveal, not demonstrate, no new, no further"""
)
POST_TRIGGERS = _phrases(
    """ruled out, is absent, are absent, was absent, were absent, been absent, unlikely, was excluded,
    were excluded, has been excluded, have been excluded, is excluded, was negative, were negative,
    is negative, tested negative, not seen, not present, not detected, not found, is not present,
    was not present, resolved"""
)
PSEUDO_TRIGGERS = _phrases(
    """not only, not just, not necessarily, not all, not every, not always, not certain, not clear,
    not known, not yet known, not well known, not fully known, not understood, not well understood,
    not fully understood, not completely understood, not clearly, not sure, not rule out, not ruled out,
    not be ruled out, not excluded, not exclude, no increase, no change, no significant change,
    no one, no cure, no known cure, no treatment, no specific treatment, no effective treatment,
    no standard treatment, no way, no known way, no sure way, no proven way, no single, no specific,
    no matter, whether or not, or not, if not, with or without, or without, gram negative, not cause,
    not to be confused, cannot be ruled out, can't be ruled out, nor is it known, never been"""
)
STATEMENT_PSEUDO_TRIGGERS = _phrases(
    """not only, not just, not necessarily, whether or not, or not, if not, with or without, or without,
    gram negative, not to be confused, cannot be ruled out, can't be ruled out, not rule out, not ruled out,
    not be ruled out, not excluded, not exclude, no matter, no one"""
)
"""The pseudo triggers that never deny a *statement*. For a mention, "no cure for X", "does not cause X"
and "no increase in X" must not negate X (the list above); for a claim they are its denial — "NSAIDs do not
cause ulcers", "there is no cure for Crohn's disease" — so a claim's polarity is read with this list."""
TERMINATION = _phrases(
    """but, however, although, though, nevertheless, yet, still, except, which, who, whereas,
    because, secondary to, aside from, apart from, other than, cause of, causes of, cause for,
    source of, reason for, reasons for, etiology of, origin of"""
)


def _by_first_token(phrases: Iterable[Phrase]) -> dict[str, list[Phrase]]:
    """Index phrases by first token, longest first, so the longest phrase at a position wins."""
    index: dict[str, list[Phrase]] = {}
    for phrase in sorted(set(phrases), key=lambda p: (-len(p), p)):
        index.setdefault(phrase[0], []).append(phrase)
    return index


_PRE = _by_first_token(PRE_TRIGGERS)
_POST = _by_first_token(POST_TRIGGERS)
_PSEUDO = _by_first_token(PSEUDO_TRIGGERS)
_STATEMENT_PSEUDO = _by_first_token(STATEMENT_PSEUDO_TRIGGERS)
_TERMINATION = _by_first_token(TERMINATION)


def _occurrences(words: Sequence[str], index: dict[str, list[Phrase]]) -> list[tuple[int, int]]:
    """(start, end) token spans of the phrases of ``index`` in ``words``; the longest at each start."""
    found: list[tuple[int, int]] = []
    for i, word in enumerate(words):
        for phrase in index.get(word, ()):
            if tuple(words[i : i + len(phrase)]) == phrase:
                found.append((i, i + len(phrase)))
                break
    return found


class _Scopes:
    """Triggers and scope barriers of one text, found once and shared by all its mentions."""

    def __init__(
        self, text: str, pseudo: dict[str, list[Phrase]] = _PSEUDO, tokens: re.Pattern[str] = _TOKEN
    ) -> None:
        self.starts: list[int] = []
        words: list[str] = []
        for match in tokens.finditer(text):
            self.starts.append(match.start())
            words.append(_BREAK if match.lastgroup else match.group().lower().replace("’", "'"))
        masked = {i for start, end in _occurrences(words, pseudo) for i in range(start, end)}
        self.pre_ends = sorted(end for start, end in _occurrences(words, _PRE) if start not in masked)
        self.post_starts = sorted(start for start, _ in _occurrences(words, _POST) if start not in masked)
        barrier = [word == _BREAK for word in words]
        for start, end in _occurrences(words, _TERMINATION):
            barrier[start:end] = [True] * (end - start)
        self.barriers_before = [0]  # barriers_before[i] = number of barrier tokens among tokens[:i]
        for is_barrier in barrier:
            self.barriers_before.append(self.barriers_before[-1] + is_barrier)

    def _clear(self, first: int, stop: int) -> bool:
        return self.barriers_before[stop] == self.barriers_before[first]

    def negated(self, start: int, end: int, window: int) -> bool:
        first = bisect.bisect_left(self.starts, start)  # first token of the mention
        after = bisect.bisect_left(self.starts, end)  # first token after the mention
        low = bisect.bisect_left(self.pre_ends, first - window)
        for trigger_end in self.pre_ends[low : bisect.bisect_right(self.pre_ends, first)]:
            if self._clear(trigger_end, first):
                return True
        low = bisect.bisect_left(self.post_starts, after)
        for trigger_start in self.post_starts[low : bisect.bisect_right(self.post_starts, after + window)]:
            if self._clear(after, trigger_start):
                return True
        return False


def negated_spans(
    text: str, spans: Sequence[tuple[int, int]], *, window: int = DEFAULT_WINDOW, statement: bool = False
) -> list[bool]:
    """For each ``(start, end)`` character span of ``text``, whether a negation trigger scopes over it;
    ``statement`` reads the polarity of what the text states (:data:`STATEMENT_PSEUDO_TRIGGERS`)."""
    if not spans:
        return []
    scopes = _Scopes(text, _STATEMENT_PSEUDO, _STATEMENT_TOKEN) if statement else _Scopes(text)
    return [scopes.negated(start, end, window) for start, end in spans]
