"""For "What is X?", the sentence that says what X is leads the key sentences.

Why: "What is COPD?" led with "The "airways" are the tubes that carry air in and out of the lungs …" and
"COPD is a major cause of death and illness throughout the world." — the reader scores sentences for
answering the question, and on an overview page every sentence answers "what is it?" a little; the one a
clinician expects first, "Chronic obstructive pulmonary disease, or COPD, is a progressive lung disease in
which the airways of the lungs become damaged …", read -0.22 against 0.97 and was not shown at all. A
definition is a sentence whose grammatical subject is X (a name or synonym, with an abbreviation or an
"or …" name after it) and whose verb is "is/are" or "refers to", not a ranking ("is a major cause of",
"is the second most common") or a frequency ("is rare").
"""

from __future__ import annotations

import re
from typing import TypeVar

from agent.nodes.sentence_order import ReadLike

T = TypeVar("T", bound=ReadLike)

ASKS_WHAT_IT_IS = re.compile(
    r"^\s*(?:what\s+(?:is|are)|what's|define|tell\s+me\s+about|explain)\s+(?:an?\s+|the\s+)?"
    r"(?P<what>[^?.;,]{2,80}?)\s*[?.]?\s*$",
    re.IGNORECASE,
)
"""A question that asks only what its subject is: "What is COPD?", "What are thalassemias?"."""
NOT_A_DEFINITION = re.compile(
    r"^(?:not|also|more|less|very|usually|often|sometimes|rarely|most|still|now|becoming|one\s+of\s+the\s+most|"
    r"the\s+(?:most|second|third|fourth|fifth|leading|main|number)|an?\s+(?:major|leading|common|rare|"
    r"serious|important|frequent)\b|(?:common|rare|uncommon|caused|treated|diagnosed|found|seen|more|"
    r"divided|classified|grouped|split|hard|easy|difficult|likely|unlikely)\b|\w+\s+(?:times|percent)\b|"
    r"(?:an?\s+|one\s+)?(?:signs?|symptoms?|complications?)\b|the\s+\w+est\b)",
    re.IGNORECASE,
)
"""What follows "X is" in a sentence that says how common, how serious or how it is handled, not what it
is."""


ARTICLE = re.compile(r"^(?:an?|the)\s+", re.IGNORECASE)
OTHER_NAME = re.compile(r"^\s*(?:\([^)]{1,40}\)|,\s*(?:or|also\s+called|also\s+known\s+as)\s+[^,]{1,60},)")
"""An abbreviation or another name right after the subject: "(COPD)", ", or COPD,"."""
COPULA = re.compile(r"\s+(?:is|are|refers\s+to|describes)\s+(?P<after>.*)", re.IGNORECASE)
MAX_SUBJECT_WORDS = 6


NOT_A_SUBJECT = frozenset({"for", "of", "in", "to", "with"})
NOT_A_SUBJECT_START = frozenset(
    {
        *("its", "their", "his", "her", "my", "your", "our"),
        *("symptoms", "symptom", "signs", "treatment", "treatments", "causes", "cause", "side", "risk"),
        *("complications", "dose", "dosage", "outlook", "prognosis", "options", "tests"),
    }
)
"""First words of an aspect asked of a subject named elsewhere, not of a subject: "What are its symptoms?"
and "What are the symptoms?" (a follow-up) ask for symptoms — named answers ("shortness of breath;
wheezing"), not a definition."""


def asked_subject(question: str) -> str | None:
    """The words for the subject of a question that asks only what it is (``ASKS_WHAT_IT_IS``, at most
    ``MAX_SUBJECT_WORDS`` words, none of ``NOT_A_SUBJECT``: "What is the first-line medicine for type 2
    diabetes?" asks for a medicine); ``None`` for any other question."""
    found = ASKS_WHAT_IT_IS.match(question)
    if found is None:
        return None
    words = found.group("what").split()
    if len(words) > MAX_SUBJECT_WORDS or NOT_A_SUBJECT & {w.lower() for w in words}:
        return None
    if words[0].lower() in NOT_A_SUBJECT_START:
        return None
    return found.group("what")


def asks_what_it_is(question: str) -> bool:
    """Whether ``question`` asks only what its subject is (:func:`asked_subject`)."""
    return asked_subject(question) is not None


def defines_subject(text: str, subject: re.Pattern[str], asked: str = "") -> bool:
    """Whether ``text`` opens on the subject and says what it is: "Chronic obstructive pulmonary disease, or
    COPD, is a progressive lung disease …", "Gout is a form of arthritis …"; not "COPD is a major cause of
    death …". With ``asked`` (the question's words for the subject), the name the sentence opens on (with
    the other name after it) must hold each of them: "What is Valley Fever?" is not defined by "A fever is
    a body temperature that is higher than normal.", though the subject's names include "fever"."""
    opening = ARTICLE.sub("", text.strip())
    found = subject.match(opening)
    if found is None:
        return False
    rest = opening[found.end() :]
    other = OTHER_NAME.match(rest)
    named = {w.lower() for w in re.findall(r"\w+", found.group(0) + (other.group(0) if other else ""))}
    if not {w.lower() for w in re.findall(r"\w+", asked)} <= named:
        return False
    verb = COPULA.match(rest[other.end() :] if other else rest)
    return verb is not None and not NOT_A_DEFINITION.match(verb.group("after"))


def definition_first(
    shown: list[T],
    picked: list[T],
    question: str,
    subject: re.Pattern[str] | None,
    max_words: int,
    asked: list[str] | None = None,
) -> list[T]:
    """``picked`` led by the best-read sentence of ``shown`` that defines the subject, when ``question``
    asks what it is (and no aspect but the overview is ``asked``) and ``picked`` does not already lead with
    one; the others follow in their order while they fit in ``max_words`` and the block holds no more
    sentences than ``picked`` did."""
    asked_words = asked_subject(question)
    if subject is None or not picked or asked_words is None or set(asked or []) - {"overview"}:
        return picked
    if defines_subject(picked[0].text, subject, asked_words):
        return picked
    defining = [r for r in shown if defines_subject(r.text, subject, asked_words)]
    if not defining:
        return picked
    best = max(defining, key=lambda r: r.logit)
    out, words = [best], len(best.text.split())
    for r in picked:
        if r.text == best.text or len(out) >= len(picked):
            continue
        if words + len(r.text.split()) <= max_words:
            out.append(r)
            words += len(r.text.split())
    return out
