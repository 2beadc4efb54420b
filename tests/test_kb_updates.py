"""``kb add`` cannot corrupt the KB: duplicates, bad rows, over-long documents, full disks and kills.

Real slice KB, real loaders, real embedder. The full-disk and read-only cases inject the OS error
(``OSError(ENOSPC)`` / ``OSError(EROFS)``) at the call that writes the adjacency arrays, after part of the
file is on disk: a real small tmpfs needs root, and the suite must run as any user.
"""

from __future__ import annotations

import errno
import json
import os
import shutil
import signal
import sqlite3
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest

from graphs.building import builder, incremental
from graphs.building.builder import build_kb
from graphs.building.incremental import add_documents
from graphs.building.loaders import LoadError
from graphs.disk.layout import KBError, current_build, scratch_dir
from graphs.kb import KnowledgeBase
from tests.conftest import SLICE, read_only, slice_config

REPO = Path(__file__).resolve().parent.parent
GOUT_DOC = json.loads((SLICE / "docs.jsonl").read_text(encoding="utf-8").splitlines()[0])


def _doc(ident: str, text: str, **extra: object) -> dict[str, object]:
    return {
        "id": ident,
        "title": f"Note {ident}",
        "text": text,
        "source": "test notes",
        "focus": "gout",
        **extra,
    }


def _write_lines(path: Path, *lines: bytes) -> Path:
    path.write_bytes(b"".join(line + b"\n" for line in lines))
    return path


def _rows(root: Path, sql: str, *args: object) -> list[tuple[object, ...]]:
    conn = sqlite3.connect(current_build(root) / "kb.sqlite")
    try:
        return conn.execute(sql, args).fetchall()
    finally:
        conn.close()


V1 = "Colchicine at a low dose was the first choice for acute gout flares in this old note version."
V2 = "Allopurinol lowers serum urate and prevents gout attacks; this is the revised note version."


def test_duplicate_ids_in_one_file_the_last_wins_and_nothing_of_the_first_survives(kb_copy: Path) -> None:
    rows = [json.dumps(_doc("dup-1", V1)).encode(), json.dumps(_doc("dup-1", V2)).encode()]
    ids_before = set(json.loads((current_build(kb_copy) / "vectors" / "evidence.ids.json").read_text()))
    result = add_documents(kb_copy, _write_lines(kb_copy.parent / "dup.jsonl", *rows))
    assert result.added_documents == ["doc:dup-1"]
    assert any("appears more than once: the last version was kept" in i.reason for i in result.report.issues)
    texts = [str(t) for (t,) in _rows(kb_copy, "SELECT text FROM evidence WHERE document_id='doc:dup-1'")]
    assert texts and all("Colchicine" not in t for t in texts) and any("Allopurinol" in t for t in texts)
    (doc_text,) = _rows(kb_copy, "SELECT text FROM documents WHERE id='doc:dup-1'")[0]
    assert doc_text == V2
    kb = KnowledgeBase.open(kb_copy)
    try:
        ids = json.loads((kb.build_dir / "vectors" / "evidence.ids.json").read_text())
        sql = "SELECT id FROM evidence WHERE document_id='doc:dup-1'"
        evidence_ids = {str(e) for (e,) in _rows(kb_copy, sql)}
        assert set(ids) - ids_before == evidence_ids  # no vector of the first version either
        hits = kb.vectors.search("evidence", kb.embed([V1])[0], 5)
        assert {h for h, _ in hits} - ids_before <= evidence_ids
    finally:
        kb.close()


def test_bad_rows_are_skipped_with_file_and_line_and_the_good_ones_added(kb_copy: Path) -> None:
    path = _write_lines(
        kb_copy.parent / "mixed.jsonl",
        json.dumps(_doc("ok-1", V2)).encode(),
        json.dumps(_doc("obj-1", {"nested": "object"})).encode(),  # type: ignore[arg-type]
        json.dumps(_doc("list-1", V1, title=["a", "list"])).encode(),
        json.dumps(_doc("utf-1", "placeholder")).encode().replace(b"placeholder", b"caf\xe9 au lait"),
        json.dumps(_doc("ok-2", V1)).encode(),
    )
    result = add_documents(kb_copy, path)
    assert result.added_documents == ["doc:ok-1", "doc:ok-2"]
    summary = result.report.summary()
    assert f"{path}:2: field(s) must be text (a JSON string): text (dict)" in summary
    assert f"{path}:3: field(s) must be text (a JSON string): title (list)" in summary
    assert any(line.startswith(f"{path}:4: not valid UTF-8") for line in summary)
    stored = {str(t) for (t,) in _rows(kb_copy, "SELECT text FROM documents WHERE id LIKE 'doc:%-1'")}
    assert not any("nested" in t for t in stored)


def test_an_over_long_document_is_skipped_with_a_clear_message(kb_copy: Path) -> None:
    before = current_build(kb_copy)
    path = _write_lines(kb_copy.parent / "long.jsonl", json.dumps(_doc("long-1", "gout " * 2000)).encode())
    with pytest.raises(LoadError, match=r"long-1 has 10,000 characters, over the limit of 5,000"):
        add_documents(kb_copy, path, max_document_chars=5000)
    assert current_build(kb_copy) == before
    args = ["kb", "add", str(path), "--max-doc-chars", "5000", "--kb-dir", str(kb_copy)]
    cli = subprocess.run(
        [sys.executable, "-m", "agent.frontends.cli", *args],
        capture_output=True,
        text=True,
        check=False,
        cwd=REPO,
        env={**os.environ, "COLUMNS": "1000"},
    )
    assert cli.returncode == 2 and "--max-doc-chars" in cli.stderr and "Traceback" not in cli.stderr


def test_progress_is_reported_for_every_stage(kb_copy: Path) -> None:
    seen: list[tuple[str, int, int]] = []
    rows = [json.dumps(_doc(f"p-{i}", f"{V2} Variant {i}.")).encode() for i in range(3)]
    add_documents(
        kb_copy, _write_lines(kb_copy.parent / "p.jsonl", *rows), progress=lambda *a: seen.append(a)
    )
    stages = [s for s, _, _ in seen]
    assert stages[0] == "reading documents" and "finding entities in evidence" in stages
    assert any(s == "embedding evidence" and d == t > 0 for s, d, t in seen)


def _partial_write_then(code: int) -> Callable[[object, Path], None]:
    def save(adjacency: object, directory: Path) -> None:
        (directory / "adjacency.npz").write_bytes(b"PK\x03\x04" + b"\0" * 4096)  # part of it reached the disk
        raise OSError(code, os.strerror(code), str(directory / "adjacency.npz"))

    return save


@pytest.mark.parametrize(("code", "words"), [(errno.ENOSPC, "is full"), (errno.EROFS, "Cannot write to")])
def test_disk_full_or_read_only_during_add_and_build_changes_nothing_and_leaves_no_temp_files(
    kb_copy: Path, monkeypatch: pytest.MonkeyPatch, code: int, words: str
) -> None:
    before = current_build(kb_copy)
    path = _write_lines(kb_copy.parent / "a.jsonl", json.dumps(_doc("full-1", V2)).encode())
    monkeypatch.setattr(incremental, "save_adjacency", _partial_write_then(code))
    with pytest.raises(KBError, match=words) as add_error:
        add_documents(kb_copy, path)
    monkeypatch.setattr(builder, "save_adjacency", _partial_write_then(code))
    with pytest.raises(KBError, match=words) as build_error:
        build_kb(kb_copy, slice_config())
    for error in (add_error, build_error):
        assert "Nothing was changed" in str(error.value)
    assert not list((kb_copy / "builds").glob(".tmp-*"))
    assert current_build(kb_copy) == before
    KnowledgeBase.open(kb_copy).close()


def test_a_killed_add_or_build_leaves_nothing_behind_after_the_next_run(kb_copy: Path) -> None:
    big = [json.dumps(_doc(f"k-{i}", f"{GOUT_DOC['text']} {i}")).encode() for i in range(60)]
    path = _write_lines(kb_copy.parent / "kill.jsonl", *big)
    script = (
        "import sys, pathlib\n"
        "from graphs.disk.layout import scratch_dir\n"
        "from graphs.building.incremental import add_documents\n"
        f"root = pathlib.Path({str(kb_copy)!r})\n"
        "with scratch_dir(root) as s:\n"
        "    (s / 'subset.jsonl').write_text('x' * 100000)\n"
        f"    add_documents(root, pathlib.Path({str(path)!r}))\n"
    )
    proc = subprocess.Popen([sys.executable, "-c", script], cwd=REPO)
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and not list((kb_copy / "builds").glob(".tmp-*/kb.sqlite")):
        time.sleep(0.05)
    assert list((kb_copy / "builds").glob(".tmp-*")) and list((kb_copy / "scratch").iterdir())
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    with scratch_dir(kb_copy):
        assert [p.name.split("-")[0] for p in (kb_copy / "scratch").iterdir()] == [str(os.getpid())]
    assert not list((kb_copy / "scratch").iterdir())
    small = _write_lines(kb_copy.parent / "one.jsonl", json.dumps(_doc("after-kill", V2)).encode())
    add_documents(kb_copy, small)
    assert not list((kb_copy / "builds").glob(".tmp-*"))
    assert np.isfinite(np.load(current_build(kb_copy) / "vectors" / "evidence.npy")).all()


def test_kb_add_on_a_really_read_only_kb_changes_nothing_and_leaves_no_temp_files(kb_copy: Path) -> None:
    """The same promise as the injected-error test above, on a real read-only file system (a read-only bind
    mount as root, permission bits otherwise): a clear KBError, the published build untouched."""
    before = current_build(kb_copy)
    path = _write_lines(kb_copy.parent / "ro.jsonl", json.dumps(_doc("ro-1", V2)).encode())
    with read_only(kb_copy), pytest.raises(KBError) as error:
        add_documents(kb_copy, path)
    assert "Traceback" not in str(error.value)
    assert not list((kb_copy / "builds").glob(".tmp-*"))
    assert current_build(kb_copy) == before
    KnowledgeBase.open(kb_copy).close()


def _fill(directory: Path, leave_bytes: int) -> None:
    """Fill the file system holding ``directory`` until only ``leave_bytes`` are free."""
    stat = os.statvfs(directory)
    free = stat.f_bavail * stat.f_frsize
    with (directory / "filler").open("wb") as out:
        out.truncate(0)
        chunk = b"\0" * (1 << 20)
        remaining = max(0, free - leave_bytes)
        while remaining > 0:
            remaining -= out.write(chunk[: min(len(chunk), remaining)])


def test_kb_add_on_a_really_full_disk_changes_nothing_and_leaves_no_temp_files(
    kb_copy: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """As root, a real tmpfs filled to within 256 kB: ``kb add`` must copy the build and runs out of space for
    real (ENOSPC). Without root no full disk can be made, so the same write fails by an injected ENOSPC."""
    disk = tmp_path / "disk"
    disk.mkdir()
    if os.geteuid() == 0:
        size = sum(p.stat().st_size for p in kb_copy.rglob("*") if p.is_file()) + (8 << 20)
        subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(disk)], check=True)
    else:
        monkeypatch.setattr(incremental, "save_adjacency", _partial_write_then(errno.ENOSPC))
    try:
        root = disk / "kb"
        shutil.copytree(kb_copy, root, symlinks=True)
        path = _write_lines(tmp_path / "full.jsonl", json.dumps(_doc("full-2", V2)).encode())
        before = current_build(root)
        if os.geteuid() == 0:
            _fill(disk, leave_bytes=256 << 10)
        with pytest.raises(KBError, match="is full") as error:
            add_documents(root, path)
        assert "Nothing was changed" in str(error.value)
        assert not list((root / "builds").glob(".tmp-*"))
        assert current_build(root) == before
        (disk / "filler").unlink(missing_ok=True)
        KnowledgeBase.open(root).close()
    finally:
        if os.geteuid() == 0:
            subprocess.run(["umount", "--lazy", str(disk)], check=True)
