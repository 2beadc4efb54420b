"""Remembered query-side vectors: a consult embeds the same texts again and again.

Why: every retrieval round of a consult re-ranks with the same question, its fragments and often the same
candidate terms, and a follow-up turn repeats most of them; each costs an encoder pass (tens of ms for a
case vignette on 2 cores). The knowledge base's embedder is wrapped in :class:`RememberingEmbedder`, which
embeds only texts it has not seen recently and returns the stored copies of the rest. Vectors are
deterministic per text, so a remembered vector is exactly the one a new encoder pass would give.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from graphs.vectors.batch_memo import BatchMemo
from graphs.vectors.embedding import Embedder, check_texts

DEFAULT_CAPACITY = 4096
"""Texts remembered (least recently used dropped first): 4,096 × 384 float32 ≈ 6 MB."""


class RememberingEmbedder:
    """An :class:`~graphs.vectors.embedding.Embedder` keeping the vectors of the last ``capacity`` texts."""

    def __init__(self, inner: Embedder, capacity: int = DEFAULT_CAPACITY) -> None:
        self.inner = inner
        self.name = inner.name
        self.dim = inner.dim
        self._memo: BatchMemo[str, np.ndarray] = BatchMemo(capacity)
        self.capacity = capacity

    @property
    def hits(self) -> int:
        return self._memo.hits

    @property
    def misses(self) -> int:
        return self._memo.misses

    def embed(self, texts: Sequence[str], *, batch_size: int = 64) -> np.ndarray:
        items = check_texts(texts)
        if not items:
            return np.zeros((0, self.dim), dtype=np.float32)

        def encode(missing: list[str]) -> list[np.ndarray]:
            return list(self.inner.embed(missing, batch_size=batch_size))

        return np.stack(self._memo.get_many(items, encode)).astype(np.float32, copy=False)

    def forget(self) -> None:
        """Drop every remembered vector (a benchmark that compares systems starts each one cold)."""
        self._memo.clear()

    def embed_one(self, text: str) -> np.ndarray:
        return self.embed([text])[0]

    def __len__(self) -> int:
        return len(self._memo)
