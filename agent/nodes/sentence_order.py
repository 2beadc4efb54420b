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


CAUSAL = re.compile(
    r"\b(?:causes?|caused(?!\s+by)|causing|leads?\s+to|led\s+to|results?\s+in|resulted\s+in)\b"
    r"(?!\s+(?:in|are|is|include|includes|and|or|for|that|which|remain|vary|among|have|has)\b)"
    r"(?P<effect>(?:[^.;:,]\S*\s*){0,8})",
    re.IGNORECASE,
)
"""A causal verb or noun ("can cause", "leads to", "a leading cause of") and the few words after it that
name what is caused (to the end of the clause, at most eight words). Not "because", not "caused by", and
not the noun in "the genetic causes in nine probands" or "its causes include …" (the words after it name
no effect)."""
ASKS_A_CAUSE = re.compile(r"\b(?:caus\w*|etiolog\w*|aetiolog\w*)\b", re.IGNORECASE)
"""A question that asks in words what causes its subject: "causes" inferred from a cue such as "gene" or
"mutation" does not say which way ("Which syndrome is associated to SAMHD1 gene mutations?" asks what the
mutations cause), nor does "why" ("Why does my cardiologist want me on a blood thinner for my atrial
fibrillation?" asks the reason for a treatment: the anticoagulant prevents the stroke AF can cause)."""
CAUSED_BY = re.compile(
    r"\b(?:caused\s+by|due\s+to|results?\s+from|arises?\s+from|triggered\s+by|risk)\b", re.IGNORECASE
)
"""Wordings that say what brings the subject about (or raises its risk), whatever else the sentence says."""
THE_CONDITION = re.compile(
    r"\b(?:this|the|these)\s+(?:condition|disorder|disease|syndrome|cancer|tumou?r|infection|illness)s?\b",
    re.IGNORECASE,
)
"""A reference back to the subject as an effect: "Mutations in the HFE gene cause this condition"."""
ASKS_WHAT_IT_CAUSES = re.compile(
    r"\bwhat\s+(?:does|do|can|could|might|will)\s+.+\s+(?:cause|lead\s+to)\b|\bcomplications?\b|\blead\s+to\b",
    re.IGNORECASE,
)


def asks_what_causes(asked: list[str], question: str) -> bool:
    """Whether ``question`` asks in words what causes its subject, not what the subject causes."""
    return (
        "causes" in asked and bool(ASKS_A_CAUSE.search(question)) and not ASKS_WHAT_IT_CAUSES.search(question)
    )


def says_other_effect(text: str, subject: re.Pattern[str]) -> bool:
    """Whether ``text`` says only what causes something other than the subject: each causal wording's
    effect names neither the subject nor "this condition", and nothing in it says what brings the subject
    about ("caused by", "due to", "risk"). "Usually CLL does not cause any symptoms.", "osteoporosis can be
    the cause of bone fractures", "… until a sudden strain, bump, or fall causes a bone to break.". A causal
    word with no words after it in its clause names no effect ("Hypothyroidism has several causes,
    including Hashimoto's disease")."""
    effects = [found.group("effect") for found in CAUSAL.finditer(text) if found.group("effect").strip()]
    if not effects or CAUSED_BY.search(text):
        return False
    return not any(subject.search(effect) or THE_CONDITION.search(effect) for effect in effects)


def on_asked_direction(
    read: list[T], asked: list[str], question: str, subject: re.Pattern[str] | None
) -> list[T]:
    """For "what causes X?", ``read`` without the sentences that say what X (or something else) causes
    instead (``says_other_effect``), except those of a passage with an asked label (a "What causes" or
    "Who is at risk" page is about what brings X about, whatever its sentences' grammar).

    Why: "What causes glaucoma?" led with "Nearly 2.7 million people have glaucoma, a leading cause of
    blindness in the United States."; "What causes chronic lymphocytic leukemia?" was answered with "This
    may cause infection, anemia, and easy bleeding." and "Usually CLL does not cause any symptoms." — the
    reader reads "cause" and the subject, not which way round. Dropped, not moved down: a sentence saying
    what the disease causes does not answer what causes it. Not when the question asks what the subject
    causes or leads to ("What can gout lead to?"), nor when "causes" is only inferred from a cue word
    (``ASKS_A_CAUSE``)."""
    if not asks_what_causes(asked, question) or subject is None:
        return read
    return [r for r in read if r.label in asked or not says_other_effect(r.text, subject)]


def asked_direction_first(
    picked: list[T], asked: list[str], question: str, subject: re.Pattern[str] | None
) -> list[T]:
    """For "what causes X?", the first picked sentence that says what brings X about leads (one of a
    passage with an asked label, or with a cue of one: "cause", "risk"), when the first one does not or
    says what X causes (a sentence :func:`on_asked_direction` keeps for its passage's label); the
    selection is unchanged.

    Why: "What causes glaucoma?" quoted from its "What causes" page "Nearly 2.7 million people have
    glaucoma, a leading cause of blindness …" first; "What causes chronic lymphocytic leukemia?" led with
    "CLL is the second most common type of leukemia in adults." above "Older age can affect the risk of
    developing chronic lymphocytic leukemia." (its "Who is at risk" page)."""
    if not asks_what_causes(asked, question) or subject is None or not picked:
        return picked

    cues = [*asked, "risk factors"]  # a risk factor says how X comes about, asked or not

    def says_how_it_comes_about(r: T) -> bool:
        if says_other_effect(r.text, subject):
            return False
        return r.label in asked or any(mentions_label(r.text, label) for label in cues)

    if says_how_it_comes_about(picked[0]):
        return picked
    return lead_with(picked, next((i for i, r in enumerate(picked) if says_how_it_comes_about(r)), None))
