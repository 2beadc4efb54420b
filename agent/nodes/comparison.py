"""A question comparing two things is answered about both: the key sentences name each of them.

Why: "How is Crohn's disease different from ulcerative colitis?" was answered with Crohn's sentences only, and
"What is the difference between type 1 and type 2 diabetes?" with one sentence on both and one on prediabetes.
The reader scores each sentence against the whole question, and the page of one of the two compared things
usually outscores the other's. When the question compares things (``COMPARES``) and no picked sentence names
one of its subjects, the best sentence the reader would show that names it replaces the last one picked — so
the budget is kept, and a subject the evidence never names stays missing rather than being made up.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from agent.nodes.focus import Focus
from agent.nodes.reading import ReadSentence
from agent.state import EntityRec, EvidenceRec

COMPARES = re.compile(
    r"\b(?:differen(?:t|ce|ces)|differ|distinguish|tell apart)\b.{0,80}\b(?:between|from|and)\b"
    r"|\bvs\.?\s|\bversus\b|\bcompared? (?:to|with)\b",
    re.IGNORECASE,
)


def compared_subjects(question: str, focus: Focus) -> list[tuple[EntityRec, re.Pattern[str]]]:
    """Each distinct subject a comparing question names (two or more) with a pattern of its names, else
    none."""
    if not COMPARES.search(question):
        return []
    # One subject per phrase of the question: "stroke" links to a disease and to a phenotype.
    names_of: dict[str, tuple[EntityRec, set[str]]] = {}
    for entity in focus.entities:
        names = {n for n in focus.names.get(entity["id"]) or [entity.get("name", "")] if n}
        key = (entity.get("surface") or entity.get("name", "")).lower()
        first, known = names_of.get(key, (entity, set()))
        names_of[key] = (first, known | names)
    subjects = []
    for key, (entity, names) in names_of.items():
        pattern = re.compile(
            r"\b(?:" + "|".join(re.escape(n) for n in sorted(names, key=len, reverse=True)) + r")\b", re.I
        )
        if pattern.search(question):
            subject: EntityRec = {**entity}
            subject["surface"] = key
            subjects.append((subject, pattern))
    return subjects if len(subjects) >= 2 else []


def covering_each_subject(
    picked: list[ReadSentence],
    shown: list[ReadSentence],
    subjects: list[re.Pattern[str]],
    may_show: Callable[[ReadSentence], bool],
) -> list[ReadSentence]:
    """``picked`` with, for each compared subject no picked sentence names, the best sentence of ``shown``
    that names it and ``may_show`` allows, in place of the last picked sentence (never the first) whose
    loss leaves every other subject named; added after them when there is none."""
    out = list(picked)
    for subject in subjects:
        if not out or any(subject.search(r.text) for r in out):
            continue
        found = next((r for r in shown if r not in out and subject.search(r.text) and may_show(r)), None)
        if found is None:
            continue
        spare = next((i for i in range(len(out) - 1, 0, -1) if _spare(out, i, subjects)), None)
        if spare is None:
            out.append(found)
        else:
            out[spare] = found
    return out


def _spare(picked: list[ReadSentence], i: int, subjects: list[re.Pattern[str]]) -> bool:
    """Whether every subject some picked sentence names is still named without sentence ``i``."""
    rest = [r.text for j, r in enumerate(picked) if j != i]
    return all(any(s.search(t) for t in rest) for s in subjects if s.search(picked[i].text))


def with_each_subject_read(
    evidence: list[EvidenceRec], subjects: list[re.Pattern[str]], read: int
) -> list[EvidenceRec]:
    """``evidence`` with, for each subject no passage of the first ``read`` names, the best-ranked passage
    that names it moved up to be read: "How is a heart attack different from a stroke?" ranked its first
    stroke passage 8th, below the six the reader reads, after the planner's round walked from stroke."""
    out = list(evidence)
    for subject in subjects:
        if any(subject.search(ev.get("text", "")) for ev in out[:read]):
            continue
        later = next((i for i in range(read, len(out)) if subject.search(out[i].get("text", ""))), None)
        if later is not None and read > 1:
            out.insert(read - 1, out.pop(later))
    return out
