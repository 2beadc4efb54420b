"""Incremental updates touch only the affected topics, are idempotent, and can be undone by a removal."""

from __future__ import annotations

import json
import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from graphs.building.builder import build_kb
from graphs.building.incremental import add_documents, remove_document
from graphs.disk.layout import KBError, current_build
from graphs.kb import KnowledgeBase
from tests.tiny_kb import _qa, tiny_config

TOPIC = "T:DOID:9352|treatment"


@pytest.fixture(scope="module")
def tiny_template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("tiny-inc")
    build_kb(root / "kb", tiny_config(root / "src"))
    return root / "kb"


@pytest.fixture()
def root(tiny_template: Path, tmp_path: Path) -> Path:
    target = tmp_path / "kb"
    shutil.copytree(tiny_template, target, symlinks=True)
    return target


def _rows(root: Path, sql: str) -> list[tuple[object, ...]]:
    conn = sqlite3.connect(current_build(root) / "kb.sqlite")
    try:
        return conn.execute(sql).fetchall()
    finally:
        conn.close()


EDGES = "SELECT topic_id, entity_id, weight FROM topic_edges ORDER BY 1, 2"


def _write(path: Path, *rows: dict[str, object]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def test_add_changes_only_the_affected_topic_and_remove_restores_it(root: Path, tmp_path: Path) -> None:
    before = _rows(root, EDGES)
    new = _qa("T2-5", "Type 2 Diabetes", "C0011860", "treatment", "Insulin and metformin can be combined.")
    result = add_documents(root, _write(tmp_path / "new.jsonl", new))
    assert result.added_documents == ["medquad:T2-5"] and result.touched_topics == [TOPIC]

    after = _rows(root, EDGES)
    assert [r for r in before if r[0] != TOPIC] == [r for r in after if r[0] != TOPIC]
    # E_t now has 4 units: metformin in 3 of them, insulin in 2, hyperglycemia ("high blood sugar") in 1.
    weights = {r[1]: r[2] for r in after if r[0] == TOPIC}
    assert weights == pytest.approx(
        {"DOID:9352": 1.0, "DRUGBANK:DB00331": 0.75, "DRUGBANK:DB00030": 0.5, "MESH:D006943": 0.25}
    )
    kb = KnowledgeBase.open(root)
    assert kb.vectors.count("evidence") == kb.store.counts()["evidence"] == 6
    new_ev = kb.store.get_topics([TOPIC])[TOPIC].evidence_ids
    assert len(new_ev) == 4 and kb.vectors.get_vectors("evidence", list(new_ev)).keys() == set(new_ev)
    assert kb.manifest.data["updates"][-1]["op"] == "add"
    kb.close()

    removed = remove_document(root, "medquad:T2-5")
    assert removed.touched_topics == [TOPIC]
    assert _rows(root, EDGES) == before
    kb = KnowledgeBase.open(root)
    assert kb.vectors.count("evidence") == 5 and kb.store.get_documents(["medquad:T2-5"]) == {}
    kb.close()


def test_re_adding_the_same_file_is_a_no_op(root: Path, tmp_path: Path) -> None:
    new = _qa("T2-6", "Type 2 Diabetes", "C0011860", "symptoms", "Blurred vision can be a symptom.")
    path = _write(tmp_path / "new.jsonl", new)
    first = add_documents(root, path)
    build_after_first = current_build(root)
    second = add_documents(root, path)
    assert second.added_documents == [] and second.unchanged_documents == ["medquad:T2-6"]
    assert second.kb_version == first.kb_version and current_build(root) == build_after_first


def test_a_changed_document_replaces_its_old_version(root: Path, tmp_path: Path) -> None:
    changed = _qa("T1-1", "Type 1 Diabetes", "C0011854", "treatment", "Insulin pumps deliver insulin.")
    result = add_documents(root, _write(tmp_path / "changed.jsonl", changed))
    assert result.added_documents == ["medquad:T1-1"]
    texts = _rows(root, "SELECT text FROM evidence WHERE document_id='medquad:T1-1'")
    assert texts == [("Insulin pumps deliver insulin.",)]


def test_a_focus_the_kg_does_not_know_becomes_a_new_entity_and_topic(root: Path, tmp_path: Path) -> None:
    text = "Frobnication syndrome causes polyuria."
    new = _qa("X-1", "Frobnication Syndrome", "C9999999", "symptoms", text)
    result = add_documents(root, _write(tmp_path / "x.jsonl", new))
    assert result.touched_topics == ["T:FOCUS:frobnication_syndrome|symptoms"]
    kb = KnowledgeBase.open(root)
    assert kb.store.find_entities("frobnication syndrome")[0].id == "FOCUS:frobnication_syndrome"
    # the dictionary was rebuilt with the new name, so later questions can link it
    mentions = kb.matcher.find("what is frobnication syndrome?")
    assert any("FOCUS:frobnication_syndrome" in m.entity_ids for m in mentions)
    kb.close()


def test_removing_an_unknown_document_says_so_and_changes_nothing(root: Path) -> None:
    before = current_build(root)
    with pytest.raises(KBError, match="No document 'medquad:nope'"):
        remove_document(root, "medquad:nope")
    assert current_build(root) == before


def test_cli_add_and_bad_file_messages(root: Path, tmp_path: Path) -> None:
    new = _qa("T2-7", "Type 2 Diabetes", "C0011860", "treatment", "Metformin rarely causes lactic acidosis.")
    path = _write(tmp_path / "cli.jsonl", new)
    cmd = [sys.executable, "-m", "agent.frontends.cli", "kb", "add", str(path), "--kb-dir", str(root)]
    ok = subprocess.run(cmd, capture_output=True, text=True, check=False)
    assert ok.returncode == 0, ok.stderr
    assert "added 1" in ok.stderr
    bad = tmp_path / "bad.jsonl"
    bad.write_text("{not json\n", encoding="utf-8")
    cmd[4] = str(bad)
    fail = subprocess.run(cmd, capture_output=True, text=True, check=False)
    assert fail.returncode == 2
    assert "Error" in fail.stderr and "Traceback" not in fail.stderr
