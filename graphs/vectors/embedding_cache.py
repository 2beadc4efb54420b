"""A content-addressed embedding cache, and an embedder that reads through it.

Why: on a 2-core machine the MiniLM encoder embeds about 30 passages/s, so embedding the default corpus
(17 k–40 k evidence units plus 31 k entity names) takes 10–25 minutes — far over the 5-minute
first-consult budget. The vectors depend only on (embedder name, text), so they are computed once by
``data/derive_embeddings.py`` with the same model, shipped in ``data/embeddings/``, and looked up by a hash
of the exact text at build time; anything not in a cache (a user's own documents, another backend) is
embedded for real and added to a per-user cache so that rebuilds stay fast. Vectors are stored as float16
(cosine error < 1e-3) and re-normalised on read.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from graphs.vectors.embedding import Embedder

KEY_BYTES = 12


def text_key(embedder_name: str, text: str) -> bytes:
    """12-byte key of (embedder, text): collisions are negligible at millions of texts."""
    return hashlib.sha1(f"{embedder_name}\x1f{text}".encode()).digest()[:KEY_BYTES]


def _key(stored: bytes) -> bytes:
    """A key as read back from the ``S12`` array, with the trailing zero bytes numpy strips restored.

    Why: numpy's fixed-width bytes drop trailing NULs, so the 1 in 256 keys ending in ``\x00`` never matched
    again — 94 of 24 k shipped literature vectors were silently re-embedded (and as many of the default's).
    """
    return bytes(stored).ljust(KEY_BYTES, b"\0")


class EmbeddingCache:
    """Keys (``S12`` byte strings) → float16 vectors, in one ``.npz`` file."""

    def __init__(self, path: Path, dim: int = 384) -> None:
        self.path = path
        self.dim = dim
        self._index: dict[bytes, int] = {}
        self._vectors = np.zeros((0, dim), dtype=np.float16)
        self._new_keys: list[bytes] = []
        self._new_vectors: list[np.ndarray] = []
        if path.exists():
            try:
                with np.load(path, allow_pickle=False) as z:
                    keys, vectors = z["keys"], z["vectors"]
            except (OSError, ValueError, KeyError):
                return  # an unreadable cache is only a slower build, never an error
            if vectors.shape[1:] == (dim,):
                self._vectors = vectors
                self._index = {_key(k): i for i, k in enumerate(keys.tolist())}

    def __len__(self) -> int:
        return len(self._index)

    def get(self, key: bytes) -> np.ndarray | None:
        i = self._index.get(key)
        if i is None:
            return None
        if i < 0:  # put since the last save: its vector waits in the new list (row -1 - i)
            return self._new_vectors[-1 - i].astype(np.float32)
        return self._vectors[i].astype(np.float32)

    def put(self, keys: Sequence[bytes], vectors: np.ndarray) -> None:
        for k, v in zip(keys, vectors, strict=True):
            if k not in self._index:
                self._index[k] = -1 - len(self._new_keys)  # a new key: -1 - its place in the new list
                self._new_keys.append(k)
                self._new_vectors.append(np.asarray(v, dtype=np.float16))

    def save(self) -> None:
        """Merge new vectors into the file atomically (temp file + rename)."""
        if not self._new_keys:
            return
        old_keys = [k for k, i in self._index.items() if i >= 0]
        old_rows = [self._index[k] for k in old_keys]
        keys = np.array(old_keys + self._new_keys, dtype="S12")
        vectors = np.concatenate([self._vectors[old_rows], np.stack(self._new_vectors)]).astype(np.float16)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        tmp = self.path.with_suffix(f".tmp{os.getpid()}.npz")
        np.savez(tmp, keys=keys, vectors=vectors)
        tmp.replace(self.path)
        self._vectors = vectors
        self._index = {_key(k): i for i, k in enumerate(keys.tolist())}
        self._new_keys, self._new_vectors = [], []


class CachedEmbedder:
    """An :class:`Embedder` that serves cached vectors and embeds only the misses."""

    def __init__(self, inner: Embedder, read_only: Sequence[EmbeddingCache], writable: EmbeddingCache | None):
        self.inner = inner
        self.name = inner.name
        self.dim = inner.dim
        self.caches = [*read_only, *([writable] if writable else [])]
        self.writable = writable
        self.hits = 0
        self.misses = 0

    def embed(self, texts: Sequence[str], *, batch_size: int = 64) -> np.ndarray:
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        keys = [text_key(self.name, t) for t in texts]
        missing: list[int] = []
        for i, k in enumerate(keys):
            vec = next((v for c in self.caches if (v := c.get(k)) is not None), None)
            if vec is None:
                missing.append(i)
            else:
                out[i] = vec / max(float(np.linalg.norm(vec)), 1e-9)
        self.hits += len(texts) - len(missing)
        self.misses += len(missing)
        if missing:
            fresh = self.inner.embed([texts[i] for i in missing], batch_size=batch_size)
            out[missing] = fresh
            if self.writable is not None:
                self.writable.put([keys[i] for i in missing], fresh)
        return out

    def embed_one(self, text: str) -> np.ndarray:
        return self.embed([text])[0]

    def save(self) -> None:
        if self.writable is not None:
            self.writable.save()
