"""The content-addressed embedding cache: a vector put before a save is served as itself.

Regression: a key put since the last save was reserved as row -1, so a text that came back in a later
batch of the same build (MedQuAD repeats questions and passages across sources) got the *last saved row*
of the cache — another text's vector. 453 of 5,290 question vectors of the default KB were wrong before
the fix. Real encoder, real cache files.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from graphs.vectors.embedding import get_embedder
from graphs.vectors.embedding_cache import CachedEmbedder, EmbeddingCache, text_key


def test_a_text_repeated_across_batches_gets_its_own_vector(tmp_path: Path) -> None:
    inner = get_embedder("onnx")
    path = tmp_path / "cache.npz"
    seeded = CachedEmbedder(inner, [], EmbeddingCache(path, inner.dim))
    seeded.embed(["an unrelated sentence about the weather"])
    seeded.save()  # the cache file now has one saved row: what the old code served for a pending key

    embedder = CachedEmbedder(inner, [], EmbeddingCache(path, inner.dim))
    texts = ["What are the treatments for Gout ?", "What is (are) Breast Cancer ?"]
    first = embedder.embed(texts)
    again = embedder.embed(list(reversed(texts)))  # a later batch, before any save
    assert embedder.misses == 2 and embedder.hits == 2
    np.testing.assert_allclose(again[::-1], first, atol=2e-3)  # float16 in the cache
    truth = inner.embed(texts)
    assert float(np.dot(again[1], truth[0])) == pytest.approx(1.0, abs=1e-3)

    embedder.save()
    reopened = EmbeddingCache(path, inner.dim)
    assert len(reopened) == 3
    vector = reopened.get(text_key(inner.name, texts[1]))
    assert vector is not None and float(np.dot(vector, truth[1])) == pytest.approx(1.0, abs=1e-3)


def test_a_key_ending_in_zero_bytes_is_found_after_a_save_and_a_reload(tmp_path: Path) -> None:
    """numpy's S12 strips trailing NULs on read: 1 key in 256 (94 of the 24 k literature vectors) missed."""
    keys = [b"abcdefghij\x00\x00", b"abcdefghijk\x00", b"abcdefghijkl"]
    vectors = np.eye(3, 384, dtype=np.float32)
    cache = EmbeddingCache(tmp_path / "c.npz")
    cache.put(keys, vectors)
    cache.save()
    for reopened in (cache, EmbeddingCache(tmp_path / "c.npz")):
        for i, key in enumerate(keys):
            found = reopened.get(key)
            assert found is not None and int(np.argmax(found)) == i
