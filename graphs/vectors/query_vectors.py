"""Remembered query-side vectors: a consult embeds the same texts again and again.

Why: every retrieval round of a consult re-ranks with the same question, its fragments and often the same
candidate terms, and a follow-up turn repeats most of them; each costs an encoder pass (tens of ms for a
case vignette on 2 cores). The knowledge base's embedder is wrapped in :class:`RememberingEmbedder`, which
embeds only texts it has not seen recently and returns the stored copies of the rest. Vectors are
deterministic per text, so a remembered vector is exactly the one a new encoder pass would give.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Sequence

import numpy as np

from graphs.vectors.embedding import Embedder, check_texts

DEFAULT_CAPACITY = 4096
"""Texts remembered (least recently used dropped first): 4,096 × 384 float32 ≈ 6 MB."""


class RememberingEmbedder:
    """An :class:`~graphs.vectors.embedding.Embedder` keeping the vectors of the last ``capacity`` texts."""

    def __init__(self, inner: Embedder, capacity: int = DEFAULT_CAPACITY) -> None:
        if capacity < 1:
            raise ValueError(f"capacity must be >= 1, got {capacity}")
        self.inner = inner
        self.name = inner.name
        self.dim = inner.dim
        self.capacity = capacity
        self.hits = 0
        self.misses = 0
        self._vectors: OrderedDict[str, np.ndarray] = OrderedDict()
        self._lock = threading.Lock()

    def embed(self, texts: Sequence[str], *, batch_size: int = 64) -> np.ndarray:
        items = check_texts(texts)
        with self._lock:
            known = {t: self._vectors[t] for t in dict.fromkeys(items) if t in self._vectors}
            for text in known:
                self._vectors.move_to_end(text)
        missing = [t for t in dict.fromkeys(items) if t not in known]
        if missing:
            fresh = self.inner.embed(missing, batch_size=batch_size)
            computed = {t: fresh[i] for i, t in enumerate(missing)}
            with self._lock:
                for text, vector in computed.items():
                    self._vectors[text] = vector
                    self._vectors.move_to_end(text)
                while len(self._vectors) > self.capacity:
                    self._vectors.popitem(last=False)
            known.update(computed)
        with self._lock:
            self.hits += len(items) - len(missing)
            self.misses += len(missing)
        if not items:
            return np.zeros((0, self.dim), dtype=np.float32)
        return np.stack([known[t] for t in items]).astype(np.float32, copy=False)

    def forget(self) -> None:
        """Drop every remembered vector (a benchmark that compares systems starts each one cold)."""
        with self._lock:
            self._vectors.clear()

    def embed_one(self, text: str) -> np.ndarray:
        return self.embed([text])[0]

    def __len__(self) -> int:
        return len(self._vectors)
