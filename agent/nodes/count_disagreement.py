"""Key sentences that disagree on a count: "There are two types of hemochromatosis." beside "The three types
of hemochromatosis are …" — said, not left for the reader to notice.

Why: a newcomer asking "What is hemochromatosis?" was shown both sentences, each cited to its own source
(MedQuAD's MedlinePlus and NIDDK pages), with nothing saying they disagree; a clinician who read only one
of them would carry its count away as the evidence's. The product quotes sources and does not reconcile
them, so it names the disagreement and who says what.

How: a count is "<number> [main|major|…] types|forms|kinds|… of <thing>" in a shown key sentence, where the
thing is the question's subject (a count of "standard treatment" or "the condition" depends on its page).
When two sentences of different passages give different numbers for it (types, kinds and forms counted
alike; compared without case or a trailing plural), one line names each number with its citations. A hand
rule, not a model: it fires on a fixed wording and says only what the quoted sentences say.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from agent.state import KeySentenceRec
from graphs.text.paraphrases import NUMBER_WORDS

COUNT = re.compile(
    r"\b(?P<number>" + "|".join(NUMBER_WORDS) + r"|\d{1,2})\s+"
    r"(?:(?:main|major|different|distinct|known|common|basic|primary|general|separate)\s+)?"
    r"(?P<kind>types|forms|kinds|stages|classes|categories|subtypes|grades)\s+of\s+"
    r"(?P<thing>[A-Za-z][A-Za-z'-]*(?:\s+[A-Za-z][A-Za-z'-]*){0,3}?)"
    r"(?=\s*(?:[.,;:(]|\s(?:are|is|include|includes|exist|have|has|can|that|which|in|:)\b|$))",
    re.IGNORECASE,
)
"""A stated count of kinds of something; the thing ends before a verb or punctuation ("The three types of
hemochromatosis are …" → three, types, hemochromatosis)."""


IN_WORDS = {int(digits): word for word, digits in NUMBER_WORDS.items()}
"""A count as the sentences would write it ("two [1]; three [2]")."""


def _number(word: str) -> int:
    return int(NUMBER_WORDS.get(word.lower(), word))


SAME_KIND = {"form": "type", "kind": "type", "subtype": "type", "category": "type", "categorie": "type"}
"""Words that count the same thing: "three main kinds of diabetes" and "two main types of diabetes" disagree.
Stages, grades and classes count something else."""


def _key(kind: str, thing: str) -> tuple[str, str]:
    word = kind.lower().rstrip("s")
    return SAME_KIND.get(word, word), _words(thing).strip()


def _words(text: str) -> str:
    """Lower-cased words without a trailing plural "s", space-padded for whole-word containment."""
    return " " + " ".join(w.rstrip("s") for w in text.lower().split()) + " "


def _is_subject(thing: str, subjects: Sequence[str]) -> bool:
    """Whether ``thing`` names the question's subject: one is a whole-word part of the other ("diabetes" of
    "diabetes mellitus"). Counts of anything else depend on their page ("Four types of standard treatment
    are used" on one cancer's page, "Five types …" on another's; "two forms of the condition")."""
    said = _words(thing)
    return any(said in _words(s) or _words(s) in said for s in subjects if s.strip())


def count_disagreements(sentences: Sequence[KeySentenceRec], subjects: Sequence[str]) -> list[str]:
    """One Markdown line for each count of kinds of the question's subject (``subjects``: its KG names) that
    shown sentences of different passages give differently, naming each count with its citations; empty
    when they agree or state none."""
    counts: dict[tuple[str, str], dict[int, list[str]]] = {}
    names: dict[tuple[str, str], tuple[str, str]] = {}
    for s in sentences:
        for match in COUNT.finditer(s.get("text", "")):
            key = _key(match["kind"], match["thing"])
            if not _is_subject(key[1], subjects):
                continue
            names.setdefault(key, (match["kind"].lower(), match["thing"]))
            citing = counts.setdefault(key, {}).setdefault(_number(match["number"]), [])
            if s["evidence_id"] not in citing:
                citing.append(s["evidence_id"])
    lines = []
    for key, by_number in counts.items():
        passages = {e for ids in by_number.values() for e in ids}
        if len(by_number) < 2 or len(passages) < 2:
            continue
        kind, thing = names[key]
        said = "; ".join(
            f"{IN_WORDS.get(n, n)} " + "".join(f"[{i}]" for i in ids) for n, ids in sorted(by_number.items())
        )
        lines.append(f"- Note — the sources differ on how many {kind} of {thing} there are: {said}.")
    return lines
