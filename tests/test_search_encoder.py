"""The search encoder: the pinned shipped weights, its vectors in every build, evidence_rank searching and
scoring with them, and a named fallback to the base vectors when it is missing or does not match."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pytest

import graphs.vectors.search_encoder
from graphs.building.builder import build_kb
from graphs.building.incremental import add_documents, remove_document
from graphs.disk.layout import KBError
from graphs.kb import KnowledgeBase
from graphs.vectors.embedding import get_embedder
from graphs.vectors.reader import ReaderSpec, ReaderUnavailable
from graphs.vectors.search_encoder import (
    SEARCH_COLLECTION,
    SEARCH_MANIFEST,
    SHIPPED_SEARCH_DIR,
    get_search_encoder,
)
from tests.tiny_kb import _qa, tiny_config
from tools.evidence_rank import EvidenceRankRequest, evidence_rank
from tools.query_feedback import with_feedback

CFTR = "Which disease is caused by mutations in the CFTR gene?"
CFTR_ANSWER = "A defect in the CFTR gene causes cystic fibrosis (CF)."
OFF_TOPIC = "Metformin lowers blood glucose and is taken with meals; the dose is raised slowly."


def shipped_copy(tmp_path: Path) -> tuple[Path, ReaderSpec]:
    """A real copy of data/retriever/ that a test may damage or rename."""
    copy = tmp_path / "retriever"
    shutil.copytree(SHIPPED_SEARCH_DIR, copy)
    return copy, ReaderSpec.read(copy, "search encoder", SEARCH_MANIFEST)


def test_the_shipped_encoder_is_the_pinned_file_and_differs_from_the_base_one() -> None:
    encoder = get_search_encoder()
    spec = ReaderSpec.read(SHIPPED_SEARCH_DIR, "search encoder", SEARCH_MANIFEST)
    assert spec.sha256[:12] in encoder.name  # vectors of other weights never share a cache key
    vectors = encoder.embed([CFTR, CFTR_ANSWER, OFF_TOPIC])
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)
    assert vectors[0] @ vectors[1] > vectors[0] @ vectors[2] + 0.2
    base = get_embedder("onnx").embed([CFTR, CFTR_ANSWER, OFF_TOPIC])
    assert float(np.abs(vectors - base).max()) > 0.05  # really another model, not the base one renamed


def test_a_damaged_or_missing_encoder_is_named_with_the_fix(tmp_path: Path) -> None:
    broken, spec = shipped_copy(tmp_path)
    data = bytearray(spec.model_file.read_bytes())
    data[len(data) // 2] ^= 0xFF
    spec.model_file.write_bytes(bytes(data))
    with pytest.raises(ReaderUnavailable, match=r"search encoder .*damaged .*git checkout -- data/retriever"):
        get_search_encoder(broken)
    spec.model_file.unlink()
    with pytest.raises(ReaderUnavailable, match=r"missing"):
        get_search_encoder(broken)


def test_a_build_stores_a_search_vector_for_every_evidence_unit(slice_kb: KnowledgeBase) -> None:
    assert slice_kb.manifest.data["search_embedder"] == get_search_encoder().name
    count = slice_kb.vectors.count("evidence")
    assert count > 100 and slice_kb.vectors.count(SEARCH_COLLECTION) == count
    assert slice_kb.searcher is not None and slice_kb.search_warning is None


def test_evidence_rank_searches_and_scores_with_the_search_encoder(slice_kb: KnowledgeBase) -> None:
    question = "How is gout treated?"
    result = evidence_rank(slice_kb, EvidenceRankRequest(question=question, top_k=5))
    assert result.evidence and not any("search" in w for w in result.warnings)
    probe = with_feedback(slice_kb, get_search_encoder().embed_one(question))
    stored = slice_kb.vectors.get_vectors(SEARCH_COLLECTION, [e.id for e in result.evidence])
    for item in result.evidence:  # the score shown is the search encoder's cosine of that very passage
        assert item.scores.search == pytest.approx(float(stored[item.id] @ probe), abs=1e-4)
    base = evidence_rank(slice_kb, EvidenceRankRequest(question=question, top_k=5, search_encoder=False))
    assert base.evidence and all(e.scores.search is None for e in base.evidence)
    # The base cosine is reported either way (the answered model reads it, calibrated on the base vectors).
    shared = {e.id: e.scores.cosine for e in base.evidence}
    assert all(shared[e.id] == e.scores.cosine for e in result.evidence if e.id in shared)


def test_without_the_encoder_evidence_is_ranked_by_the_base_vectors_and_it_says_so(
    slice_kb_root: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    copy, spec = shipped_copy(tmp_path)
    spec.model_file.unlink()  # the shipped weights are gone: the real loader's error, not a stand-in
    monkeypatch.setattr(graphs.vectors.search_encoder, "SHIPPED_SEARCH_DIR", copy)
    kb = KnowledgeBase.open(slice_kb_root)
    try:
        result = evidence_rank(kb, EvidenceRankRequest(question="How is gout treated?", top_k=5))
    finally:
        kb.close()
    assert result.evidence and all(e.scores.search is None for e in result.evidence)
    assert any("search encoder is unavailable" in w and "base encoder" in w for w in result.warnings)


@pytest.fixture()
def tiny_root(tmp_path: Path) -> Path:
    build_kb(tmp_path / "kb", tiny_config(tmp_path / "src"))
    return tmp_path / "kb"


def test_added_and_removed_documents_keep_the_search_vectors_in_step(tiny_root: Path, tmp_path: Path) -> None:
    new = _qa("T2-5", "Type 2 Diabetes", "C0011860", "treatment", "Insulin and metformin can be combined.")
    source = tmp_path / "new.jsonl"
    source.write_text(json.dumps(new) + "\n", encoding="utf-8")
    add_documents(tiny_root, source)
    kb = KnowledgeBase.open(tiny_root)
    assert kb.vectors.count(SEARCH_COLLECTION) == kb.vectors.count("evidence") == 6
    kb.close()
    remove_document(tiny_root, "medquad:T2-5")
    kb = KnowledgeBase.open(tiny_root)
    assert kb.vectors.count(SEARCH_COLLECTION) == kb.vectors.count("evidence") == 5
    kb.close()


def test_adding_with_another_search_encoder_is_refused_and_changes_nothing(
    tiny_root: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    copy, _ = shipped_copy(tmp_path)  # a real encoder under another model name (say, a retrained one)
    manifest = json.loads((copy / SEARCH_MANIFEST).read_text(encoding="utf-8"))
    (copy / SEARCH_MANIFEST).write_text(
        json.dumps({**manifest, "name": "another-search-model"}), encoding="utf-8"
    )
    monkeypatch.setattr(graphs.vectors.search_encoder, "SHIPPED_SEARCH_DIR", copy)
    assert get_search_encoder().name.startswith("another-search-model/")
    before = KnowledgeBase.open(tiny_root)
    version = before.version
    before.close()
    new = _qa("T2-5", "Type 2 Diabetes", "C0011860", "treatment", "Insulin and metformin can be combined.")
    source = tmp_path / "new.jsonl"
    source.write_text(json.dumps(new) + "\n", encoding="utf-8")
    with pytest.raises(KBError, match=r"rebuild the KB .*Nothing was changed"):
        add_documents(tiny_root, source)
    after = KnowledgeBase.open(tiny_root)
    assert after.version == version and after.vectors.count(SEARCH_COLLECTION) == 5
    after.close()


def test_the_encoder_was_trained_on_the_readers_evaluation_disjoint_questions() -> None:
    """Its training questions are the reader's (data/reader/training_questions.jsonl.gz, whose disjointness
    from every evaluation and calibration set tests/test_reader_data.py checks): the manifest pins that
    file's sha256, so a retrained encoder on other questions cannot ship under the same card."""
    import hashlib

    from evals.reader_data import MANIFEST

    recorded = json.loads((SHIPPED_SEARCH_DIR / SEARCH_MANIFEST).read_text(encoding="utf-8"))
    assert recorded["training_questions"] == "data/reader/training_questions.jsonl.gz"
    assert recorded["training_questions_sha256"] == hashlib.sha256(MANIFEST.read_bytes()).hexdigest()


def test_every_default_and_literature_evidence_unit_has_a_shipped_search_vector() -> None:
    """Without them the first default build would embed 16.6 k units (~3 min on 2 cores) and a literature
    build 24 k more: a change to chunking or to the search text must be followed by
    ``python data/derive_embeddings.py --search [--literature]``."""
    from graphs.building.builder import load_documents, make_evidence
    from graphs.building.default_kb import (
        CORE_EXCLUDED_SOURCES,
        default_sources,
        literature_sources,
        shipped_embedding_caches,
    )
    from graphs.building.embed_stage import search_text
    from graphs.building.loaders import LoadReport
    from graphs.model.settings import Settings
    from graphs.vectors.embedding_cache import EmbeddingCache, text_key

    data = Path(__file__).resolve().parent.parent / "data"
    settings = Settings(source_data_dir=data, embedding_backend="onnx")
    name = get_search_encoder().name
    caches = [
        EmbeddingCache(p) for p in shipped_embedding_caches(settings, literature=True) if "search" in p.name
    ]
    assert len(caches) == 2
    _, corpus = default_sources(data)
    core = [
        d
        for d in load_documents([(corpus, "medquad")], LoadReport(), None)
        if d.source.split("/")[-1] not in CORE_EXCLUDED_SOURCES
    ]
    papers = load_documents(literature_sources(data), LoadReport(), None)
    texts = [search_text(ev, doc.title) for doc in [*core, *papers] for ev in make_evidence(doc, "")]
    missing = [t for t in texts if all(c.get(text_key(name, t)) is None for c in caches)]
    assert len(texts) > 40_000 and missing == []
