"""A build detects its own damage: every file truncated, bit-flipped or removed gives a named, actionable
error or the intact build's answer — never a quietly different one (issue 13, the corruption matrix)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from graphs.building.loaders import LoadError
from graphs.disk.layout import KBError, current_build, publish, read_manifest, write_manifest
from graphs.kb import KnowledgeBase
from tools.evidence_rank import EvidenceRankRequest, evidence_rank

REPO = Path(__file__).resolve().parent.parent
QUESTION = "How is gout treated?"
DAMAGES = ("truncate", "bitflip-head", "bitflip-middle", "remove")


def _answer(root: Path) -> tuple[object, ...]:
    """What a consult reads: ranked evidence (vectors + SQLite), graph counts, the dictionary's matches."""
    kb = KnowledgeBase.open(root)
    try:
        ranked = evidence_rank(kb, EvidenceRankRequest(question=QUESTION))
        found = kb.matcher.find_many([QUESTION])
        walk = kb.store.counts()
        return (
            [(e.id, round(e.scores.cosine, 5)) for e in ranked.evidence],
            [(m.term, tuple(m.entity_ids)) for m in found[0]],
            walk,
        )
    finally:
        kb.close()


def _damage(path: Path, how: str) -> None:
    if how == "remove":
        path.unlink()
        return
    data = bytearray(path.read_bytes())
    if how == "truncate":
        path.write_bytes(bytes(data[: len(data) // 2]))
        return
    at = min(len(data) - 1, 10) if how == "bitflip-head" else len(data) // 2
    data[at] ^= 0x10
    path.write_bytes(bytes(data))


@pytest.fixture(scope="module")
def reference(slice_kb_root: Path) -> tuple[object, ...]:
    return _answer(slice_kb_root)


def _build_files(root: Path) -> list[str]:
    build = current_build(root)
    return ["manifest.json", *sorted(read_manifest(build).data["files"])]


def test_every_file_of_a_build_is_recorded_with_size_and_checksum(slice_kb_root: Path) -> None:
    build = current_build(slice_kb_root)
    table = read_manifest(build).data["files"]
    on_disk = {
        p.relative_to(build).as_posix()
        for p in build.rglob("*")
        if p.is_file() and p.name != "manifest.json" and not p.name.endswith(("-wal", "-shm"))
    }
    assert set(table) == on_disk and len(on_disk) >= 8
    for rel, rec in table.items():
        assert rec["size"] == (build / rel).stat().st_size
        assert len(rec["sha256"]) == 64


def test_corruption_matrix(slice_kb_root: Path, reference: tuple[object, ...], tmp_path: Path) -> None:
    outcomes: dict[tuple[str, str], str] = {}
    for rel in _build_files(slice_kb_root):
        for how in DAMAGES:
            root = tmp_path / f"{rel.replace('/', '_')}-{how}"
            shutil.copytree(slice_kb_root, root, symlinks=True)
            _damage(current_build(root) / rel, how)
            try:
                answer = _answer(root)
            except (KBError, LoadError) as exc:
                message = str(exc)
                assert Path(rel).name in message, (rel, how, message)
                assert "evigraph kb build" in message, (rel, how, message)
                outcomes[(rel, how)] = "error"
            else:
                assert answer == reference, (rel, how)
                outcomes[(rel, how)] = "same answer"
            shutil.rmtree(root)
    assert len(outcomes) == 4 * len(_build_files(slice_kb_root))
    assert all(v == "error" for (rel, _), v in outcomes.items() if rel != "manifest.json"), outcomes


def test_nan_and_non_unit_vectors_are_refused_at_open(kb_copy: Path) -> None:
    """Vectors bad before publish (a builder bug) carry valid checksums: the open-time sample finds it."""
    build = current_build(kb_copy)
    path = build / "vectors" / "evidence.npy"
    mat = np.load(path)
    mat[len(mat) - 1] = np.nan
    np.save(path, mat)
    write_manifest(build, read_manifest(build).data)
    with pytest.raises(KBError, match=r"evidence\.npy is corrupt: 1 of .* not finite unit vectors"):
        KnowledgeBase.open(kb_copy)


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    cmd = [sys.executable, "-m", "agent.frontends.cli", *args]
    env = {**os.environ, "COLUMNS": "1000"}  # rich wraps at the terminal width: keep messages on one line
    return subprocess.run(cmd, capture_output=True, text=True, check=False, cwd=REPO, env=env)


def test_kb_verify_passes_an_intact_build_and_names_every_damaged_file(kb_copy: Path) -> None:
    ok = _cli("kb", "verify", "--kb-dir", str(kb_copy))
    assert ok.returncode == 0, ok.stderr
    assert "intact" in ok.stderr
    build = current_build(kb_copy)
    _damage(build / "adjacency.npz", "truncate")
    _damage(build / "vectors" / "topics.ids.json", "bitflip-middle")
    bad = _cli("kb", "verify", "--kb-dir", str(kb_copy))
    assert bad.returncode == 2
    assert "adjacency.npz" in bad.stderr and "topics.ids.json" in bad.stderr
    assert "evigraph kb build" in bad.stderr and "Traceback" not in bad.stderr
    ask = _cli("ask", "--offline", "--kb-dir", str(kb_copy), QUESTION)
    assert ask.returncode == 2
    assert "adjacency.npz" in ask.stderr and "Traceback" not in ask.stderr


def test_a_damaged_manifest_is_noticed(kb_copy: Path) -> None:
    build = current_build(kb_copy)
    data = json.loads((build / "manifest.json").read_text())
    data["counts"]["documents"] += 1  # still valid JSON, still the right schema: only the digest tells
    (build / "manifest.json").write_text(json.dumps(data))
    with pytest.raises(KBError, match=r"manifest\.json is corrupt: its checksum"):
        KnowledgeBase.open(kb_copy)


def test_a_build_in_use_is_not_pruned_until_it_is_closed(kb_copy: Path) -> None:
    kb = KnowledgeBase.open(kb_copy)
    in_use = kb.build_dir
    for _ in range(3):  # each publish would prune everything but the newest two
        tmp = kb_copy / "builds" / f".tmp-copy{_}"
        shutil.copytree(current_build(kb_copy), tmp)
        publish(kb_copy, tmp)
    assert in_use.is_dir() and current_build(kb_copy) != in_use
    assert kb.store.counts()["documents"] > 0
    kb.close()
    tmp = kb_copy / "builds" / ".tmp-copy-last"
    shutil.copytree(current_build(kb_copy), tmp)
    publish(kb_copy, tmp)
    assert not in_use.exists()
    assert len([p for p in (kb_copy / "builds").iterdir() if not p.name.startswith(".")]) == 2
