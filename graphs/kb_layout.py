"""On-disk layout of a knowledge base: builds, the ``current`` pointer, the manifest and the build lock.

Crash safety: a build (or an incremental update) writes a complete new directory under ``builds/`` and only
then swaps the ``current`` symlink with an atomic ``rename``. A killed build leaves a ``.tmp-*`` directory
that the next build removes, and ``current`` still points at the previous, intact build. A lock file held
with ``flock`` stops two builders from running at once (the lock dies with its process, so a crash never
leaves a stale lock).
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import shutil
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from graphs.schema import SCHEMA_VERSION

MANIFEST = "manifest.json"
CURRENT = "current"
MATCHER_FILE = "matcher.pkl"
"""The pickled entity dictionary inside a build."""
VECTORS_DIR = "vectors"
"""The matrix vector index inside a build."""
BUILDS = "builds"
LOCK = "build.lock"
KEEP_PREVIOUS_BUILDS = 1


class KBError(RuntimeError):
    """A knowledge base cannot be used; the message says what happened and what to run."""


class KBMissing(KBError):
    """No knowledge base has been built at this root yet."""


class KBCorrupt(KBError):
    """A build is incomplete or its files are unreadable."""


class KBIncompatible(KBError):
    """A build was made by an EviGraph with another on-disk schema version."""


class KBLocked(KBError):
    """Another build or update holds the lock."""


@dataclass(frozen=True)
class Manifest:
    data: dict[str, Any]

    @property
    def version(self) -> str:
        return str(self.data.get("kb_version", "unknown"))

    @property
    def embedder(self) -> str:
        return str(self.data.get("embedder", ""))


def new_build_id() -> str:
    return time.strftime("%Y%m%dT%H%M%S") + f"-{os.getpid()}-{time.monotonic_ns() % 100000:05d}"


def current_build(root: Path) -> Path:
    """The published build directory, or a clear error saying how to create one."""
    link = root / CURRENT
    if not link.exists():
        if link.is_symlink():
            raise KBCorrupt(f"{link} points at a missing build. Run `evigraph kb build` to rebuild the KB.")
        raise KBMissing(f"No knowledge base at {root}. Run `evigraph kb build` (or just `evigraph ask`).")
    return link.resolve()


def read_manifest(build_dir: Path) -> Manifest:
    path = build_dir / MANIFEST
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError as exc:
        raise KBCorrupt(
            f"{build_dir} has no {MANIFEST}: the build is incomplete. Run `evigraph kb build`."
        ) from exc
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise KBCorrupt(f"{path} is unreadable ({exc}). Run `evigraph kb build` to rebuild the KB.") from exc
    if not isinstance(data, dict):
        raise KBCorrupt(f"{path} is not a manifest object. Run `evigraph kb build`.")
    if data.get("schema_version") != SCHEMA_VERSION:
        raise KBIncompatible(
            f"The KB at {build_dir} was built with schema version {data.get('schema_version')}; this "
            f"EviGraph reads version {SCHEMA_VERSION}. Rebuild it with `evigraph kb build`."
        )
    return Manifest(data)


def write_manifest(build_dir: Path, data: dict[str, Any]) -> None:
    """Write the manifest last, atomically: its presence marks the build complete."""
    tmp = build_dir / (MANIFEST + ".tmp")
    with tmp.open("w", encoding="utf-8") as fh:
        json.dump({"schema_version": SCHEMA_VERSION, **data}, fh, indent=2, sort_keys=True)
        fh.flush()
        os.fsync(fh.fileno())
    tmp.replace(build_dir / MANIFEST)


@contextlib.contextmanager
def build_lock(root: Path) -> Iterator[None]:
    """Exclusive, non-blocking lock on the KB root: a second builder fails fast with a clear message."""
    root.mkdir(parents=True, exist_ok=True)
    fh = (root / LOCK).open("a+")
    try:
        try:
            fcntl.flock(fh.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError as exc:
            raise KBLocked(
                f"Another EviGraph build or update is running on {root}. Wait for it to finish and try again."
            ) from exc
        yield
    finally:
        fh.close()


def new_tmp_build(root: Path) -> Path:
    """A fresh temporary build directory; leftovers of killed builds are removed first."""
    builds = root / BUILDS
    builds.mkdir(parents=True, exist_ok=True)
    for stale in builds.glob(".tmp-*"):
        shutil.rmtree(stale, ignore_errors=True)
    tmp = builds / f".tmp-{new_build_id()}"
    tmp.mkdir()
    return tmp


def _fsync_dir(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def publish(root: Path, tmp_build: Path) -> Path:
    """Move a finished build into place and switch ``current`` to it atomically."""
    read_manifest(tmp_build)  # refuse to publish an incomplete build
    final = root / BUILDS / tmp_build.name.removeprefix(".tmp-")
    tmp_build.rename(final)
    _fsync_dir(final.parent)
    link_tmp = root / f".{CURRENT}.tmp"
    with contextlib.suppress(FileNotFoundError):
        link_tmp.unlink()
    link_tmp.symlink_to(Path(BUILDS) / final.name)
    link_tmp.replace(root / CURRENT)
    _fsync_dir(root)
    _prune(root, keep=final)
    return final


def _prune(root: Path, keep: Path) -> None:
    """Keep the published build and the previous one (for rollback); remove older builds."""
    builds = sorted(
        (p for p in (root / BUILDS).iterdir() if p.is_dir() and not p.name.startswith(".")),
        key=lambda p: p.stat().st_mtime,
    )
    old = [p for p in builds if p != keep]
    for p in old[: max(0, len(old) - KEEP_PREVIOUS_BUILDS)]:
        shutil.rmtree(p, ignore_errors=True)


def dir_size(path: Path) -> int:
    return sum(f.stat().st_size for f in path.rglob("*") if f.is_file())
