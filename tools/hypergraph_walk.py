"""``hypergraph_walk``: which topics (entity × label evidence groups) sit closest to the linked entities.

EbmKG §4.1 (seed 000): walks from the linked entities over the entity↔topic bipartite graph, each step
chosen ∝ the eq. 6 weight ``w(t, m)``; ``f(t)`` = how many walks visit topic ``t``; keep the ``n_t`` most
visited. ``mode="ppr"`` returns the deterministic limit of the same idea, personalised PageRank with the
linked entities as restart set, by local push (graphs/algorithms/ppr.py). The result also lists the other
entities the walk reached (candidates for query expansion) and every topic's evidence ids, so the next tool
can rank evidence inside the located topics.

Defaults, and why:
* ``alpha = 4`` hops. The paper leaves α unset; 4 hops in B is seed → topic → co-mentioned entity → its
  topic → entity, i.e. topics up to distance 3: the seed's own topics plus those of entities its evidence
  mentions, the "local community" the paper wants, without drifting to unrelated hubs.
* ``beta = 128`` walks per seed entity. ``f(t)/β`` is a binomial proportion, so what β buys is how close
  the returned top-``n_t`` is to the top-``n_t`` by *expected* visit frequency. Measured on the default KB
  (30 queries of 1–3 topic-owning entities, 5 seeds each, expectation from 20,000 walks): the returned
  top-10 holds 93.9 / 96.7 / 98.4 / 98.8 / 99.3 % of the attainable expected visit mass at β = 32 / 64 /
  128 / 256 / 512 (the topics it swaps are near-ties). 128 is the knee, and 50 seeds × 128 walks × 4
  steps is still one vectorised draw of ~25k numbers per step (< 1 ms on the embedded store).
* ``restart = 0.2``: the expected PPR walk length (1 − c)/c is then 4 hops, matching α.
* ``epsilon = 3e-5``: per-node PPR error ≤ ε·d(u); the total L1 error, (1 − c) × the residual left, is
  reported in ``stats``. Measured on the default KB against exact PPR, share of the exact top-10 topics
  returned: 98.7 % (ε = 3e-5) / 96 % (1e-4) / 99 % (1e-5) for 30 queries of 1–3 topic-owning entities, and
  93.7 / 92.3 / 97.0 % for 30 queries of 3 popular named entities (hypertension, asthma, metformin, …,
  whose huge degrees keep residual mass), at roughly a quarter of the cost of 1e-5.
"""

from __future__ import annotations

from typing import Literal

import numpy as np
from langchain_core.tools import BaseTool
from pydantic import BaseModel, Field

from graphs.algorithms.views import (
    DEFAULT_RESTART,
    BipartiteView,
    bipartite_view,
    push_ppr,
    random_walks,
    visit_frequency,
)
from graphs.kb import KnowledgeBase
from tools.common import as_langchain_tool

SCORE_DIGITS = 12
"""Scores are rounded before ranking so that ties in exact arithmetic stay ties whatever the summation
order (the embedded and the store path add the same numbers in different orders)."""


class HypergraphWalkRequest(BaseModel):
    """Arguments of ``hypergraph_walk``."""

    entity_ids: list[str] = Field(
        min_length=1,
        max_length=50,
        description="Linked entity ids to start from (e.g. from ner_link), such as 'DOID:9352'.",
    )
    mode: Literal["random_walk", "ppr"] = Field(
        default="random_walk",
        description="'random_walk': seeded walks, topics ranked by visit frequency (EbmKG). "
        "'ppr': personalised PageRank mass (deterministic, no sampling noise).",
    )
    alpha: int = Field(default=4, ge=1, le=16, description="Maximum walk length in hops (random_walk).")
    beta: int = Field(
        default=128, ge=1, le=1024, description="Number of walks per start entity (random_walk)."
    )
    n_t: int = Field(default=10, ge=1, le=100, description="Number of topics to return.")
    seed: int = Field(default=0, ge=0, description="Random seed: the same seed gives the same walks.")
    restart: float = Field(
        default=DEFAULT_RESTART, ge=0.05, le=0.95, description="PPR restart probability (ppr mode)."
    )
    epsilon: float = Field(
        default=3e-5, ge=1e-9, le=1e-2, description="PPR push residual threshold: smaller = more exact (ppr)."
    )
    labels: list[str] | None = Field(
        default=None,
        description="Only return topics with these labels, e.g. ['treatment'] when treatment evidence is "
        "missing. Labels: symptoms, causes, diagnosis, treatment, prognosis, prevention, overview, …",
    )
    n_entities: int = Field(default=20, ge=0, le=100, description="Number of other reached entities to list.")
    max_evidence_per_topic: int = Field(
        default=20, ge=1, le=200, description="Evidence ids listed per topic (the count is always given)."
    )


class TopicHit(BaseModel):
    """A located topic: evidence about one entity under one label."""

    topic_id: str
    entity_id: str
    entity_name: str
    label: str
    score: float = Field(description="Visit fraction f(t)/walks (random_walk) or PPR mass (ppr).")
    visit_count: int | None = Field(default=None, description="f(t): walks that visited the topic.")
    ppr_mass: float | None = None
    description: str = ""
    evidence_count: int
    evidence_ids: list[str]


class ReachedEntity(BaseModel):
    """An entity the walk reached that was not a start entity (useful to expand the query)."""

    entity_id: str
    name: str
    type: str
    score: float
    visit_count: int | None = None
    ppr_mass: float | None = None


class HypergraphWalkResult(BaseModel):
    """Ranked topics with their evidence ids, reached entities, and what was done."""

    topics: list[TopicHit]
    entities_reached: list[ReachedEntity]
    start_entities: list[str]
    unknown_ids: list[str]
    isolated_ids: list[str] = Field(
        description="Known entities without any topic (no evidence mentions them)."
    )
    parameters: dict[str, object]
    stats: dict[str, float | int | bool]
    warnings: list[str]


def _top(view: BipartiteView, nodes: np.ndarray, scores: np.ndarray, n: int) -> list[tuple[str, int]]:
    """The ``n`` best (id, position) by score (rounded, descending) then id, deterministic on both paths.

    Only the nodes that can make the cut (score ≥ the n-th best, ties included) are turned into string ids:
    a PPR can reach thousands of nodes and the ids are needed only for the tie-break and the output.
    """
    if len(nodes) == 0 or n <= 0:
        return []
    rounded = np.round(scores, SCORE_DIGITS)
    order = np.argsort(-rounded, kind="stable")
    cut = rounded[order[min(n, len(order)) - 1]]
    candidates = order[rounded[order] >= cut]
    ids = view.node_ids(nodes[candidates])
    ranked = sorted(zip(ids, candidates.tolist(), strict=True), key=lambda x: (-rounded[x[1]], x[0]))
    return ranked[:n]


def hypergraph_walk(
    kb: KnowledgeBase, request: HypergraphWalkRequest, *, fast_path: bool = True
) -> HypergraphWalkResult:
    """Locate topics around ``request.entity_ids`` by random walk or personalised PageRank.

    ``fast_path=False`` forces the plain ``GraphStore`` interface even on the embedded store (tests use it
    to check that both paths agree).
    """
    store = kb.store
    view = bipartite_view(store, fast_path=fast_path)
    wanted = list(dict.fromkeys(request.entity_ids))
    known = view.entity_nodes(wanted)
    unknown = [i for i in wanted if i not in known]
    warnings = [f"unknown entity id(s), ignored: {', '.join(unknown)}"] if unknown else []
    start_ids = sorted(known)
    seeds = np.array([known[i] for i in start_ids], dtype=np.int64)
    degree = view.rows.weighted_degree(seeds) if len(seeds) else np.zeros(0)
    isolated = [i for i, d in zip(start_ids, degree.tolist(), strict=True) if d <= 0]
    if isolated:
        warnings.append(f"entity id(s) without any topic (no evidence mentions them): {', '.join(isolated)}")
    seeds = seeds[degree > 0]
    parameters: dict[str, object] = request.model_dump()
    stats: dict[str, float | int | bool] = {}
    if len(seeds) == 0:
        warnings.append("no start entity has topics: nothing to walk from")
        return HypergraphWalkResult(
            topics=[],
            entities_reached=[],
            start_entities=start_ids,
            unknown_ids=unknown,
            isolated_ids=isolated,
            parameters=parameters,
            stats=stats,
            warnings=warnings,
        )

    counts: np.ndarray | None = None
    if request.mode == "random_walk":
        paths = random_walks(
            view.rows, seeds, request.alpha, request.beta, np.random.default_rng(request.seed)
        )
        nodes, counts = visit_frequency(paths)
        scores = counts / paths.shape[0]
        stats.update(walks=int(paths.shape[0]), steps=int((paths[:, 1:] >= 0).sum()))
    else:
        push = push_ppr(view.rows, seeds, restart=request.restart, epsilon=request.epsilon)
        nodes, scores = push.nodes, push.mass
        stats.update(
            rounds=push.rounds,
            pushes=push.pushes,
            edges_touched=push.edges_touched,
            residual=round(push.residual, 9),
            l1_error=round((1.0 - request.restart) * push.residual, 9),
            converged=push.converged,
        )
        if not push.converged:
            warnings.append("PPR push stopped at its work limit; scores are approximate (raise epsilon)")
    stats["nodes_reached"] = len(nodes)

    topic_mask = view.is_topic(nodes)
    topic_pos = np.flatnonzero(topic_mask)
    if request.labels is not None:
        wanted_labels = {lab.strip().lower() for lab in request.labels}
        topic_pos = topic_pos[view.has_label(nodes[topic_pos], wanted_labels)]
        if not len(topic_pos):
            warnings.append(f"no reached topic has label(s) {sorted(wanted_labels)}")
    top = [(i, int(topic_pos[p])) for i, p in _top(view, nodes[topic_pos], scores[topic_pos], request.n_t)]
    entity_pos = np.flatnonzero(~topic_mask & ~np.isin(nodes, seeds))
    reached = [
        (i, int(entity_pos[p]))
        for i, p in _top(view, nodes[entity_pos], scores[entity_pos], request.n_entities)
    ]

    topics = store.get_topics([i for i, _ in top])
    entity_ids = {t.entity_id for t in topics.values()} | {i for i, _ in reached}
    entities = store.get_entities(sorted(entity_ids))
    is_walk = request.mode == "random_walk"

    def components(p: int) -> dict[str, float | int | None]:
        return {
            "score": round(float(scores[p]), SCORE_DIGITS),
            "visit_count": int(counts[p]) if counts is not None else None,
            "ppr_mass": None if is_walk else round(float(scores[p]), SCORE_DIGITS),
        }

    hits: list[TopicHit] = []
    for topic_id, p in top:
        topic = topics.get(topic_id)
        if topic is None:
            warnings.append(f"topic {topic_id} is in the graph but has no record")
            continue
        ent = entities.get(topic.entity_id)
        hits.append(
            TopicHit(
                topic_id=topic.id,
                entity_id=topic.entity_id,
                entity_name=ent.name if ent else topic.entity_id,
                label=topic.label,
                description=topic.description[:400],
                evidence_count=len(topic.evidence_ids),
                evidence_ids=list(topic.evidence_ids[: request.max_evidence_per_topic]),
                **components(p),
            )
        )
    reached_out: list[ReachedEntity] = []
    for entity_id, p in reached:
        ent = entities.get(entity_id)
        reached_out.append(
            ReachedEntity(
                entity_id=entity_id,
                name=ent.name if ent else entity_id,
                type=ent.type if ent else "",
                **components(p),
            )
        )
    if not hits and request.labels is None:
        warnings.append("the walk reached no topic")
    return HypergraphWalkResult(
        topics=hits,
        entities_reached=reached_out,
        start_entities=start_ids,
        unknown_ids=unknown,
        isolated_ids=isolated,
        parameters=parameters,
        stats=stats,
        warnings=warnings,
    )


DESCRIPTION = (
    "Locate the evidence topics (one entity x one label such as treatment, symptoms, causes, diagnosis) "
    "most connected to the given entity ids in the knowledge hypergraph, by random walks (EbmKG) or "
    "personalised PageRank. Use it after linking the question's terms to entity ids, to find WHERE the "
    "evidence is; pass labels=['treatment'] (etc.) when a specific kind of evidence is missing. Returns "
    "ranked topics with their evidence ids (rank or read them with the evidence tool next), other entities "
    "reached (candidates to expand the query), and warnings for unknown or isolated ids."
)


def hypergraph_walk_tool(kb: KnowledgeBase) -> BaseTool:
    """The LangChain tool an agent calls; arguments are validated by :class:`HypergraphWalkRequest`."""
    return as_langchain_tool(kb, hypergraph_walk, HypergraphWalkRequest, "hypergraph_walk", DESCRIPTION)
