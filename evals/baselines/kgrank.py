"""KG-Rank (seed 004): one-hop triples of the question entities, ranked by similarity with MMR, then the
evidence of the top triples.

Offline adaptations, stated: a triple's vector is the normalised sum of its head and tail entity vectors
from the KB's entity index (no per-query model call for hundreds of triples; the relation name is left
out of the vector); answer expansion and the MedCPT cross-encoder need models we do not run. The MMR rule
is KG-Rank's ``sim(q, r) − w · mean_sim(r, selected)``, ``w = 0.1 + 0.01·n`` (tools.ranking.mmr_order).
Evidence of a triple = passages naming both its ends, then passages of its non-question end; within a
triple by cosine with the question; triples in MMR order.
"""

from __future__ import annotations

import numpy as np

from evals.adapters import link_entities
from evals.baselines.base import EvidencePool
from graphs.kb import KnowledgeBase
from tools.ranking import mmr_order

TRIPLES_PER_ENTITY = 100
TOP_TRIPLES = 10
EVIDENCE_PER_ENTITY = 200


class KGRankRetriever:
    name = "kgrank"
    description = "one-hop triples ranked by similarity + MMR (KG-Rank), evidence of the top triples"

    def __init__(self, kb: KnowledgeBase, pool: EvidencePool) -> None:
        self.kb, self.pool = kb, pool

    def retrieve(self, question: str, k: int) -> list[str]:
        seeds = link_entities(self.kb, question).positive
        if not seeds:
            return []
        relations = self.kb.store.neighbors(seeds, "both", limit_per_node=TRIPLES_PER_ENTITY)
        entity_vectors = self.kb.vectors.get_vectors(
            "entities", sorted({e for r in relations for e in (r.head, r.tail)})
        )
        triples = [r for r in relations if r.head in entity_vectors and r.tail in entity_vectors]
        if not triples:
            return []
        matrix = np.stack([entity_vectors[r.head] + entity_vectors[r.tail] for r in triples]).astype(
            np.float64
        )
        matrix /= np.maximum(np.linalg.norm(matrix, axis=1, keepdims=True), 1e-9)
        query = np.asarray(self.kb.embedder.embed_one(question), dtype=np.float64)
        picked, _ = mmr_order(matrix @ query, matrix, TOP_TRIPLES, [r.id for r in triples])
        chosen = [triples[p] for p in picked]
        ends = sorted({e for r in chosen for e in (r.head, r.tail)})
        mentions = {e: set(v) for e, v in self.kb.store.entity_evidence(ends, EVIDENCE_PER_ENTITY).items()}
        seed_set = set(seeds)
        ordered: list[str] = []
        seen: set[str] = set()
        for relation in chosen:
            both = mentions.get(relation.head, set()) & mentions.get(relation.tail, set())
            other = relation.tail if relation.head in seed_set else relation.head
            for group in (both, mentions.get(other, set()) - both):
                fresh = sorted(group - seen)
                cosine = self.pool.cosine(query.astype(np.float32), fresh)
                for evidence_id in sorted(fresh, key=lambda i: (-cosine.get(i, -1.0), i)):
                    ordered.append(evidence_id)
                    seen.add(evidence_id)
            if len(ordered) >= k:
                break
        return ordered[:k]
