"""The dense question index: built with the KB from the titles that are questions, kept in step by
incremental add/remove (tests/test_lexical_index.py), and fused by evidence_rank. Real slice KB, the
real embedding model."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import numpy as np
import pytest

from graphs.building.builder import build_kb
from graphs.building.incremental import add_documents
from graphs.kb import KnowledgeBase
from graphs.model.schema import Evidence
from graphs.stores.embedded import DB_FILE
from graphs.vectors.question_index import QUESTIONS_COLLECTION, is_question, question_items
from tests.tiny_kb import _qa, tiny_config
from tools.evidence_rank import EvidenceRankRequest, evidence_rank
from tools.evidence_scoring import score_candidates
from tools.fusion import QUESTION_DENSE_WEIGHT, FusionWeights


def test_only_titles_written_as_questions_are_indexed() -> None:
    assert is_question("What are the treatments for Gout ?")
    assert not is_question("PubMed 12345") and not is_question("")
    titles = [("a", "How to prevent Gout ? "), ("b", "PubMed 9"), ("c", "Gout")]
    assert question_items(titles) == [("a", "How to prevent Gout ?")]


def test_a_question_written_without_its_question_mark_is_a_question() -> None:
    # MedQuAD's MedlinePlus health topics: 295 of the default KB's 981 read like this, and were left out.
    assert is_question("Do you have information about Cancer Chemotherapy")
    assert is_question("How to prevent diabetes") and is_question("what are the signs of a stroke")
    for title in ("Cancer Chemotherapy", "What Next", "Is", "Whatever happened to polio", "PubMed 12345"):
        assert not is_question(title), title


def _unit(i: str) -> Evidence:
    return Evidence(id=i, document_id=f"doc-{i}", text=i, label="general", keyword_entity="", start=0, end=1)


def test_a_document_that_answers_no_question_is_scored_on_the_other_signals() -> None:
    # a and c read alike (cosine 1 to the query), b does not; a's question is the worst match, b's the best,
    # c's document answers no written question. c must not score as a's worst match (0.7): it scores on
    # the semantic score alone, the question weight spread over the rest (1.0).
    query = np.array([1.0, 0.0])
    matrix = np.array([[1.0, 0.0], [0.0, 1.0], [1.0, 0.0]])
    ids = ["a", "b", "c"]
    fused = (np.zeros(3), np.zeros(3), np.array([0.2, 0.8, np.nan]), FusionWeights(0.0, 0.0, False, 0.3))
    scores = score_candidates(
        matrix, query, np.zeros((0, 2)), np.zeros((0, 2)), [], ids, ("cosine",), None, 0.5,
        {i: _unit(i) for i in ids}, [], fused,
    )  # fmt: skip
    assert [s.relevance for s in scores] == pytest.approx([0.7, 0.3, 1.0])
    assert [s.question_match for s in scores] == [0.2, 0.8, None]


def test_an_imported_document_keeps_its_rank_beside_pages_that_answer_a_question(tmp_path: Path) -> None:
    root = tmp_path / "kb"
    build_kb(root, tiny_config(tmp_path / "src"))
    topic = {
        **_qa("T2-9", "Zorblatamab", "C0011860", "information", "Zorblatamab is an antibody for diabetes."),
        "question": "Do you have information about Zorblatamab",
    }
    own = {
        "id": "clinic-protocol",
        "title": "Clinic protocol 7",
        "source": "our clinic",
        "text": "Zorblatamab is given once a week to adults with type 2 diabetes whose sugar stays high.",
    }
    for name, row in (("medquad.jsonl", topic), ("ours.jsonl", own)):  # one format per file
        (tmp_path / name).write_text(json.dumps(row) + "\n")
        add_documents(root, tmp_path / name)
    kb = KnowledgeBase.open(root)
    try:
        assert list(kb.vectors.get_vectors(QUESTIONS_COLLECTION, ["medquad:T2-9"])) == ["medquad:T2-9"]
        result = evidence_rank(kb, EvidenceRankRequest(question="How often is zorblatamab given?", top_k=5))
        assert result.parameters["fusion"]["question_match_weight"] == QUESTION_DENSE_WEIGHT > 0
        first = result.evidence[0]
        assert first.document_id == "doc:clinic-protocol" and first.scores.question_match is None
    finally:
        kb.close()


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
