"""The consult's state: what every node reads and writes, checkpointed after each step.

Values are plain JSON-shaped dicts (typed with TypedDicts) so a checkpoint written by one version can be
read by the next and inspected by a person. Consult-level findings (entities, topics, graph candidates)
accumulate across rounds and turns through merge reducers (chains across the rounds of one turn) — a
follow-up question reuses them and retrieves only what is new; per-turn fields are reset by ``start_turn``
with ``Overwrite``.
"""

from __future__ import annotations

import operator
from typing import Annotated, Any, TypedDict


class EntityRec(TypedDict, total=False):
    id: str
    name: str
    type: str
    score: float
    method: str
    negated: bool
    surface: str
    turn: int


class TopicRec(TypedDict, total=False):
    id: str
    entity_id: str
    entity_name: str
    label: str
    score: float
    evidence_ids: list[str]


class ChainRec(TypedDict, total=False):
    id: str
    type: str
    text: str
    length: int
    relation_ids: list[str]
    node_ids: list[str]


class EvidenceRec(TypedDict, total=False):
    id: str
    document_id: str
    title: str
    text: str
    label: str
    source: str
    url: str
    date: str
    keyword_entity: str
    score: float
    scores: dict[str, float]


class Verdict(TypedDict, total=False):
    sufficient: bool
    completeness: float
    missing_entities: list[str]
    missing_labels: list[str]
    missing_relations: list[str]
    reasons: list[str]
    method: str
    answered_probability: float
    """The calibrated model's probability that the evidence answers (agent/nodes/answered.py), offline."""
    not_covered: str
    """Why the KB cannot answer this kind of question at all (agent/nodes/coverage.py), when it cannot."""


class KGFactRec(TypedDict, total=False):
    """A KG fact of the direct answer: the focus linked to ``entity_name`` by ``relation``
    (cite ``chain_ids``)."""

    entity_id: str
    entity_name: str
    entity_type: str
    relation: str
    relations: list[str]
    """Every relation of the merged edges (``relation`` is the first), e.g. treats and palliates."""
    focus_id: str
    focus_name: str
    chain_ids: list[str]
    sources: list[str]
    support: int
    """How many retrieved passages mention the entity (the ranking key)."""


class KeySentenceRec(TypedDict, total=False):
    """A key sentence of the direct answer: ``text`` is ``passage text[start:end]`` of ``evidence_id``."""

    evidence_id: str
    text: str
    start: int
    end: int
    score: float
    label: str


class NamedAnswerRec(TypedDict, total=False):
    """A name the evidence gives as the answer, cited to the sentences naming it and any KG edge to the
    question."""

    name: str
    entity_type: str
    votes: float
    evidence_ids: list[str]
    chain_ids: list[str]


class DirectAnswerRec(TypedDict, total=False):
    """The short answer shown before any passage (offline; renderers show ``lines`` or build their own)."""

    focus: list[str]
    aspect: list[str]
    fact_heading: str
    facts: list[KGFactRec]
    facts_total: int
    sentences: list[KeySentenceRec]
    named: list[NamedAnswerRec]
    """The answer's name(s) where the evidence gives them (factoid/list questions; answer_candidates.py)."""
    lines: list[str]
    """The block as Markdown lines, citations inline (``[C:…]``, ``[E:…]``)."""


class ClaimVerdictRec(TypedDict, total=False):
    """One claim of a checked reply: its verdict and the passages that decide it (nodes/claim_check.py)."""

    text: str
    question: str
    """The yes/no question of the claim's positive form: what the claim checker read."""
    negated: bool
    hedged: bool
    verdict: str
    """"supported", "contradicted" or "no evidence found"."""
    probability: float
    """The checker's probability of the called class (before a negated claim's flip)."""
    support: float
    contradiction: float
    evidence_ids: list[str]
    quotes: list[str]
    closest: dict[str, str]
    """When nothing decides the claim: the window that came closest (``evidence_id``, ``quote``)."""
    unmentioned: list[str]
    """When nothing decides the claim: its named things no retrieved passage names (nodes/claim_terms.py)."""
    passages_read: int
    decided_by: str
    """"knowledge graph" when a KG edge decided the claim (agent/nodes/claim_kg.py); else the checker's."""
    chain_ids: list[str]
    kg_facts: list[str]
    opposite: list[str]
    """A restatement that says one claim word the other way round: [the claim's word, the passage's]."""
    restated_verdict: str
    """When the KG overruled a restatement: the verdict the passage's words gave (the claim has none)."""
    context_carried: bool
    """The claim named no disease and was checked as about the one an earlier claim of the reply names."""


class ReplyCheckRec(TypedDict, total=False):
    """A reply check's verdict table: what leads the answer and sets its status."""

    claims: list[ClaimVerdictRec]
    left_out: int
    """Claims beyond the checked first ``MAX_CLAIMS``."""
    not_checkable: list[str]
    problem: str
    """Empty, or why nothing (or not everything) could be checked: no_claim, question, not_english, …"""
    method: str
    thresholds: dict[str, float]


class ToolCallRec(TypedDict, total=False):
    name: str
    args: dict[str, Any]
    why: str


class StepRec(TypedDict, total=False):
    step: str
    round: int
    summary: str
    detail: dict[str, Any]
    fallback: str


class TurnRec(TypedDict, total=False):
    question: str
    task: str
    answer: dict[str, Any]
    kb_version: str


def merge_by_id(old: list[Any] | None, new: list[Any] | None) -> list[Any]:
    """Union of records keyed by ``id``; a later record with the same id replaces the earlier one."""
    merged: dict[str, Any] = {r["id"]: r for r in old or []}
    for r in new or []:
        merged[r["id"]] = r
    return list(merged.values())


def merge_max(old: dict[str, float] | None, new: dict[str, float] | None) -> dict[str, float]:
    """Union of id → score maps keeping the best score (graph candidates from walks and chains)."""
    out = dict(old or {})
    for k, v in (new or {}).items():
        out[k] = max(v, out.get(k, float("-inf")))
    return out


class ConsultState(TypedDict, total=False):
    """Everything a consult knows; the ``Annotated`` reducers say how updates combine."""

    question: str
    task: str
    turn: int
    round: int
    hypothesis: str
    search_terms: list[str]
    features: list[dict[str, Any]]
    entities: Annotated[list[EntityRec], merge_by_id]
    turn_entity_ids: list[str]
    focus_by_turn: dict[str, list[str]]
    """Each turn's focus (what it was about), by turn number: a follow-up that refers back continues with the
    latest earlier turn's — never with that of a turn that was interrupted and is being asked again."""
    unlinked_terms: list[str]
    topics: Annotated[list[TopicRec], merge_by_id]
    chains: Annotated[list[ChainRec], merge_by_id]
    candidates: Annotated[dict[str, float], merge_max]
    evidence: list[EvidenceRec]
    verdict: Verdict
    pending_calls: list[ToolCallRec]
    answer: dict[str, Any]
    direct_answer: DirectAnswerRec
    reply_check: ReplyCheckRec
    trace: Annotated[list[StepRec], operator.add]
    turns: Annotated[list[TurnRec], operator.add]
    llm_calls: int
    llm_tokens: int
    warnings: list[str]
