"""The evidence reader (graphs/vectors/reader.py) with the shipped int8 weights, and its use in evidence_rank.

Real weights, real onnxruntime: the reader must tell an answering passage from one about the same subject
that answers another question, survive bad input, and refuse damaged weights with a message naming the
file and the fix; a KB whose reader is unavailable still ranks, and says so.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np
import pytest

import graphs.kb
from graphs.kb import KnowledgeBase
from graphs.vectors.reader import (
    SHIPPED_READER_DIR,
    EvidenceReader,
    ReaderSpec,
    ReaderUnavailable,
    get_reader,
)
from tools.evidence_rank import DEFAULT_METHODS, EvidenceRankRequest, evidence_rank

CFTR = "Which disease is caused by mutations in the CFTR gene?"
CFTR_ANSWER = "A defect in the CFTR gene causes cystic fibrosis (CF)."
OFF_TOPIC = "Metformin lowers blood glucose and is taken with meals; the dose is raised slowly."


@pytest.fixture(scope="module")
def reader() -> EvidenceReader:
    return get_reader(SHIPPED_READER_DIR)


def test_the_answering_passage_scores_above_the_rest(reader: EvidenceReader) -> None:
    p = reader.probabilities(CFTR, [CFTR_ANSWER, OFF_TOPIC])
    assert p[0] > 0.5 > p[1], p


def test_the_asked_aspect_decides_not_the_subject(reader: EvidenceReader) -> None:
    # Same subject, two aspects: the treatment passage answers the treatment question, not the cause one.
    treatment = (
        "Gout attacks are treated with nonsteroidal anti-inflammatory drugs, colchicine or corticosteroids; "
        "allopurinol lowers uric acid to prevent new attacks."
    )
    cause = "Gout is caused by too much uric acid in the blood, which forms needle-like crystals in a joint."
    scores = reader.logits("How is gout treated?", [treatment, cause])
    assert scores[0] > scores[1]
    scores = reader.logits("What causes gout?", [treatment, cause])
    assert scores[1] > scores[0]


def test_order_batching_and_determinism(reader: EvidenceReader) -> None:
    passages = [CFTR_ANSWER, OFF_TOPIC, "Cystic fibrosis affects the lungs.", ""] * 20
    once = reader.logits(CFTR, passages, batch_size=7)
    again = reader.logits(CFTR, list(reversed(passages)), batch_size=64)[::-1]
    # Dynamic int8 quantises activations per call, so batch companions move a score a little (< 0.25 logit);
    # the same call gives the same scores.
    np.testing.assert_allclose(once, again, atol=0.25)
    np.testing.assert_array_equal(once, reader.logits(CFTR, passages, batch_size=7))
    assert once.shape == (80,)


def test_bad_input_never_crashes(reader: EvidenceReader) -> None:
    assert reader.logits(CFTR, []).shape == (0,)
    huge = "cystic fibrosis " * 40_000  # truncated to the model's length, never an error
    values = reader.probabilities(CFTR, [huge, ""])
    assert np.isfinite(values).all() and ((values >= 0) & (values <= 1)).all()
    other_language = reader.probabilities("¿Qué enfermedad causa el gen CFTR?", [CFTR_ANSWER])
    assert np.isfinite(other_language).all()
    assert np.isfinite(reader.probabilities("", [CFTR_ANSWER])).all()
    with pytest.raises(TypeError):
        reader.logits(CFTR, CFTR_ANSWER)


def test_damaged_or_missing_weights_are_named_with_the_fix(tmp_path: Path) -> None:
    broken = tmp_path / "reader"
    shutil.copytree(SHIPPED_READER_DIR, broken)
    model = ReaderSpec.read(broken).model_file
    data = bytearray(model.read_bytes())
    data[len(data) // 2] ^= 0xFF
    model.write_bytes(bytes(data))
    with pytest.raises(ReaderUnavailable, match=r"damaged .*git checkout -- data/reader"):
        EvidenceReader(broken)
    model.unlink()
    with pytest.raises(ReaderUnavailable, match=r"missing"):
        EvidenceReader(broken)
    (broken / "reader.json").write_text("{not json")
    with pytest.raises(ReaderUnavailable, match=r"unreadable"):
        EvidenceReader(broken)


WITH_READER = [*DEFAULT_METHODS, "reader"]


def test_evidence_rank_reads_the_best_candidates_when_asked(slice_kb: KnowledgeBase) -> None:
    # Not a default method: on the dev sets every weight lowered the objective (evals/reports/reader_dev.md).
    assert "reader" not in DEFAULT_METHODS
    plain = evidence_rank(slice_kb, EvidenceRankRequest(question="How is gout treated?", top_k=10))
    assert plain.parameters["reader_read"] == 0
    assert all(e.scores.reader is None for e in plain.evidence)
    request = EvidenceRankRequest(question="How is gout treated?", top_k=10, methods=WITH_READER)
    result = evidence_rank(slice_kb, request)
    assert result.parameters["reader_read"] > 0
    read = [e.scores.reader for e in result.evidence if e.scores.reader is not None]
    assert read and all(0.0 <= p <= 1.0 for p in read)
    assert not any("evidence reader" in w for w in result.warnings)


def test_a_kb_without_its_reader_ranks_and_says_so(
    slice_kb_root: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(graphs.kb, "SHIPPED_READER_DIR", tmp_path / "no-reader")
    kb = KnowledgeBase.open(slice_kb_root)
    try:
        request = EvidenceRankRequest(question="How is gout treated?", top_k=5, methods=WITH_READER)
        result = evidence_rank(kb, request)
        assert result.evidence
        assert all(e.scores.reader is None for e in result.evidence)
        assert any("the evidence reader is unavailable" in w and "no-reader" in w for w in result.warnings)
        assert any("the evidence reader is unavailable" in w for w in kb.warnings)
    finally:
        kb.close()


def test_a_question_longer_than_the_reader_reads_is_cut_not_fatal(reader: EvidenceReader) -> None:
    # A pasted 60,000-character case left no room for the passage ("Sequence to truncate too short").
    case = "A 45-year-old man with a painful, swollen big toe since last night. " * 900
    case += "Which drug should he be given for the attack?"
    scores = reader.logits(case, [CFTR_ANSWER, OFF_TOPIC])
    assert scores.shape == (2,) and np.isfinite(scores).all()
    # What is read: the opening and the question at the end (a vignette asks last).
    clipped = reader._clip_question(case)
    assert clipped.startswith("A 45-year-old man") and clipped.endswith("given for the attack?")
    assert len(clipped) < 400
    assert reader._clip_question("How is gout treated?") == "How is gout treated?"
