"""Integrity of a published KB build: recorded at publish, checked at every open, verified in full on demand.

Why: a damaged build used to answer quietly (random pages in ``kb.sqlite``, NaN vectors) or fail with a
library's message that names neither the file nor the fix (``mmap length is greater than file size``,
``BadZipFile``). The manifest now carries, for every file of the build directory (generically: a file a
future version adds is covered without a special case), its size, XXH3-128 and SHA-256, and a digest of
the manifest itself. Opening a build re-hashes every file with XXH3-128 (xxhash, already a langgraph
dependency; ~2.3 GB/s here against ~0.4 GB/s for SHA-256, so the ~210 MB default KB costs ~0.1 s of the
2 s load budget instead of ~0.55 s) and checks a sample of every vector matrix for finite, unit-norm rows.
``evigraph kb verify`` adds what needs more: SHA-256 of every file, SQLite's own ``integrity_check``, every
vector row, the adjacency arrays and the entity dictionary.

Every failure is a :class:`~graphs.disk.layout.KBCorrupt` whose message names the file, what is wrong with it
and the command that fixes it. A build made before integrity records existed has neither the file table nor
the digest: it still opens (its vectors are still sanity-checked) and ``kb verify`` says to rebuild it.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import xxhash

FILES_KEY = "files"
"""Manifest key: relative path -> {"size": bytes, "sha256": hex digest, "xxh3": hex digest}."""
DIGEST_KEY = "manifest_sha256"
"""Manifest key: SHA-256 of the canonical JSON of every other manifest key (catches a damaged manifest)."""
MANIFEST_NAMES = frozenset({"manifest.json", "manifest.json.tmp"})
SQLITE_SIDE_SUFFIXES = ("-wal", "-shm", "-journal")
"""Files SQLite creates beside a database while it is open; they are not part of the published build."""
ALGORITHMS: dict[str, Callable[[], Any]] = {"sha256": hashlib.sha256, "xxh3": xxhash.xxh3_128}
"""Checksums recorded per file: XXH3-128 (non-cryptographic, ~2.5 GB/s: every open re-hashes every file) and
SHA-256 (``kb verify``; also what a person can check with ``sha256sum``)."""
VECTOR_SAMPLE_ROWS = 512
NORM_TOLERANCE = 1e-3


@dataclass(frozen=True)
class Problem:
    """One thing wrong with one file of a build."""

    file: Path
    what: str
    state: str = "corrupt"

    def message(self, fix: str) -> str:
        return f"The KB file {self.file} is {self.state}: {self.what}. {fix}"


def rebuild_hint(manifest: Mapping[str, Any]) -> str:
    """The command that fixes a damaged build, with the incremental updates to replay when there were any."""
    hint = "Rebuild the KB with `evigraph kb build` (the same --kg/--corpus options it was built with"
    if manifest.get("profile"):
        hint = "Rebuild the KB with `evigraph kb build`" + (
            " --full" if manifest["profile"] == "full" else ""
        )
        hint += " (the default KB"
    hint += "; `evigraph kb verify` re-checks it)"
    added = [u.get("file") for u in manifest.get("updates", []) if u.get("op") == "add" and u.get("file")]
    if added:
        hint += ", then re-run `evigraph kb add` for " + ", ".join(dict.fromkeys(map(str, added)))
    return hint + "."


def _published_files(build_dir: Path) -> Iterator[Path]:
    for path in sorted(build_dir.rglob("*")):
        if not path.is_file() or (path.name in MANIFEST_NAMES and path.parent == build_dir):
            continue
        if path.name.endswith(SQLITE_SIDE_SUFFIXES):
            continue
        yield path


def _digest(path: Path, algorithm: str) -> str:
    with path.open("rb") as fh:
        return hashlib.file_digest(fh, ALGORITHMS[algorithm]).hexdigest()


def record_files(build_dir: Path) -> dict[str, dict[str, Any]]:
    """The manifest's file table: every file of the build, with its size and checksums."""
    table: dict[str, dict[str, Any]] = {}
    for path in _published_files(build_dir):
        size = path.stat().st_size
        table[path.relative_to(build_dir).as_posix()] = {
            "size": size,
            "sha256": _digest(path, "sha256"),
            "xxh3": _digest(path, "xxh3"),
        }
    return table


def manifest_digest(data: Mapping[str, Any]) -> str:
    body = {k: v for k, v in data.items() if k != DIGEST_KEY}
    return hashlib.sha256(json.dumps(body, sort_keys=True, ensure_ascii=True).encode()).hexdigest()


def seal(build_dir: Path, data: Mapping[str, Any]) -> dict[str, Any]:
    """``data`` with the file table of ``build_dir`` and the manifest digest added (called at publish)."""
    sealed = {k: v for k, v in data.items() if k not in (FILES_KEY, DIGEST_KEY)}
    sealed[FILES_KEY] = record_files(build_dir)
    sealed[DIGEST_KEY] = manifest_digest(sealed)
    return sealed


def check_manifest(path: Path, data: Mapping[str, Any]) -> Problem | None:
    """A manifest whose digest does not match its content (or that lost half of its record) is damaged."""
    has_files, has_digest = FILES_KEY in data, DIGEST_KEY in data
    if not has_files and not has_digest:
        return None  # a build made before integrity records existed
    if has_files != has_digest or not isinstance(data.get(FILES_KEY), dict):
        return Problem(path, "the integrity record is incomplete (the manifest is damaged)")
    if data[DIGEST_KEY] != manifest_digest(data):
        return Problem(path, "its checksum does not match its content (the manifest is damaged)")
    return None


def check_files(build_dir: Path, data: Mapping[str, Any], *, full: bool) -> list[Problem]:
    """Missing files, wrong sizes, wrong checksums — and, with ``full``, files the manifest does not know."""
    table: dict[str, dict[str, Any]] = data.get(FILES_KEY) or {}
    problems: list[Problem] = []
    for rel, rec in sorted(table.items()):
        path = build_dir / rel
        try:
            size = path.stat().st_size
        except FileNotFoundError:
            problems.append(Problem(path, "the file is missing"))
            continue
        if size != rec.get("size"):
            problems.append(
                Problem(path, f"the file has {size:,} bytes, the build recorded {rec.get('size'):,}")
            )
            continue
        algorithm = "sha256" if full else "xxh3"
        try:
            ok = _digest(path, algorithm) == rec.get(algorithm)
        except OSError as exc:
            problems.append(Problem(path, f"the file cannot be read ({exc.strerror or exc})"))
            continue
        if not ok:
            problems.append(
                Problem(path, "its checksum does not match the one recorded at build time (damaged)")
            )
    if full and table:
        for path in _published_files(build_dir):
            if path.relative_to(build_dir).as_posix() not in table:
                problems.append(
                    Problem(path, "the file is not part of the build as published (unexpected file)")
                )
    return problems


def check_vectors(vectors_dir: Path, *, sample: int | None, with_ids: bool = True) -> list[Problem]:
    """Each ``<collection>.npy`` readable, float32, its rows finite and unit-norm, and (``with_ids``) shaped
    like its id list of unique ids.

    ``sample`` rows (evenly spaced, first and last included) at open; every row when ``None``. Opening a
    build whose checksums just matched skips the id lists (``with_ids=False``): parsing them is most of the
    cost, and their bytes are those the build checked when it was written.
    """
    problems: list[Problem] = []
    if not vectors_dir.is_dir():
        return problems
    for mat_path in sorted(vectors_dir.glob("*.npy")):
        ids_path = mat_path.with_suffix(".ids.json")
        count = _id_count(ids_path, problems) if with_ids else None
        if with_ids and count is None:
            continue
        try:
            mat = np.load(mat_path, mmap_mode="r", allow_pickle=False)
        except (OSError, ValueError, EOFError) as exc:
            problems.append(Problem(mat_path, f"the vector file is unreadable ({exc})"))
            continue
        if mat.ndim != 2 or mat.dtype != np.float32 or (count is not None and mat.shape[0] != count):
            expected = f"({count}, dim) to match {ids_path.name}" if count is not None else "(rows, dim)"
            problems.append(
                Problem(
                    mat_path,
                    f"the vector matrix is {mat.dtype} {tuple(mat.shape)}, expected float32 {expected}",
                )
            )
            continue
        n = mat.shape[0]
        if not n:
            continue
        rows = (
            np.arange(n)
            if sample is None or n <= sample
            else np.unique(np.linspace(0, n - 1, sample).astype(np.int64))
        )
        bad = _bad_rows(mat, rows)
        if bad:
            problems.append(
                Problem(mat_path, f"{bad} of {len(rows):,} checked vectors are not finite unit vectors")
            )
    return problems


def _id_count(ids_path: Path, problems: list[Problem]) -> int | None:
    """The number of ids in a vector id list, or ``None`` (with the problem recorded) when it is unusable."""
    try:
        ids = json.loads(ids_path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        problems.append(Problem(ids_path, "the file is missing"))
        return None
    except (OSError, ValueError) as exc:
        problems.append(Problem(ids_path, f"the id list is unreadable ({type(exc).__name__}: {exc})"))
        return None
    if not isinstance(ids, list) or not all(isinstance(i, str) for i in ids):
        problems.append(Problem(ids_path, "the file is not a JSON list of ids"))
        return None
    if len(set(ids)) != len(ids):
        problems.append(Problem(ids_path, "the id list has duplicate ids"))
    return len(ids)


def _bad_rows(mat: np.ndarray, rows: np.ndarray) -> int:
    bad = 0
    for start in range(0, len(rows), 8192):
        block = np.asarray(mat[rows[start : start + 8192]], dtype=np.float64)
        finite = np.isfinite(block).all(axis=1)
        norms = np.linalg.norm(np.where(np.isfinite(block), block, 0.0), axis=1)
        bad += int((~finite | (np.abs(norms - 1.0) > NORM_TOLERANCE)).sum())
    return bad


def check_sqlite(path: Path) -> list[Problem]:
    """SQLite's own ``integrity_check`` (reads every page) on a read-only connection."""
    if not path.exists():
        return []
    try:
        conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
        try:
            rows = [r[0] for r in conn.execute("PRAGMA integrity_check").fetchall()]
        finally:
            conn.close()
    except sqlite3.DatabaseError as exc:
        return [Problem(path, f"the database is unreadable ({exc})")]
    if rows != ["ok"]:
        return [Problem(path, "SQLite integrity check failed: " + "; ".join(rows[:3]))]
    return []


def check_npz(path: Path) -> list[Problem]:
    """Every array of an ``.npz`` archive loads (the zip's CRCs are checked as each member is read)."""
    try:
        with np.load(path, allow_pickle=False) as archive:
            for name in archive.files:
                archive[name]
    except (OSError, ValueError, EOFError, KeyError) as exc:
        return [Problem(path, f"the archive is unreadable ({type(exc).__name__}: {exc})")]
    except Exception as exc:  # zipfile.BadZipFile, zlib.error: any failure to read is damage
        return [Problem(path, f"the archive is unreadable ({type(exc).__name__}: {exc})")]
    return []


def open_problems(build_dir: Path, data: Mapping[str, Any]) -> list[Problem]:
    """What opening checks: sizes and checksums of the recorded files, a sample of every vector matrix."""
    problems = check_files(build_dir, data, full=False)
    if problems:
        return problems
    recorded = FILES_KEY in data  # a build without checksums gets its id lists checked too
    return check_vectors(build_dir / "vectors", sample=VECTOR_SAMPLE_ROWS, with_ids=not recorded)


def full_problems(build_dir: Path, data: Mapping[str, Any]) -> list[Problem]:
    """What ``evigraph kb verify`` checks: everything, reading every byte of every file."""
    problems = check_files(build_dir, data, full=True)
    if FILES_KEY not in data:
        problems.append(
            Problem(
                build_dir / "manifest.json",
                "the build has no integrity record (it was made by an older EviGraph), so damage cannot be "
                "ruled out",
                state="unverifiable",
            )
        )
    problems += check_vectors(build_dir / "vectors", sample=None)
    for path in _published_files(build_dir):
        if path.suffix == ".sqlite":
            problems += check_sqlite(path)
        elif path.suffix == ".npz":
            problems += check_npz(path)
        elif path.suffix == ".json" and path.parent.name != "vectors":
            try:
                json.loads(path.read_text(encoding="utf-8"))
            except (OSError, ValueError) as exc:
                problems.append(Problem(path, f"the JSON file is unreadable ({exc})"))
    return problems
