"""VectorRAG: dense top-K over the evidence vectors (exact cosine, the KB's own index and embedder)."""

from __future__ import annotations

from graphs.kb import KnowledgeBase
from graphs.vectors.search_encoder import SEARCH_COLLECTION


class VectorRetriever:
    name = "vector"
    description = "dense retrieval: cosine of the question embedding with every evidence vector"

    def __init__(self, kb: KnowledgeBase) -> None:
        self.kb = kb

    def retrieve(self, question: str, k: int) -> list[str]:
        query = self.kb.embedder.embed_one(question)
        return [i for i, _ in self.kb.vectors.search("evidence", query, k)]


class SearchVectorRetriever:
    """Dense top-K over the search encoder's evidence vectors (graphs/vectors/search_encoder.py): the dense
    channel evidence_rank uses, alone, so the fine-tuned encoder can be compared with the base one."""

    name = "search-vector"
    description = "dense retrieval with the trained search encoder's query and evidence vectors"

    def __init__(self, kb: KnowledgeBase) -> None:
        self.kb = kb
        if kb.searcher is None:
            raise ValueError(f"search-vector needs a KB with search-encoder vectors: {kb.search_warning}")

    def retrieve(self, question: str, k: int) -> list[str]:
        searcher = self.kb.searcher
        assert searcher is not None  # checked when built
        query = searcher.embed_one(question)
        return [i for i, _ in self.kb.vectors.search(SEARCH_COLLECTION, query, k)]
