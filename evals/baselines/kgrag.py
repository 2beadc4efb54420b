"""KGRAG (the HyKGE paper's KG baseline): question entities → one-hop neighbourhood → their evidence.

Ranking, since the KG itself has no passage order: evidence naming more question entities first (2 points
each), then more neighbour entities (1 point each); ties by cosine with the question. That keeps the
method a KG retriever — the graph decides which passages are candidates and their primary order — while
the tie-break stops an arbitrary id order from deciding among equals.
"""

from __future__ import annotations

from evals.adapters import link_entities
from evals.baselines.base import EvidencePool, top_k
from graphs.kb import KnowledgeBase

NEIGHBOURS_PER_ENTITY = 50
EVIDENCE_PER_ENTITY = 200
QUESTION_WEIGHT = 2.0


class KGRAGRetriever:
    name = "kgrag"
    description = (
        "linked entities + one-hop neighbours → evidence naming them (entity overlap, cosine tie-break)"
    )

    def __init__(self, kb: KnowledgeBase, pool: EvidencePool) -> None:
        self.kb, self.pool = kb, pool

    def retrieve(self, question: str, k: int) -> list[str]:
        seeds = link_entities(self.kb, question).positive
        if not seeds:
            return []
        neighbours: set[str] = set()
        for relation in self.kb.store.neighbors(seeds, "both", limit_per_node=NEIGHBOURS_PER_ENTITY):
            neighbours.update((relation.head, relation.tail))
        neighbours -= set(seeds)
        mentions = self.kb.store.entity_evidence(sorted({*seeds, *neighbours}), EVIDENCE_PER_ENTITY)
        graph: dict[str, float] = {}
        for entity, evidence_ids in mentions.items():
            weight = QUESTION_WEIGHT if entity in seeds else 1.0
            for evidence_id in evidence_ids:
                graph[evidence_id] = graph.get(evidence_id, 0.0) + weight
        if not graph:
            return []
        cosine = self.pool.cosine(self.kb.embedder.embed_one(question), list(graph))
        return top_k({i: graph[i] + 0.5 * (1.0 + cosine.get(i, -1.0)) / 2.0 for i in graph}, k)
