"""The KB's query-side embedder remembers recent texts: same vectors as a fresh encoder pass, fewer passes."""

from __future__ import annotations

import numpy as np
import pytest

from graphs.kb import KnowledgeBase
from graphs.vectors.embedding import get_embedder
from graphs.vectors.query_vectors import RememberingEmbedder


def test_remembered_vectors_equal_fresh_ones_and_only_new_texts_are_encoded() -> None:
    inner = get_embedder("onnx")
    remembering = RememberingEmbedder(inner, capacity=3)
    texts = ["gout treatment", "uric acid", "gout treatment"]
    first = remembering.embed(texts)
    assert first.shape == (3, inner.dim) and first.dtype == np.float32
    np.testing.assert_array_equal(first, inner.embed(texts))  # duplicates come back in place
    assert (remembering.hits, remembering.misses) == (1, 2)  # the repeated text was encoded once
    again = remembering.embed(["uric acid", "colchicine"])
    np.testing.assert_array_equal(again, inner.embed(["uric acid", "colchicine"]))
    assert (remembering.hits, remembering.misses) == (2, 3)
    remembering.embed(["allopurinol"])  # a 4th text: the least recently used one ("gout treatment") goes
    assert len(remembering) == 3
    remembering.embed(["gout treatment"])
    assert remembering.misses == 5
    assert remembering.embed([]).shape == (0, inner.dim)
    np.testing.assert_array_equal(remembering.embed_one("uric acid"), inner.embed_one("uric acid"))
    remembering.forget()
    assert len(remembering) == 0
    remembering.embed(["uric acid"])
    assert remembering.misses == 7  # forgotten: encoded again (embed_one above was the 6th miss)
    with pytest.raises(TypeError, match="sequence of texts"):
        remembering.embed("uric acid")  # type: ignore[arg-type]  # a bare string is not three-letter texts
    with pytest.raises(ValueError, match="capacity"):
        RememberingEmbedder(inner, capacity=0)


def test_the_knowledge_base_remembers_its_query_vectors(slice_kb: KnowledgeBase) -> None:
    embedder = slice_kb.embedder
    assert isinstance(embedder, RememberingEmbedder) and embedder.name == embedder.inner.name
    question = "Which medicines lower uric acid in patients with recurrent gout attacks?"
    misses = embedder.misses
    slice_kb.embed([question])
    slice_kb.embed([question])
    assert embedder.misses == misses + 1
