"""The BM25 index: biomedical tokens, stored with the KB, kept in step by incremental updates, and a clear
fallback for a KB built before it existed. Real KBs (the slice KB, the tiny incremental KB), real bm25s."""

from __future__ import annotations

import json
import shutil
import sqlite3
from pathlib import Path

import numpy as np
import pytest
from langgraph.checkpoint.memory import InMemorySaver

from graphs.building.builder import build_kb
from graphs.building.incremental import add_documents, remove_document
from graphs.disk.integrity import DIGEST_KEY, FILES_KEY
from graphs.disk.layout import current_build
from graphs.kb import KnowledgeBase
from graphs.model.settings import Settings
from graphs.stores.embedded import DB_FILE
from graphs.text.lexical_index import LEXICAL_DIR, build_from_db, load, query_tokens, tokenize
from graphs.vectors.question_index import BUILT_WITHOUT_IT, QUESTIONS_COLLECTION
from tests.tiny_kb import _qa, tiny_config


def test_tokens_keep_codes_whole_and_split_and_spell_out_greek() -> None:
    assert tokenize("IL-6") == ["il-6", "il6", "il", "6"]
    assert tokenize("TNF-α") == tokenize("TNF-alpha") == ["tnf-alpha", "tnfalpha", "tnf", "alpha"]
    assert tokenize("What is the target of BI 1015550?") == ["target", "bi", "1015550"]
    assert tokenize("symptoms of therapies") == ["symptom", "therapy"]  # plural folded
    assert tokenize("diagnosis") == ["diagnosis"]  # not a plural


def test_stop_words_punctuation_and_other_scripts() -> None:
    assert tokenize("what is the of and ?!...") == []
    assert tokenize("头痛 Kopfschmerzen") == ["头痛", "kopfschmerzen"]
    assert len(query_tokens("diabetes " * 20_000 + " ".join(f"w{i}" for i in range(1000)))) == 256


def _db(kb: KnowledgeBase) -> sqlite3.Connection:
    return sqlite3.connect(f"file:{kb.build_dir / DB_FILE}?mode=ro", uri=True)


def test_stored_index_matches_one_built_from_the_tables(slice_kb: KnowledgeBase) -> None:
    stored = load(slice_kb.build_dir)
    conn = _db(slice_kb)
    fresh = build_from_db(conn)
    count = conn.execute("SELECT COUNT(*) FROM evidence").fetchone()[0]
    conn.close()
    assert len(stored.evidence_ids) == count == len(fresh.evidence_ids)
    query = "What are the treatments for breast cancer?"
    assert stored.search(query, 10) == fresh.search(query, 10)
    assert stored.search(query, 10)


def test_question_index_finds_the_document_answering_the_question(slice_kb: KnowledgeBase) -> None:
    hits = slice_kb.lexical.question_search("what is breast cancer", 5)
    titles = slice_kb.store.get_documents([d for d, _ in hits])
    assert "What is (are) Breast Cancer ?" in {t.title for t in titles.values()}
    evidence = slice_kb.lexical.evidence_of_document[hits[0][0]]
    assert evidence and set(evidence) <= set(slice_kb.lexical.evidence_ids)


def test_rare_tokens_score_higher_rarity_than_common_words(slice_kb: KnowledgeBase) -> None:
    common = slice_kb.lexical.rarity("what causes cancer")
    rare = slice_kb.lexical.rarity("sipuleucel for prostate cancer")
    assert 0.0 <= common < rare <= 1.0
    assert slice_kb.lexical.rarity("the of and") == 0.0


def _as_built_before_integrity_records(build_dir: Path) -> None:
    """A KB that predates the lexical index also predates integrity records: its manifest lists no files."""
    path = build_dir / "manifest.json"
    data = json.loads(path.read_text())
    path.write_text(json.dumps({k: v for k, v in data.items() if k not in (FILES_KEY, DIGEST_KEY)}))


def test_kb_built_before_the_index_opens_with_a_warning(slice_kb_root: Path, tmp_path: Path) -> None:
    root = tmp_path / "old"
    shutil.copytree(slice_kb_root, root, symlinks=True)
    shutil.rmtree(current_build(root) / LEXICAL_DIR)
    _as_built_before_integrity_records(current_build(root))
    kb = KnowledgeBase.open(root)
    try:
        assert kb.lexical.warnings and "evigraph kb build" in kb.lexical.warnings[0]
        assert kb.lexical.search("breast cancer treatment", 3)
    finally:
        kb.close()


def test_stale_tokenizer_version_is_rebuilt_in_memory(slice_kb_root: Path, tmp_path: Path) -> None:
    root = tmp_path / "stale"
    shutil.copytree(slice_kb_root, root, symlinks=True)
    ids = current_build(root) / LEXICAL_DIR / "ids.json"
    meta = json.loads(ids.read_text())
    ids.write_text(json.dumps({**meta, "tokenizer_version": 0}))
    _as_built_before_integrity_records(current_build(root))
    kb = KnowledgeBase.open(root)
    try:
        assert "tokenizer version 0" in kb.lexical.warnings[0]
    finally:
        kb.close()


@pytest.fixture()
def tiny_root(tmp_path: Path) -> Path:
    root = tmp_path / "kb"
    build_kb(root, tiny_config(tmp_path / "src"))
    return root


def test_incremental_add_and_remove_update_the_index(tiny_root: Path, tmp_path: Path) -> None:
    path = tmp_path / "new.jsonl"
    text = "Zorblatamab 1015550 is an investigational antibody for this condition."
    path.write_text(json.dumps(_qa("T2-9", "Type 2 Diabetes", "C0011860", "treatment", text)) + "\n")
    add_documents(tiny_root, path)
    added = load(current_build(tiny_root)).search("zorblatamab", 5)
    assert added and all(i in load(current_build(tiny_root)).evidence_ids for i, _ in added)
    remove_document(tiny_root, "medquad:T2-9")
    assert load(current_build(tiny_root)).search("zorblatamab", 5) == []


def test_incremental_updates_keep_the_question_vectors_in_step(tiny_root: Path, tmp_path: Path) -> None:
    path = tmp_path / "new.jsonl"
    text = "Zorblatamab is an investigational antibody for this condition."
    path.write_text(json.dumps(_qa("T2-9", "Type 2 Diabetes", "C0011860", "treatment", text)) + "\n")
    add_documents(tiny_root, path)
    kb = KnowledgeBase.open(tiny_root)
    try:
        stored = kb.vectors.get_vectors(QUESTIONS_COLLECTION, ["medquad:T2-9"])
        assert list(stored) == ["medquad:T2-9"]
        expected = kb.embedder.embed(["What are the treatment for Type 2 Diabetes ?"])[0]
        assert float(np.dot(stored["medquad:T2-9"], expected)) == pytest.approx(1.0, abs=1e-3)
    finally:
        kb.close()
    remove_document(tiny_root, "medquad:T2-9")
    kb = KnowledgeBase.open(tiny_root)
    try:
        assert kb.vectors.get_vectors(QUESTIONS_COLLECTION, ["medquad:T2-9"]) == {}
        assert kb.vectors.count(QUESTIONS_COLLECTION) > 0  # the others stay
    finally:
        kb.close()


def test_kb_built_before_the_question_index_ranks_and_says_rebuild(
    slice_kb_root: Path, tmp_path: Path
) -> None:
    from tools.evidence_rank import EvidenceRankRequest, evidence_rank

    root = tmp_path / "old"
    shutil.copytree(slice_kb_root, root, symlinks=True)
    build = current_build(root)
    for name in ("questions.npy", "questions.ids.json"):
        (build / "vectors" / name).unlink()
    _as_built_before_integrity_records(build)
    path = build / "manifest.json"
    data = json.loads(path.read_text())
    data["counts"].pop("questions")
    path.write_text(json.dumps(data))
    kb = KnowledgeBase.open(root)
    try:
        result = evidence_rank(kb, EvidenceRankRequest(question="how is gout treated?", top_k=5))
        assert result.evidence and all(
            "question" not in e.origin or e.scores.question for e in result.evidence
        )
        assert result.parameters["fusion"]["question_match_weight"] == 0.0
        assert any("before the question index" in w and "evigraph kb build" in w for w in result.warnings)
    finally:
        kb.close()
    # ... and a consult on it tells the reader, once (evidence_rank's warnings never reached an answer)
    from agent.consult import Consultant

    settings = Settings(kb_dir=root, data_dir=tmp_path / "data", llm_enabled=False)
    consultant = Consultant(settings, checkpointer=InMemorySaver(), use_llm=False)
    try:
        warnings = consultant.ask("How is gout treated?").answer["warnings"]
        assert [w for w in warnings if "before the question index" in w] == [BUILT_WITHOUT_IT]
    finally:
        consultant.kb.close()
