"""Pseudo-relevance feedback for the search query (tools/query_feedback.py), on the real slice KB and the
shipped search encoder: the query moves towards its nearest passages, stays a unit vector, and is left as it
is when feedback is off."""

from __future__ import annotations

import numpy as np
import pytest

import tools.query_feedback as feedback
from graphs.kb import KnowledgeBase
from graphs.vectors.search_encoder import SEARCH_COLLECTION
from tools.evidence_rank import EvidenceRankRequest, evidence_rank

QUESTION = "Which disease is caused by mutations in the CFTR gene?"


def test_the_query_moves_towards_its_nearest_passages(slice_kb: KnowledgeBase) -> None:
    searcher = slice_kb.searcher
    assert searcher is not None
    query = searcher.embed_one(QUESTION)
    moved = feedback.with_feedback(slice_kb, query)
    assert np.isclose(np.linalg.norm(moved), 1.0, atol=1e-5)
    nearest = [i for i, _ in slice_kb.vectors.search(SEARCH_COLLECTION, query, feedback.FEEDBACK_DOCS)]
    stored = slice_kb.vectors.get_vectors(SEARCH_COLLECTION, nearest)
    centroid = np.mean([stored[i] for i in nearest], axis=0)
    assert float(moved @ centroid) > float(query @ centroid)  # closer to what its first hits share
    assert float(moved @ query) > 0.8  # but still the question


def test_feedback_off_leaves_the_query_and_the_ranking_as_they_were(
    slice_kb: KnowledgeBase, monkeypatch: pytest.MonkeyPatch
) -> None:
    searcher = slice_kb.searcher
    assert searcher is not None
    query = searcher.embed_one(QUESTION)
    with_feedback = [e.id for e in evidence_rank(slice_kb, EvidenceRankRequest(question=QUESTION)).evidence]
    monkeypatch.setattr(feedback, "FEEDBACK_DOCS", 0)
    assert feedback.with_feedback(slice_kb, query) is query
    without = [e.id for e in evidence_rank(slice_kb, EvidenceRankRequest(question=QUESTION)).evidence]
    assert with_feedback and without
    assert with_feedback[0] == without[0]  # the CFTR page leads either way: feedback refines, not replaces
