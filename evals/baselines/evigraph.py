"""EviGraph's own retrieval: ner_link → hypergraph_walk → reasoning_chain → evidence_rank, called directly
(offline), with switches for the ablations.

The default configuration mirrors the offline first round of the consult agent (agent/nodes/retrieval.py
and agent/nodes/rank.py), so the numbers describe what the product retrieves:

* seeds = the linked, non-negated entities in ner_link's order (best first), at most 20; anchors for the
  chains = the first 8, and chains only when there are at least 2;
* walk: personalised PageRank (the agent's default ``walk_mode``), ``n_t = 10``; every evidence unit of a
  located topic is a candidate scored by its topic's score over the best topic's;
* chains: BCG shortest paths with their mapped evidence (``shortest_path`` mode), scored 1 / (1 + rank S);
* evidence_rank: the 400 best candidates by graph score with those scores (for hybrid), the seeds as
  entity ids, plus its own 50 dense candidates, tool-default methods (cosine + fragment). K is the cut (no
  word budget); near-duplicates the tool folded into a kept passage are credited at its rank
  (evals/adapters.py ``with_twins``; ``evigraph-strict-ids`` scores without).

Ablations switch a stage off, change the walk, add HyKGE chains' edge evidence, or rank with one method.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from evals.adapters import chain_evidence, find_chains, link_entities, rank_evidence, walk_topics
from graphs.kb import KnowledgeBase
from tools.evidence_rank import RankMethod

MAX_SEEDS = 20
MAX_ANCHORS = 8
MAX_CANDIDATES = 400


@dataclass(frozen=True)
class EviGraphConfig:
    walk: bool = True
    walk_mode: str = "ppr"
    path_evidence: bool = True
    chain_edges: bool = False
    vector_k: int = 50
    methods: tuple[RankMethod, ...] | None = None
    n_t: int = 10
    hybrid_weight: float | None = None
    credit_twins: bool = True
    lexical: bool = True
    question_index: bool = True
    search_encoder: bool = True


def _merge(into: dict[str, float], scores: dict[str, float]) -> None:
    for evidence_id, score in scores.items():
        into[evidence_id] = max(into.get(evidence_id, 0.0), score)


class EviGraphRetriever:
    """The four tools in sequence; ``config`` switches stages for ablations."""

    def __init__(self, kb: KnowledgeBase, name: str, description: str, config: EviGraphConfig) -> None:
        self.kb, self.name, self.description, self.config = kb, name, description, config

    def candidates(self, question: str) -> tuple[list[str], dict[str, float]]:
        """(seed entity ids, graph candidates with scores), before ranking."""
        seeds = link_entities(self.kb, question).positive[:MAX_SEEDS]
        graph: dict[str, float] = {}
        if self.config.walk and seeds:
            _merge(
                graph,
                walk_topics(self.kb, seeds, n_t=self.config.n_t, mode=self.config.walk_mode).evidence_scores,
            )
        anchors = seeds[:MAX_ANCHORS]
        if len(anchors) >= 2 and self.config.path_evidence:
            hits = find_chains(self.kb, anchors, mode="shortest_path", max_evidence=20)
            _merge(graph, {evidence_id: 1.0 / (1.0 + rank) for evidence_id, rank in hits.path_evidence})
        if len(anchors) >= 2 and self.config.chain_edges:
            _merge(graph, chain_evidence(self.kb, find_chains(self.kb, anchors, mode="chains").chains))
        best = sorted(graph, key=lambda i: (-graph[i], i))[:MAX_CANDIDATES]
        return seeds, {i: graph[i] for i in best}

    def retrieve(self, question: str, k: int) -> list[str]:
        seeds, graph = self.candidates(question)
        if not graph and self.config.vector_k == 0:
            return []
        ranked = rank_evidence(
            self.kb,
            question,
            list(graph),
            top_k=k,
            graph_scores=graph,
            entity_ids=seeds,
            methods=self.config.methods,
            vector_k=self.config.vector_k,
            hybrid_weight=self.config.hybrid_weight,
            credit_twins=self.config.credit_twins,
            lexical=self.config.lexical,
            question_index=self.config.question_index,
            search_encoder=self.config.search_encoder,
        )
        return [evidence_id for evidence_id, _ in ranked][:k]


ABLATIONS: dict[str, tuple[str, EviGraphConfig]] = {
    "evigraph": (
        "the agent's offline round: ner_link → PPR walk → BCG path evidence → evidence_rank (+50 dense)",
        EviGraphConfig(),
    ),
    "evigraph-no-walk": ("without the hypergraph walk", EviGraphConfig(walk=False)),
    "evigraph-no-graph": (
        "no graph candidates (no walk, no path evidence): dense + BM25 + question index, same fusion",
        EviGraphConfig(walk=False, path_evidence=False),
    ),
    "evigraph-base-encoder": (
        "dense search and score with the base encoder's evidence vectors, not the trained search encoder",
        EviGraphConfig(search_encoder=False),
    ),
    "evigraph-no-lexical": ("without BM25 (candidates and score)", EviGraphConfig(lexical=False)),
    "evigraph-no-question": ("without the question index", EviGraphConfig(question_index=False)),
    "evigraph-before-fusion": (
        "the previous default: no BM25, no question index (fragment gate kept)",
        EviGraphConfig(lexical=False, question_index=False),
    ),
    "evigraph-no-chains": ("without reasoning-chain (path) evidence", EviGraphConfig(path_evidence=False)),
    "evigraph-graph-only": ("graph candidates only (no dense candidates)", EviGraphConfig(vector_k=0)),
    "evigraph-random-walk": ("seeded random walks instead of PPR", EviGraphConfig(walk_mode="random_walk")),
    "evigraph-strict-ids": (
        "twins not credited: a near-duplicate evidence_rank folded into a kept passage counts as missed",
        EviGraphConfig(credit_twins=False),
    ),
    "evigraph-chain-edges": (
        "plus passages naming both ends of an edge of a HyKGE chain",
        EviGraphConfig(chain_edges=True),
    ),
}
RANK_ABLATIONS: Sequence[tuple[str, tuple[RankMethod, ...]]] = (
    ("cosine", ("cosine",)),
    ("fragment", ("fragment",)),
    ("idep", ("idep",)),
    ("hybrid", ("cosine", "fragment", "hybrid")),
    ("mmr", ("cosine", "fragment", "mmr")),
    ("offline-idep", ("cosine", "fragment", "idep")),
    ("session1-default", ("cosine", "fragment", "idep", "mmr")),
)
for _label, _methods in RANK_ABLATIONS:
    ABLATIONS[f"evigraph-rank-{_label}"] = (
        f"full candidates, evidence_rank methods = {'+'.join(_methods)}",
        EviGraphConfig(methods=_methods),
    )
