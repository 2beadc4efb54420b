"""Knowledge-base builder: build, reload, eq. 6 weights, stable ids, crash safety and bad inputs."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from graphs.building.builder import build_kb
from graphs.building.loaders import LoadError
from graphs.disk.layout import (
    KBCorrupt,
    KBIncompatible,
    KBLocked,
    KBMissing,
    build_lock,
    current_build,
)
from graphs.kb import KnowledgeBase
from graphs.stores.embedded import EmbeddedGraphStore
from tests.conftest import SLICE
from tests.tiny_kb import tiny_config

REPO = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="module")
def tiny_root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("tiny")
    build_kb(root / "kb", tiny_config(root / "src"))
    return root / "kb"


def _weights(store: EmbeddedGraphStore, topic: str) -> dict[str, float]:
    return dict(store.topic_entities([topic])[topic])


def test_eq6_weights_match_hand_computation(tiny_root: Path) -> None:
    store = EmbeddedGraphStore(current_build(tiny_root))
    # E_t of (type 2 diabetes, treatment) = 3 one-paragraph answers:
    #   T2-1 mentions metformin, type 2 diabetes, high blood sugar (= hyperglycemia)
    #   T2-2 mentions type 2 diabetes, insulin;  T2-3 mentions metformin.
    # The keyword entity is in f(e) of all three. w = |{e: m in f(e)}| / 3.
    assert _weights(store, "T:DOID:9352|treatment") == pytest.approx(
        {"DOID:9352": 1.0, "DRUGBANK:DB00331": 2 / 3, "DRUGBANK:DB00030": 1 / 3, "MESH:D006943": 1 / 3},
        abs=1e-6,
    )
    assert _weights(store, "T:DOID:9352|symptoms") == pytest.approx(
        {"DOID:9352": 1.0, "MESH:D011141": 1.0, "MESH:D006943": 1.0}
    )
    # The entity side sees the same edges.
    assert dict(store.entity_topics(["DRUGBANK:DB00030"])["DRUGBANK:DB00030"]) == pytest.approx(
        {"T:DOID:9352|treatment": 1 / 3, "T:DOID:9744|treatment": 1.0}
    )
    store.close()


def test_keyword_linked_through_umls_xref_and_evidence_spans_point_into_source(tiny_root: Path) -> None:
    store = EmbeddedGraphStore(current_build(tiny_root))
    topic = store.get_topics(["T:DOID:9744|treatment"])["T:DOID:9744|treatment"]
    assert topic.entity_id == "DOID:9744" and len(topic.evidence_ids) == 1
    ev = store.get_evidence(list(topic.evidence_ids))[topic.evidence_ids[0]]
    assert ev.document_id == "medquad:T1-1" and ev.keyword_entity == "DOID:9744"
    text = store.document_text(ev.document_id)
    assert text is not None and text[ev.start : ev.end] == ev.text
    store.close()


def test_rebuild_gives_the_same_ids_and_weights(tiny_root: Path, tmp_path: Path) -> None:
    build_kb(tmp_path / "kb", tiny_config(tmp_path / "src"))
    a = sqlite3.connect(current_build(tiny_root) / "kb.sqlite")
    b = sqlite3.connect(current_build(tmp_path / "kb") / "kb.sqlite")
    for sql in (
        "SELECT id, document_id, start, end FROM evidence ORDER BY id",
        "SELECT topic_id, entity_id, weight FROM topic_edges ORDER BY 1, 2",
        "SELECT id, head, relation, tail FROM relations ORDER BY id",
    ):
        assert a.execute(sql).fetchall() == b.execute(sql).fetchall()


def test_slice_kb_reloads_with_consistent_counts(slice_kb: KnowledgeBase) -> None:
    counts = slice_kb.store.counts()
    recorded = dict(slice_kb.manifest.data["counts"])
    assert slice_kb.vectors.count("questions") == recorded.pop("questions") > 0  # not a table: vectors
    assert counts == recorded
    assert counts["documents"] == 325 and counts["evidence"] > counts["documents"]
    assert slice_kb.vectors.count("evidence") == counts["evidence"]
    assert slice_kb.vectors.count("topics") == counts["topics"]
    asthma = slice_kb.store.find_entities("Asthma")
    assert asthma and asthma[0].id == "DOID:2841"
    # A DO definition became the entity's description; Hetionet and the unified KG merged into one node.
    assert "airway" in asthma[0].description.lower()
    assert set(asthma[0].sources) >= {"disease-ontology", "hetionet"}
    # evidence vectors are real embeddings of the evidence text: its own vector is its nearest neighbour
    ev_id = sorted(slice_kb.store.entity_evidence(["DOID:2841"])["DOID:2841"])[0]
    vec = slice_kb.vectors.get_vectors("evidence", [ev_id])[ev_id]
    assert abs(float(np.linalg.norm(vec)) - 1.0) < 1e-3
    assert slice_kb.vectors.search("evidence", vec, 1)[0][0] == ev_id


def test_curated_focus_names_become_synonyms_in_a_build_that_also_makes_focus_entities(
    slice_kb: KnowledgeBase,
) -> None:
    # The slice builds 5 FOCUS: entities (MedQuAD foci the KG lacks) *and* links other documents to KG
    # entities by UMLS CUI; the latter's consumer names must still be adopted as synonyms.
    eds = slice_kb.store.get_entities(["DOID:13359"])["DOID:13359"]
    assert eds.name == "Ehlers-Danlos syndrome" and {"ED syndrome", "EDS"} <= set(eds.synonyms)
    assert [m.entity_ids for m in slice_kb.matcher.find("ED syndrome")] == [["DOID:13359"]]


def test_bad_rows_are_skipped_and_reported_with_file_and_line(tmp_path: Path) -> None:
    config = tiny_config(tmp_path / "src", corpus_sources=[(SLICE / "bad" / "medquad_bad_lines.jsonl", None)])
    result = build_kb(tmp_path / "kb", config)
    assert result.manifest["counts"]["documents"] == 5
    lines = {(Path(i.path).name, i.line) for i in result.report.issues}
    assert ("medquad_bad_lines.jsonl", 3) in lines and ("medquad_bad_lines.jsonl", 5) in lines
    assert any("malformed JSON" in i.reason for i in result.report.issues)
    # `kb info` explains them (issue 22): how many, why (counted per file and reason), how to see them.
    from typer.testing import CliRunner

    from agent.frontends.cli import app

    reasons = result.manifest["skipped_by_reason"]
    assert sum(reasons.values()) == result.manifest["skipped_rows"] == len(result.report.issues)
    assert any(k.startswith("medquad_bad_lines.jsonl: malformed JSON") for k in reasons)
    plain = CliRunner().invoke(app, ["kb", "info", "--kb-dir", str(tmp_path / "kb")])
    assert plain.exit_code == 0, plain.output
    text = " ".join(plain.output.split())
    assert f"skipped source rows: {len(result.report.issues)} — rows of the source files" in text
    assert "× medquad_bad_lines.jsonl: malformed JSON" in text and "kb info --skipped" in text
    assert "{'target_words'" not in text and "passages of about" in text
    assert "evidence search evigraph-search-minilm-v1/onnx-int8@" in text  # its search encoder
    listed = CliRunner().invoke(app, ["kb", "info", "--skipped", "--kb-dir", str(tmp_path / "kb")])
    assert "medquad_bad_lines.jsonl:3:" in listed.output.replace("\n", "")


@pytest.mark.parametrize(
    ("kg", "corpus", "message"),
    [
        (SLICE / "bad" / "nodes_missing_column.tsv", None, "missing column(s) name"),
        (None, SLICE / "bad" / "empty.jsonl", "the corpus is empty"),
        (None, SLICE / "bad" / "unknown_format.xyz", "Cannot tell the corpus format"),
        (None, Path("/nonexistent/corpus.jsonl"), "does not exist"),
    ],
)
def test_unusable_inputs_stop_with_a_clear_error_and_keep_the_old_kb(
    tiny_root: Path, tmp_path: Path, kg: Path | None, corpus: Path | None, message: str
) -> None:
    src = tmp_path / "src"
    overrides: dict[str, object] = {}
    if kg is not None:
        bad_dir = tmp_path / "badkg"
        bad_dir.mkdir()
        (bad_dir / "nodes.tsv").write_bytes(kg.read_bytes())
        (bad_dir / "edges.tsv").write_text("source_id\trelation\ttarget_id\n", encoding="utf-8")
        overrides["kg_sources"] = [(bad_dir, "unified")]
    if corpus is not None:
        overrides["corpus_sources"] = [(corpus, None)]
    before = current_build(tiny_root)
    with pytest.raises(LoadError, match=message.replace("(", r"\(").replace(")", r"\)")):
        build_kb(tiny_root, tiny_config(src, **overrides))
    assert current_build(tiny_root) == before
    KnowledgeBase.open(tiny_root).close()


def test_missing_corrupt_and_incompatible_kb_messages(tiny_root: Path, tmp_path: Path) -> None:
    with pytest.raises(KBMissing, match="evigraph kb build"):
        KnowledgeBase.open(tmp_path / "nowhere")
    import shutil

    broken = tmp_path / "broken"
    shutil.copytree(tiny_root, broken, symlinks=True)
    build = current_build(broken)
    manifest = json.loads((build / "manifest.json").read_text())
    (build / "manifest.json").write_text(json.dumps({**manifest, "schema_version": 0}))
    with pytest.raises(KBIncompatible, match="Rebuild"):
        KnowledgeBase.open(broken)
    (build / "manifest.json").write_text("{not json")
    with pytest.raises(KBCorrupt, match="unreadable"):
        KnowledgeBase.open(broken)
    (build / "manifest.json").write_text(json.dumps(manifest))
    (build / "kb.sqlite").write_bytes(b"garbage" * 100)
    with pytest.raises(KBCorrupt, match="corrupt"):
        KnowledgeBase.open(broken)


def test_second_builder_is_refused_while_one_holds_the_lock(tiny_root: Path, tmp_path: Path) -> None:
    with build_lock(tiny_root), pytest.raises(KBLocked, match="Another EviGraph build"):
        build_kb(tiny_root, tiny_config(tmp_path / "src"))


def test_killed_build_leaves_the_previous_kb_intact(tiny_root: Path, tmp_path: Path) -> None:
    import shutil

    root = tmp_path / "kb"
    shutil.copytree(tiny_root, root, symlinks=True)
    before = current_build(root)
    script = (
        f"import sys; sys.path.insert(0, {str(REPO)!r})\n"
        "from graphs.building.builder import build_kb\n"
        "from tests.conftest import slice_config\n"
        f"build_kb(__import__('pathlib').Path({str(root)!r}), slice_config())\n"
    )
    proc = subprocess.Popen([sys.executable, "-c", script], cwd=REPO)
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and not list((root / "builds").glob(".tmp-*/kb.sqlite")):
        time.sleep(0.05)
    assert list((root / "builds").glob(".tmp-*")), "the build never started writing"
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    assert current_build(root) == before
    kb = KnowledgeBase.open(root)
    assert kb.store.counts()["documents"] == 5
    kb.close()
    build_kb(root, tiny_config(tmp_path / "src"))  # the next build cleans up and publishes
    assert not list((root / "builds").glob(".tmp-*"))
    assert current_build(root) != before
