"""Follow-up questions keep their subject: what "its", "the dose" or "what about children?" refers to.

A follow-up often names no focus of its own, or names only the aspect it asks about: "and what are its side
effects?" links "side effects" (the MedQuAD focus *Drug Reactions*) and nothing else, so searching from what
it links finds generic passages about drug reactions. The consult's **focus** — the diseases, drugs, genes
or phenotypes its questions were about — is kept in the state; a follow-up that refers back (a pronoun or
a definite "the dose") or names no focus of its own continues with it. When the follow-up asks about a
drug's aspect (side effects, dose, interactions) of "its" treatment and the focus is a disease, the drug the
previous answer was about (its **key entity**) is carried too.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable
from typing import Any

from agent.state import ConsultState, EntityRec
from graphs.model.labels import specific_labels_asked

FOCUS_TYPES = frozenset({"Disease", "Compound", "Gene", "Phenotype", "Symptom", "Pathogen"})
"""Entity types a question can be *about* (an anatomy term like "children" qualifies, it is not a focus)."""
DRUG_TYPES = frozenset({"Compound"})
GENERIC_LABELS = frozenset({"overview", "information", "general"})
_REFERS_BACK = re.compile(
    r"\b(?:its|it|it's|they|them|their|theirs|this|that|these|those|same|"
    r"the\s+(?:dose|doses|dosage|drug|drugs|medicine|medicines|medication|medications|treatment|"
    r"treatments|therapy|disease|condition|illness|disorder|infection|patient|side\s+effects)"
    r"(?!\s+of\s+(?!(?:it|its|them|this|that|these|those|the)\b)\w)"
    r"(?!\s+for\s+(?!(?:it|its|them|this|that|these|those|the|children|kids|adults|babies|infants|women|men|"
    r"people|patients|elderly|older|him|her|me|my|us|you|your|a\s+child|an\s+adult)\b)\w))\b",
    re.IGNORECASE,
)
"""Words that point back. "The side effects" followed by what they are of ("… of statins") names its own
subject, even one the KG does not know: "What are the side effects of statins?" was told it referred back to
nothing, and so was "What is the treatment for a broken wrist?"."""
_POSSESSIVE = re.compile(r"\b(?:its|their|them)\b", re.IGNORECASE)
"""With a subject of its own, only these still point back ("is asthma a side effect of its treatment?")."""
_DRUG_ASPECT = re.compile(
    r"\b(?:side[\s-]+effects?|adverse|dose|doses|dosage|dosing|interactions?|contraindicat\w*|"
    r"overdose|toxicity|take\s+it|taken|tablets?)\b",
    re.IGNORECASE,
)
_ELLIPTICAL = re.compile(
    r"^\s*(?:and|also|what\s+about|how\s+about|what\s+if|what\s+else|and\s+in|in\s+(?:children|adults|"
    r"pregnancy|women|men|the\s+elderly|older\s+adults))\b",
    re.IGNORECASE,
)
_SUBJECT_PRONOUN = re.compile(r"\b(?:it|they|them)\b", re.IGNORECASE)
"""Pronouns a named subject can stand in for word for word ("How is it treated?")."""
_ANY_PRONOUN = re.compile(r"\b(?:it|its|they|them|their)\b", re.IGNORECASE)
_WHAT_ARE_ITS = re.compile(
    r"^(?P<head>(?:and\s+)?(?:what|which)\s+(?:is|are|was|were)\s+)(?:its|their)\s+(?P<noun>[a-z][a-z-]*"
    r"(?:\s+[a-z][a-z-]*){0,2})\s*\?\s*$",
    re.IGNORECASE,
)
"""A possessive follow-up that ends on its noun ("What are its symptoms?", "what is their prognosis?"): asked
as "What are the symptoms of X?", the MedQuAD shape."""
MAX_KEY_ENTITIES = 2


_RELATIVE_THAT = re.compile(
    r"\b(?!(?:is|are|was|were|can|could|does|do|did|will|would|should|may|might|about|of|for|with|to|and|"
    r"or|but|if|so|what|how|why|when|where|which|who|treat|cause|causes|prevent|get|have|has)\b)"
    r"(?P<noun>[a-z]+)\s+that\s+(?=(?:is|are|was|were|has|have|had|keeps?|stays?|won't|doesn't|isn't|aren't|will|"
    r"can|may|might|does|do|did|comes?|goes?|gets?)\b)",
    re.IGNORECASE,
)
"""A "that" opening a relative clause after the noun it qualifies ("a blood sugar that is too low", "a rash
that won't go away"): it points at that noun, not back at an earlier turn. "What are the symptoms of a
blood sugar that is too low?" was told it referred back to nothing and searched with no subject. After a
verb or a question word "that" still points back ("How is that treated?", "Is that serious?")."""


def refers_back(question: str) -> bool:
    """Does the question point at something said before ("its", "them", "the dose")? Not through a
    relative "that" (``_RELATIVE_THAT``)."""
    return bool(_REFERS_BACK.search(_RELATIVE_THAT.sub(r"\g<noun> ", question)))


MAX_BARE_REFERENCE_WORDS = 12
"""A question this short that refers back has nothing else to go on ("Is it contagious?"); a longer one —
a patient case saying "How should this be treated?" or "the patient" — carries its own content."""


def named_in_place(question: str, name: str) -> str | None:
    """``question`` with its one pronoun replaced by ``name`` ("How is it treated?" → "How is COPD
    treated?", "What are its symptoms?" → "What are the symptoms of COPD?"), or ``None`` when it has no
    pronoun, two (which is which?), or a possessive inside it ("How are its symptoms treated?")."""
    if len(_ANY_PRONOUN.findall(question)) != 1:
        return None
    if _SUBJECT_PRONOUN.search(question):
        return _SUBJECT_PRONOUN.sub(lambda _: name, question)
    possessive = _WHAT_ARE_ITS.match(question)
    return f"{possessive['head']}the {possessive['noun']} of {name}?" if possessive else None


def is_bare_reference(question: str) -> bool:
    """Does the question only make sense after an earlier turn (short, and pointing back)?"""
    return refers_back(question) and len(question.split()) <= MAX_BARE_REFERENCE_WORDS


def asks_drug_aspect(question: str) -> bool:
    """Does the question ask about a drug's properties (side effects, dose, interactions)?"""
    return bool(_DRUG_ASPECT.search(question))


def continues(question: str) -> bool:
    """Does the question read as a continuation ("and …", "what about …", "in children?")?"""
    return bool(_ELLIPTICAL.search(question))


def aspects_asked(text: str) -> list[str]:
    """The specific aspects a text asks about ("overview" — any "what is …" — is not one)."""
    return [label for label in specific_labels_asked(text) if label not in GENERIC_LABELS]


def asks_only_aspect(question: str) -> bool:
    """Does the question ask an aspect (symptoms, treatment, dose, side effects) of an unnamed subject?"""
    return asks_drug_aspect(question) or bool(aspects_asked(question))


def is_aspect_mention(entity: EntityRec) -> bool:
    """An entity linked from the words of an aspect ("side effects" → *Drug Reactions*): what the question
    asks about, not whom it is about."""
    surface = str(entity.get("surface") or "")
    return bool(surface) and (asks_drug_aspect(surface) or bool(aspects_asked(surface)))


def own_focus(entities: Iterable[EntityRec]) -> list[str]:
    """The focus a question names itself: affirmed entities of a focus type that are not aspect words."""
    return [
        e["id"]
        for e in entities
        if not e.get("negated") and e.get("type") in FOCUS_TYPES and not is_aspect_mention(e)
    ]


def is_follow_up(question: str, asked: list[EntityRec]) -> bool:
    """Should this question continue with the consult's focus?

    A question naming a subject of its own is a follow-up only through "its"/"their"/"them". One without
    a subject is when it refers back ("it", "the dose"), reads as a continuation ("what about children?")
    or asks an aspect ("What are the symptoms?"). A question with no subject
    and no such cue ("capital of France?") is not a follow-up: it must not borrow the consult's subject and
    come back "answered" about it.
    """
    if own_focus(asked):  # "What is the treatment for X?": "the treatment" is X's, not an earlier subject's
        return bool(_POSSESSIVE.search(question))
    return refers_back(question) or continues(question) or asks_only_aspect(question)


def focus_before(state: ConsultState) -> list[str]:
    """The focus recorded by the latest turn before this one (an interrupted try of this turn is ignored)."""
    turn = state.get("turn", 1)
    earlier = {int(k): v for k, v in state.get("focus_by_turn", {}).items() if int(k) < turn and v}
    return list(earlier[max(earlier)]) if earlier else []


def consult_focus(state: ConsultState) -> list[EntityRec]:
    """The consult's focus entities as records: those recorded by earlier turns, or — for a consult
    checkpointed before focus was recorded — the affirmed entities of the latest earlier turn."""
    by_id = {e["id"]: e for e in state.get("entities", [])}
    recorded = [by_id[i] for i in focus_before(state) if i in by_id]
    if recorded:
        return recorded
    turn = state.get("turn", 1)
    earlier = [e for e in state.get("entities", []) if e.get("turn", 0) < turn and not e.get("negated")]
    if not earlier:
        return []
    latest = max(e.get("turn", 0) for e in earlier)
    return [e for e in earlier if e.get("turn", 0) == latest]


def previous_answer(state: ConsultState) -> dict[str, Any]:
    turns = state.get("turns", [])
    return dict(turns[-1].get("answer") or {}) if turns else {}


def key_entities(state: ConsultState, types: dict[str, str]) -> list[str]:
    """The drugs the previous answer was about, most supported first.

    The drugs of the previous answer's direct-answer facts (ranked there by evidence support); for an answer
    without them, the drugs on the chains it cited, ranked by how many of those chains pass through them.
    ``types`` maps entity ids to their types (looked up by the caller in the KB).
    """
    answer = previous_answer(state)
    listed = [i for i in fact_entities(answer) if types.get(i) in DRUG_TYPES]
    if listed:
        return listed[:MAX_KEY_ENTITIES]
    counts: Counter[str] = Counter()
    for node_ids in chain_nodes(state, answer):
        counts.update({n for n in node_ids if types.get(n) in DRUG_TYPES})
    return [i for i, _ in counts.most_common(MAX_KEY_ENTITIES)]


def fact_entities(answer: dict[str, Any]) -> list[str]:
    """Entity ids of the previous answer's direct-answer KG facts, in the order the answer ranked them."""
    direct = answer.get("direct") or {}
    facts = direct.get("facts") if isinstance(direct, dict) else None
    return [str(f["entity_id"]) for f in facts or [] if isinstance(f, dict) and f.get("entity_id")]


def chain_nodes(state: ConsultState, answer: dict[str, Any]) -> list[list[str]]:
    """Node ids of the chains the previous answer cited (as kept in the consult's chain records)."""
    cited = set(answer.get("chain_ids") or [])
    recorded = answer.get("chain_nodes")
    if isinstance(recorded, dict):
        return [list(v) for k, v in recorded.items() if k in cited]
    return [list(c.get("node_ids", [])) for c in state.get("chains", []) if c["id"] in cited]


def candidate_key_ids(state: ConsultState) -> list[str]:
    """Entity ids :func:`key_entities` may pick from (for the caller's one type lookup)."""
    answer = previous_answer(state)
    ids = fact_entities(answer)
    for nodes in chain_nodes(state, answer):
        ids += nodes
    return list(dict.fromkeys(ids))
