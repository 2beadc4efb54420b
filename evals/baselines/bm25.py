"""BM25 over the KB's evidence units (``bm25s``; k1 = 1.2, b = 0.75, as the PROVENANCE §4 reference).

Tokens: lower-cased alphanumeric runs minus a small English stop list — the reference's tokenizer, so
that this baseline can be checked against its numbers on the full BioASQ pool. Units sharing no token
with the question are not returned.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

import bm25s
import numpy as np

from evals.baselines.base import EvidencePool

_TOKEN = re.compile(r"[a-z0-9]+")
STOP_WORDS = frozenset(
    [
        "a",
        "about",
        "an",
        "and",
        "are",
        "as",
        "at",
        "be",
        "been",
        "but",
        "by",
        "can",
        "could",
        "did",
        "do",
        "does",
        "for",
        "from",
        "had",
        "has",
        "have",
        "how",
        "i",
        "if",
        "in",
        "into",
        "is",
        "it",
        "its",
        "may",
        "of",
        "on",
        "or",
        "should",
        "such",
        "than",
        "that",
        "the",
        "their",
        "them",
        "then",
        "there",
        "these",
        "they",
        "this",
        "those",
        "to",
        "was",
        "were",
        "what",
        "when",
        "where",
        "which",
        "while",
        "who",
        "whom",
        "why",
        "will",
        "with",
        "would",
        "you",
        "your",
    ]
)
K1 = 1.2
B = 0.75


def tokenize(text: str) -> list[str]:
    return [t for t in _TOKEN.findall(text.lower()) if t not in STOP_WORDS]


class BM25Index:
    """A ``bm25s`` index over (id, text) pairs, with deterministic top-k (score, then id)."""

    def __init__(self, ids: Sequence[str], texts: Sequence[str], k1: float = K1, b: float = B) -> None:
        self.ids = list(ids)
        self.model = bm25s.BM25(k1=k1, b=b)
        self.model.index([tokenize(t) or [""] for t in texts], show_progress=False)

    def search(self, query: str, k: int) -> list[tuple[str, float]]:
        terms = tokenize(query)
        if not terms or not self.ids:
            return []
        scores = np.asarray(self.model.get_scores(terms), dtype=np.float64)
        positive = np.flatnonzero(scores > 0)
        order = sorted(positive.tolist(), key=lambda i: (-scores[i], self.ids[i]))[:k]
        return [(self.ids[i], float(scores[i])) for i in order]


class BM25Retriever:
    name = "bm25"
    description = "BM25 (bm25s, k1 1.2, b 0.75) over title + passage of every evidence unit"

    def __init__(self, pool: EvidencePool) -> None:
        self.index = BM25Index(pool.ids, pool.texts)

    def retrieve(self, question: str, k: int) -> list[str]:
        return [i for i, _ in self.index.search(question, k)]
