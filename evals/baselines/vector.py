"""VectorRAG: dense top-K over the evidence vectors (exact cosine, the KB's own index and embedder)."""

from __future__ import annotations

from graphs.kb import KnowledgeBase


class VectorRetriever:
    name = "vector"
    description = "dense retrieval: cosine of the question embedding with every evidence vector"

    def __init__(self, kb: KnowledgeBase) -> None:
        self.kb = kb

    def retrieve(self, question: str, k: int) -> list[str]:
        query = self.kb.embedder.embed_one(question)
        return [i for i, _ in self.kb.vectors.search("evidence", query, k)]
