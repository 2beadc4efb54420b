"""The matrix index and Qdrant (local mode, the real qdrant-client engine) give the same exact answers."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from graphs.building.builder import build_kb
from graphs.kb import KnowledgeBase
from graphs.vectors.vector_index import MatrixVectorIndex, QdrantVectorIndex
from tests.tiny_kb import tiny_config


def _vectors(n: int, dim: int = 384, seed: int = 0) -> np.ndarray:
    v = np.random.default_rng(seed).normal(size=(n, dim)).astype(np.float32)
    return v / np.linalg.norm(v, axis=1, keepdims=True)


def test_matrix_and_qdrant_local_agree(tmp_path: Path) -> None:
    ids = [f"E:{i:03d}" for i in range(60)]
    vecs = _vectors(60)
    matrix = MatrixVectorIndex(tmp_path / "m")
    qdrant = QdrantVectorIndex(path=tmp_path / "q", prefix="t")
    for index in (matrix, qdrant):
        index.upsert("evidence", ids, vecs)
        index.delete("evidence", ids[:5])
        index.flush()
    query = _vectors(1, seed=1)[0]
    a, b = matrix.search("evidence", query, 10), qdrant.search("evidence", query, 10)
    assert [i for i, _ in a] == [i for i, _ in b]
    assert [s for _, s in a] == pytest.approx([s for _, s in b], abs=1e-5)
    only = ids[10:20]
    assert [i for i, _ in matrix.search("evidence", query, 3, only)] == [
        i for i, _ in qdrant.search("evidence", query, 3, only)
    ]
    assert matrix.count("evidence") == qdrant.count("evidence") == 55
    got = qdrant.get_vectors("evidence", ["E:007"])["E:007"]
    assert np.allclose(got, vecs[7], atol=1e-6)
    many = matrix.search_many("evidence", _vectors(3, seed=2), 4)
    single = [matrix.search("evidence", q, 4) for q in _vectors(3, seed=2)]
    assert [[i for i, _ in hits] for hits in many] == [[i for i, _ in hits] for hits in single]
    assert [s for hits in many for _, s in hits] == pytest.approx([s for hits in single for _, s in hits])
    qdrant.close()


def test_matrix_index_survives_reopen(tmp_path: Path) -> None:
    index = MatrixVectorIndex(tmp_path)
    index.upsert("entities", ["a", "b"], _vectors(2))
    index.flush()
    again = MatrixVectorIndex(tmp_path)
    assert again.count("entities") == 2
    assert again.search("entities", _vectors(2)[1], 1)[0][0] == "b"


def test_kb_built_with_qdrant_local_vectors_answers_like_the_matrix_kb(tmp_path: Path) -> None:
    build_kb(tmp_path / "m", tiny_config(tmp_path / "src"))
    build_kb(tmp_path / "q", tiny_config(tmp_path / "src", vector_backend="qdrant-local"))
    m, q = KnowledgeBase.open(tmp_path / "m"), KnowledgeBase.open(tmp_path / "q")
    assert q.manifest.data["vector_backend"] == "qdrant-local"
    query = m.embedder.embed_one("insulin for type 1 diabetes")
    for collection in ("evidence", "entities", "topics"):
        assert [i for i, _ in m.vectors.search(collection, query, 5)] == [
            i for i, _ in q.vectors.search(collection, query, 5)
        ]
    m.close()
    q.close()


def test_batched_upserts_updates_and_deletes_read_back_exactly(tmp_path: Path) -> None:
    rng = np.random.default_rng(3)
    vectors = rng.standard_normal((10, 384)).astype(np.float32)
    index = MatrixVectorIndex(tmp_path)
    index.upsert("c", ["a", "b", "c"], vectors[:3])
    index.upsert("c", ["d", "e", "d"], vectors[3:6])  # a repeated new id: the last vector wins
    index.upsert("c", ["b", "f"], vectors[6:8])  # "b" (from an earlier batch) is overwritten, "f" appended
    assert index.count("c") == 6
    got = index.get_vectors("c", ["a", "b", "d", "e", "f"])
    for key, row in {"a": 0, "b": 6, "d": 5, "e": 4, "f": 7}.items():
        np.testing.assert_array_equal(got[key], vectors[row])
    index.delete("c", ["a"])
    index.upsert("c", ["g"], vectors[8:9])
    index.flush()
    reopened = MatrixVectorIndex(tmp_path)
    assert reopened.count("c") == 6 and not reopened.get_vectors("c", ["a"])
    np.testing.assert_array_equal(reopened.get_vectors("c", ["g"])["g"], vectors[8])
    reopened.upsert("c", ["g"], vectors[9:10])  # an update of a memory-mapped, read-only matrix
    np.testing.assert_array_equal(reopened.get_vectors("c", ["g"])["g"], vectors[9])
    assert [hit for hit, _ in reopened.search("c", vectors[7], 1)] == ["f"]
