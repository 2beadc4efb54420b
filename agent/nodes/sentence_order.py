"""What follows the lead of the key sentences: the general case before its exceptions, the asked aspect.

Why: the reader scores each sentence for answering the question, not for being the main answer. "How is
celiac disease treated?" led with "In some cases, people continue to have difficulty absorbing nutrients
despite following a strict gluten-free diet." above "For most people, following a gluten-free diet will stop
symptoms, …"; "What causes gout?" put "In some cases, exposure to lead in the environment can cause gout."
high. A clinician reads the first line as the answer, and an exception read first is read as the rule.

Rule: when the first picked sentence opens on an exception ("In some cases", "Sometimes", "Rarely", "Some
people …") and a later picked sentence does not, and the reader scores that later sentence at least as high
(its logit, without the passage-rank prior that put the exception first), that sentence leads and the rest
keep their order. The reader's own preference stands: "Can you die from shingles?" keeps "Very rarely,
shingles can also lead to pneumonia, brain inflammation (encephalitis), or death." first (logit 1.59 against
0.81) — the exception is what was asked. The selection is unchanged (so are the words and citations shown);
only which line comes first.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Protocol, TypeVar

from graphs.model.labels import mentions_label

EXCEPTION_OPENER = re.compile(
    r"^(?:(?:In|For)\s+(?:some|rare|a\s+few|certain|other|very\s+rare)\s+(?:cases|people|patients|instances|"
    r"individuals|children|adults)\b|(?:Some|A\s+few|Few)\s+(?:people|patients|children|adults|individuals)\b|"
    r"(?:Sometimes(?!\s+(?:called|known|referred))|Rarely|Occasionally|Less\s+(?:commonly|often)|Very\s+rarely|Uncommonly|In\s+rare\s+\w+)\b)",
    re.IGNORECASE,
)
"""A sentence that states an exception or a minority case, not the general answer."""


class ReadLike(Protocol):
    """A read sentence: its text, the reader's logit for it and its passage's label (agent/nodes/reading.py
    ``ReadSentence``)."""

    @property
    def text(self) -> str: ...

    @property
    def logit(self) -> float: ...

    @property
    def label(self) -> str: ...


T = TypeVar("T", bound=ReadLike)


def opens_on_exception(text: str) -> bool:
    """Whether ``text`` opens on an exception or a minority case ("In some cases, …", "Rarely, …")."""
    return bool(EXCEPTION_OPENER.match(text.strip()))


def first_unflagged(picked: list[T], flagged: Callable[[str], bool]) -> int | None:
    """Index of the first sentence of ``picked`` whose text is not ``flagged``, when the lead is flagged;
    ``None`` when the lead is not flagged or every sentence is."""
    if not picked or not flagged(picked[0].text):
        return None
    return next((i for i, s in enumerate(picked) if not flagged(s.text)), None)


def lead_with(picked: list[T], i: int | None) -> list[T]:
    """``picked`` with sentence ``i`` moved to the front (unchanged for ``None``)."""
    return picked if i is None else [picked[i], *picked[:i], *picked[i + 1 :]]


def general_first(picked: list[T]) -> list[T]:
    """``picked`` with the first sentence that states the general case moved to the front, when the first
    one opens on an exception (see the module doc); unchanged otherwise."""
    i = first_unflagged(picked, opens_on_exception)
    if i is not None and picked[i].logit < picked[0].logit:
        return picked  # the reader prefers the exception: it is what the question asks
    return lead_with(picked, i)


def on_asked_aspect(read: list[T], asked: list[str]) -> list[T]:
    """``read`` with the sentences after the first kept only when they carry an asked aspect: their passage's
    label is asked, or the sentence has a cue of an asked label ("diagnose", "test").

    Why: "What tests are used to diagnose multiple sclerosis?" filled its word budget, after "Doctors use a
    medical history, physical exam, neurological exam, MRI, and other tests to diagnose it.", with "Physical
    and occupational therapy may also help." and "Depression is another common feature of MS." — within the
    reader's loose floor, off the aspect asked. The first sentence is the reader's best and stays whatever it
    says; nothing changes when no specific aspect is asked ("overview"), nor for sentences of unlabelled
    passages (``UNLABELLED``)."""
    wanted = [label for label in asked if label != "overview"]
    if not wanted or not read:
        return read
    return [read[0]] + [
        r
        for r in read[1:]
        if r.label in wanted or r.label in UNLABELLED or any(mentions_label(r.text, w) for w in wanted)
    ]


UNLABELLED = frozenset({"general", ""})
"""Passage labels that say nothing of the aspect (PubMed snippets and abstracts are "general"): their
sentences are not judged by aspect — a BioASQ answer rarely says "treatment" or "symptom" in those words,
and judging them cost a held-out answer on the full pool."""


CAUSE_OF = re.compile(r"\bcauses?\s+of\s+(?P<what>[^.;,]{0,60})", re.IGNORECASE)
CAUSED_BY = re.compile(r"\bcaused\s+by\b", re.IGNORECASE)
ASKS_WHAT_IT_CAUSES = re.compile(
    r"\bwhat\s+(?:does|do|can|could|might|will)\s+.+\s+(?:cause|lead\s+to)\b|\bcomplications?\b|\blead\s+to\b",
    re.IGNORECASE,
)


def subject_as_cause(text: str, subject: re.Pattern[str]) -> bool:
    """Whether ``text`` names the subject as the cause of something else ("… glaucoma, a leading cause of
    blindness", "osteoporosis can be the cause of bone fractures"), not what causes it."""
    found = CAUSE_OF.search(text)
    if found is None or CAUSED_BY.search(text):
        return False
    return bool(subject.search(text[: found.start()])) and not subject.search(found.group("what"))


def asked_direction_first(
    picked: list[T], asked: list[str], question: str, subject: re.Pattern[str] | None
) -> list[T]:
    """For "what causes X?", the first picked sentence that says what causes X leads, when the first one
    says what X causes instead; the selection is unchanged.

    Why: "What causes glaucoma?" led with "Nearly 2.7 million people have glaucoma, a leading cause of
    blindness in the United States." — the reader reads "cause" and the subject, not which way round. Not
    when the question asks what the subject causes or leads to ("What can gout lead to?")."""
    if subject is None or "causes" not in asked or ASKS_WHAT_IT_CAUSES.search(question):
        return picked
    return lead_with(picked, first_unflagged(picked, lambda text: subject_as_cause(text, subject)))
