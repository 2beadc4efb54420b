"""What every retrieval system shares: the ``Retriever`` shape and the KB's evidence pool.

A system answers ``retrieve(question, k) -> [evidence id, ...]`` (best first, at most ``k``) on one
:class:`~graphs.kb.KnowledgeBase`. The pool lists every evidence unit of the KB once, with the text the
embedder saw (title + passage, graphs.building.embed_stage.evidence_text) and its vector, for BM25 indexing
and cluster spread.
"""

from __future__ import annotations

from functools import cached_property
from typing import Protocol

import numpy as np

from graphs.building.embed_stage import evidence_text
from graphs.kb import KnowledgeBase
from graphs.model.schema import Evidence

BATCH = 900


class Retriever(Protocol):
    name: str
    description: str

    def retrieve(self, question: str, k: int) -> list[str]: ...


class EvidencePool:
    """Every evidence unit of a KB, enumerated through the public store and vector-index interfaces."""

    def __init__(self, kb: KnowledgeBase) -> None:
        self.kb = kb

    @cached_property
    def ids(self) -> list[str]:
        """All evidence ids, sorted. The vector index has no "list ids" call, so search with limit = count."""
        count = self.kb.vectors.count("evidence")
        if count == 0:
            return []
        probe = np.zeros(self.dim, dtype=np.float32)
        probe[0] = 1.0
        return sorted(i for i, _ in self.kb.vectors.search("evidence", probe, count))

    @cached_property
    def dim(self) -> int:
        return int(self.kb.embedder.dim)

    @cached_property
    def records(self) -> dict[str, Evidence]:
        """Every evidence record by id (read in batches)."""
        out: dict[str, Evidence] = {}
        for start in range(0, len(self.ids), BATCH):
            out.update(self.kb.store.get_evidence(self.ids[start : start + BATCH]))
        return out

    @cached_property
    def titles(self) -> dict[str, str]:
        """Document id → title, for every document that has evidence."""
        document_ids = sorted({r.document_id for r in self.records.values()})
        out: dict[str, str] = {}
        for start in range(0, len(document_ids), BATCH):
            out.update(
                {
                    d: doc.title
                    for d, doc in self.kb.store.get_documents(document_ids[start : start + BATCH]).items()
                }
            )
        return out

    @cached_property
    def by_document(self) -> dict[str, list[str]]:
        """Document id → its evidence ids in text order."""
        out: dict[str, list[str]] = {}
        for evidence_id in sorted(
            self.records, key=lambda i: (self.records[i].document_id, self.records[i].start)
        ):
            out.setdefault(self.records[evidence_id].document_id, []).append(evidence_id)
        return out

    @cached_property
    def texts(self) -> list[str]:
        """Title + passage of each id, in :attr:`ids` order (what BM25 indexes and the embedder saw)."""
        return [
            evidence_text(self.records[i], self.titles.get(self.records[i].document_id, "")) for i in self.ids
        ]

    @cached_property
    def vectors(self) -> np.ndarray:
        """(n, d) float32 evidence vectors in :attr:`ids` order."""
        found = self.kb.vectors.get_vectors("evidence", self.ids)
        return np.stack([np.asarray(found[i], dtype=np.float32) for i in self.ids])

    def cosine(self, question_vector: np.ndarray, evidence_ids: list[str]) -> dict[str, float]:
        """Cosine of stored evidence vectors with a query vector (vectors are L2-normalised)."""
        found = self.kb.vectors.get_vectors("evidence", evidence_ids)
        return {i: float(np.dot(v, question_vector)) for i, v in found.items()}


def top_k(scores: dict[str, float], k: int) -> list[str]:
    """Ids by score (descending), ties by id: deterministic."""
    return [i for i, _ in sorted(scores.items(), key=lambda item: (-item[1], item[0]))[:k]]
