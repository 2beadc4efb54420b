"""The dense question index: built with the KB from the titles that are questions, kept in step by
incremental add/remove (tests/test_lexical_index.py), and fused by evidence_rank. Real slice KB, the
real embedding model."""

from __future__ import annotations

import sqlite3

import numpy as np
import pytest

from graphs.kb import KnowledgeBase
from graphs.stores.embedded import DB_FILE
from graphs.vectors.question_index import QUESTIONS_COLLECTION, is_question, question_items
from tools.evidence_rank import EvidenceRankRequest, evidence_rank
from tools.fusion import QUESTION_DENSE_WEIGHT


def test_only_titles_written_as_questions_are_indexed() -> None:
    assert is_question("What are the treatments for Gout ?")
    assert not is_question("PubMed 12345") and not is_question("")
    titles = [("a", "How to prevent Gout ? "), ("b", "PubMed 9"), ("c", "Gout")]
    assert question_items(titles) == [("a", "How to prevent Gout ?")]


def test_the_build_embeds_every_question_title(slice_kb: KnowledgeBase) -> None:
    conn = sqlite3.connect(f"file:{slice_kb.build_dir / DB_FILE}?mode=ro", uri=True)
    titles = conn.execute("SELECT id, title FROM documents").fetchall()
    conn.close()
    questions = question_items(titles)
    assert 0 < len(questions) <= len(titles)
    assert slice_kb.vectors.count(QUESTIONS_COLLECTION) == len(questions)
    assert slice_kb.manifest.data["counts"]["questions"] == len(questions)
    doc_id, title = questions[0]
    stored = slice_kb.vectors.get_vectors(QUESTIONS_COLLECTION, [doc_id])[doc_id]
    assert float(np.dot(stored, slice_kb.embedder.embed([title])[0])) == pytest.approx(1.0, abs=1e-3)


def test_a_lay_question_is_matched_to_the_question_a_document_answers(slice_kb: KnowledgeBase) -> None:
    question = "my dad was just told he has gout, what can he take for the pain?"
    best_doc = slice_kb.vectors.search(QUESTIONS_COLLECTION, slice_kb.embedder.embed([question])[0], 1)[0][0]
    assert "gout" in slice_kb.store.get_documents([best_doc])[best_doc].title.lower()
    result = evidence_rank(slice_kb, EvidenceRankRequest(question=question, top_k=10))
    assert result.parameters["fusion"]["question_match_weight"] == QUESTION_DENSE_WEIGHT > 0
    from_best = [e for e in result.evidence if e.document_id == best_doc]
    assert from_best and all("question" in e.origin for e in from_best)
    others = [e.scores.question_match or 0.0 for e in result.evidence if e.document_id != best_doc]
    best = from_best[0].scores.question_match or 0.0
    assert best > 0 and all(best >= other for other in others)

    off = evidence_rank(
        slice_kb, EvidenceRankRequest(question=question, top_k=10, question_k=0, question_weight=0.0)
    )
    assert off.parameters["fusion"]["question_match_weight"] == 0.0
    assert all("question" not in e.origin for e in off.evidence)


def test_a_callers_full_lexical_weight_leaves_the_question_match_no_room(slice_kb: KnowledgeBase) -> None:
    request = EvidenceRankRequest(question="what can my dad take for gout pain?", top_k=5, lexical_weight=1.0)
    result = evidence_rank(slice_kb, request)
    assert result.parameters["fusion"]["question_match_weight"] == 0.0
    assert all(0.0 <= e.scores.relevance <= 1.0 + 0.1 for e in result.evidence)  # + the label boost at most
