"""BCG graph-based retriever (seed 002): shortest paths between the question's entities, evidence mapped
to the path and prioritised by Algorithm 1 (tools.reasoning_chain ``shortest_path`` mode), and its hybrid
with embedding similarity (§4.3: min–max rescale both scores per query, average, rank; only passages the
graph retrieved are eligible, as in the paper).
"""

from __future__ import annotations

import numpy as np

from evals.adapters import find_chains, link_entities
from evals.baselines.base import EvidencePool, top_k
from graphs.kb import KnowledgeBase
from tools.ranking import minmax

PATH_EVIDENCE = 200
"""Evidence the path mapping returns (the tool's maximum): the hybrid needs more than K to rerank."""


class BCGRetriever:
    name = "bcg"
    description = (
        "shortest paths between question entities, evidence by BCG Algorithm 1 (recency/coverage Pareto)"
    )

    def __init__(self, kb: KnowledgeBase) -> None:
        self.kb = kb

    def retrieve(self, question: str, k: int) -> list[str]:
        seeds = link_entities(self.kb, question).positive
        hits = find_chains(self.kb, seeds, mode="shortest_path", max_evidence=max(k, 1))
        return [evidence_id for evidence_id, _ in hits.path_evidence][:k]


class BCGHybridRetriever:
    name = "bcg-hybrid"
    description = "BCG hybrid: mean of min-max graph rank score and min-max cosine over the path's evidence"

    def __init__(self, kb: KnowledgeBase, pool: EvidencePool) -> None:
        self.kb, self.pool = kb, pool

    def retrieve(self, question: str, k: int) -> list[str]:
        seeds = link_entities(self.kb, question).positive
        hits = find_chains(self.kb, seeds, mode="shortest_path", max_evidence=PATH_EVIDENCE)
        if not hits.path_evidence:
            return []
        ids = [evidence_id for evidence_id, _ in hits.path_evidence]
        graph = minmax(-np.array([rank for _, rank in hits.path_evidence], dtype=np.float64))
        cosine_of = self.pool.cosine(self.kb.embedder.embed_one(question), ids)
        semantic = minmax(np.array([cosine_of.get(i, -1.0) for i in ids]))
        combined = (graph + semantic) / 2.0
        return top_k({i: float(s) for i, s in zip(ids, combined, strict=True)}, k)
