"""The only place evals calls the four retrieval tools: one adapter function per tool.

Why: the tools (tools/ner_link, hypergraph_walk, reasoning_chain, evidence_rank) are still evolving. Every
baseline and benchmark goes through these functions, which return small, stable shapes, so a change in a
tool's request or result model is fixed here once. Calls are offline (no LLM): no hypothesis, no LLM terms.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from itertools import pairwise

from agent.nodes.retrieval import fold_topics
from graphs.kb import KnowledgeBase
from tools.evidence_rank import Duplicate, EvidenceRankRequest, RankMethod, evidence_rank
from tools.hypergraph_walk import HypergraphWalkRequest, hypergraph_walk
from tools.ner_link import NerLinkRequest, ner_link
from tools.reasoning_chain import ReasoningChainRequest, reasoning_chain

MAX_WALK_SEEDS = 50
MAX_CHAIN_ANCHORS = 20
MAX_RANK_CANDIDATES = 1000
CHAIN_EVIDENCE_PER_ENTITY = 500


@dataclass(frozen=True)
class Linked:
    """Entities a question names: ids in the tool's order (best first) and which are negated."""

    ids: list[str]
    negated: set[str] = field(default_factory=set)

    @property
    def positive(self) -> list[str]:
        return [i for i in self.ids if i not in self.negated]


@dataclass(frozen=True)
class WalkHits:
    """Located topics' evidence with the best topic score of each evidence unit."""

    evidence_scores: dict[str, float]
    topics: list[str]


@dataclass(frozen=True)
class ChainHits:
    """Reasoning chains as node-id lists (rank order) and, in shortest-path mode, BCG-ranked evidence."""

    chains: list[list[str]]
    chain_texts: list[str]
    path_evidence: list[tuple[str, int]]


def link_entities(kb: KnowledgeBase, question: str, n_m: int = 3) -> Linked:
    """``ner_link`` on the question alone (dictionary + embedding linkers)."""
    result = ner_link(kb, NerLinkRequest(texts=[question], n_m=n_m))
    return Linked(ids=[e.id for e in result.entities], negated={e.id for e in result.entities if e.negated})


def walk_topics(
    kb: KnowledgeBase, entity_ids: Sequence[str], n_t: int = 10, seed: int = 0, mode: str = "random_walk"
) -> WalkHits:
    """``hypergraph_walk`` from the entities with the tool's defaults, folded into graph candidates exactly
    as the agent folds them (agent/nodes/retrieval.py ``fold_topics``: each evidence unit of the top ``n_t``
    topics scored by its best topic's score over the best topic's), so walk scores live in [0, 1]."""
    if not entity_ids:
        return WalkHits({}, [])
    request = HypergraphWalkRequest(
        entity_ids=list(entity_ids)[:MAX_WALK_SEEDS],
        mode="ppr" if mode == "ppr" else "random_walk",
        n_t=n_t,
        seed=seed,
    )
    result = hypergraph_walk(kb, request)
    _, scores = fold_topics(result)
    return WalkHits(scores, [t.topic_id for t in result.topics])


def find_chains(
    kb: KnowledgeBase, entity_ids: Sequence[str], mode: str = "chains", max_evidence: int = 200, k: int = 3
) -> ChainHits:
    """``reasoning_chain`` between the entities (``chains`` or BCG ``shortest_path`` with evidence)."""
    if not entity_ids:
        return ChainHits([], [], [])
    request = ReasoningChainRequest(
        entity_ids=list(entity_ids)[:MAX_CHAIN_ANCHORS],
        mode="shortest_path" if mode == "shortest_path" else "chains",
        k=k,
        max_evidence=max_evidence,
    )
    result = reasoning_chain(kb, request)
    return ChainHits(
        chains=[[node.id for node in chain.nodes] for chain in result.chains],
        chain_texts=[chain.text for chain in result.chains],
        path_evidence=[(e.evidence_id, e.rank) for e in result.evidence],
    )


def chain_evidence(kb: KnowledgeBase, chains: Sequence[Sequence[str]]) -> dict[str, float]:
    """Evidence that mentions both ends of some edge of a chain, scored 1 / (1 + chain rank).

    The chains tool returns relations, not passages; an edge's passages are those naming both of its
    entities (the BCG mapping rule for a sentence with two linked entities, seed 002 §3.2.2).
    """
    nodes = sorted({n for chain in chains for n in chain})
    if not nodes:
        return {}
    mentions = {e: set(v) for e, v in kb.store.entity_evidence(nodes, CHAIN_EVIDENCE_PER_ENTITY).items()}
    scores: dict[str, float] = {}
    for rank, chain in enumerate(chains):
        for a, b in pairwise(chain):
            for evidence_id in mentions.get(a, set()) & mentions.get(b, set()):
                scores[evidence_id] = max(scores.get(evidence_id, 0.0), 1.0 / (1 + rank))
    return scores


def rank_evidence(
    kb: KnowledgeBase,
    question: str,
    candidate_ids: Sequence[str],
    top_k: int,
    graph_scores: dict[str, float] | None = None,
    entity_ids: Sequence[str] = (),
    methods: Sequence[RankMethod] | None = None,
    vector_k: int = 50,
    hybrid_weight: float | None = None,
    credit_twins: bool = True,
    lexical: bool = True,
    question_index: bool = True,
    search_encoder: bool = True,
) -> list[tuple[str, float]]:
    """``evidence_rank``: (evidence id, final score) best first. No word budget (K is the cut here)."""
    ordered = sorted(candidate_ids, key=lambda i: (-(graph_scores or {}).get(i, 0.0), i))
    fields: dict[str, object] = {
        "question": question,
        "candidate_ids": ordered[:MAX_RANK_CANDIDATES],
        "graph_scores": graph_scores or None,
        "entity_ids": list(entity_ids)[:50],
        "vector_k": vector_k,
        "top_k": top_k,
        "word_budget": 50_000,
        "search_encoder": search_encoder,
    }
    if methods is not None:
        fields["methods"] = list(methods)
    if not lexical:
        fields.update(lexical_k=0, lexical_weight=0.0)
    if not question_index:
        fields.update(question_k=0, question_weight=0.0)
    if hybrid_weight is not None:
        fields["hybrid_weight"] = hybrid_weight
    result = evidence_rank(kb, EvidenceRankRequest.model_validate(fields))
    ranked = [(e.id, e.scores.final) for e in result.evidence]
    return as_slots(ranked, result.duplicates) if credit_twins else ranked


TWIN_SEPARATOR = "\t"
"""Joins a kept passage and the twins folded into it into one slot (evidence ids hold no tab)."""


def as_slots(ranked: list[tuple[str, float]], duplicates: Sequence[Duplicate]) -> list[tuple[str, float]]:
    """The ranked list with each kept passage's folded twins joined to it in one slot.

    Why: a folded twin is shown to the reader as the passage it repeats, so it must not cost a top-K slot
    (issue 11: inserting twins as extra entries pushed real passages out of the top 10). The scorer
    (evals/scoring.py ``units``) reads a slot as one unit: the gold one when a member is gold.
    """
    twins: dict[str, list[str]] = {}
    for duplicate in duplicates:
        twins.setdefault(duplicate.duplicate_of, []).append(duplicate.id)
    return [(TWIN_SEPARATOR.join([i, *twins.get(i, [])]), score) for i, score in ranked]


def with_twins(ranked: list[tuple[str, float]], duplicates: Sequence[Duplicate]) -> list[tuple[str, float]]:
    """The ranked list with every dropped near-duplicate placed right after the unit it repeats.

    Why: evidence_rank keeps one of two near-identical passages (cosine > 0.97, or the same span of one
    document) so the answer does not spend its word budget twice, and lists the other as its duplicate.
    The retrieval metrics count ids, and a gold set may hold both twins (BioASQ pools repeat a snippet under
    several ids); crediting the listed twin at its kept copy's rank scores what the reader is shown, as a
    baseline without deduplication is scored. The ``evigraph-strict-ids`` ablation scores without it.
    """
    twins: dict[str, list[str]] = {}
    for duplicate in duplicates:
        twins.setdefault(duplicate.duplicate_of, []).append(duplicate.id)
    out: list[tuple[str, float]] = []
    for evidence_id, score in ranked:
        out.append((evidence_id, score))
        out.extend((twin, score) for twin in twins.get(evidence_id, []))
    return out
