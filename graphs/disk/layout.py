"""On-disk layout of a knowledge base: builds, the ``current`` pointer, the manifest and the build lock.

Crash safety: a build (or an incremental update) writes a complete new directory under ``builds/`` and only
then swaps the ``current`` symlink with an atomic ``rename``. A killed build leaves a ``.tmp-*`` directory
that the next build removes, and ``current`` still points at the previous, intact build. A lock file held
with ``flock`` stops two builders from running at once (the lock dies with its process, so a crash never
leaves a stale lock).
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import json
import os
import shutil
import sqlite3
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from graphs.disk import integrity
from graphs.model.schema import SCHEMA_VERSION

MANIFEST = "manifest.json"
CURRENT = "current"
MATCHER_FILE = "matcher.pkl"
"""The pickled entity dictionary inside a build."""
VECTORS_DIR = "vectors"
"""The matrix vector index inside a build."""
BUILDS = "builds"
LEASES = "leases"
"""Per-build lease files: a process with a build open holds a shared ``flock`` on one; pruning skips it."""
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
    damaged = integrity.check_manifest(path, data)
    if damaged is not None:
        raise KBCorrupt(damaged.message(integrity.rebuild_hint({})))
    return Manifest(data)


def write_manifest(build_dir: Path, data: dict[str, Any]) -> None:
    """Write the manifest last, atomically: its presence marks the build complete.

    It records every file of the build with its size and checksums (``graphs.disk.integrity``), so a file
    damaged later is noticed when the build is opened.
    """
    sealed = integrity.seal(build_dir, {**data, "schema_version": SCHEMA_VERSION})
    tmp = build_dir / (MANIFEST + ".tmp")
    with tmp.open("w", encoding="utf-8") as fh:
        json.dump(sealed, fh, indent=2, sort_keys=True)
        fh.flush()
        os.fsync(fh.fileno())
    tmp.replace(build_dir / MANIFEST)


def verify_build(build_dir: Path, manifest: Manifest, *, full: bool = False) -> list[integrity.Problem]:
    """Check a build against its integrity record; raise :class:`KBCorrupt` at open, list problems when full.

    At open (``full=False``) the first problem raises, naming the file, what is wrong and the fix; ``evigraph
    kb verify`` (``full=True``) gets every problem back to report.
    """
    if full:
        return integrity.full_problems(build_dir, manifest.data)
    problems = integrity.open_problems(build_dir, manifest.data)
    if problems:
        more = (
            f" ({len(problems) - 1} more problem(s): `evigraph kb verify` lists them)"
            if len(problems) > 1
            else ""
        )
        raise KBCorrupt(problems[0].message(integrity.rebuild_hint(manifest.data)) + more)
    return []


def take_lease(build_dir: Path) -> Any:
    """A held lease on ``build_dir`` (close the returned handle to release it); ``None`` when the KB root is
    read-only (nobody can prune it then)."""
    path = _lease_path(build_dir)
    try:
        path.parent.mkdir(exist_ok=True)
        fh = path.open("a+")
    except OSError:
        return None
    fcntl.flock(fh.fileno(), fcntl.LOCK_SH)
    return fh


def _lease_path(build_dir: Path) -> Path:
    return build_dir.parent.parent / LEASES / f"{build_dir.name}.lock"


def _claim_unused(build_dir: Path) -> Any:
    """An exclusive hold on ``build_dir``'s lease file when no process has the build open, else ``None``.

    Held while the build is removed, so a process opening it meanwhile waits and then sees it gone.
    """
    path = _lease_path(build_dir)
    try:
        fh = path.open("a+")
    except OSError:
        return contextlib.nullcontext()
    try:
        fcntl.flock(fh.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        fh.close()
        return None
    return fh


@contextlib.contextmanager
def build_lock(root: Path) -> Iterator[None]:
    """Exclusive, non-blocking lock on the KB root: a second builder fails fast with a clear message.

    A build or update that fails inside the lock (full disk, read-only directory, any error) leaves nothing
    behind: its ``.tmp-*`` directory is removed before the error propagates, and the storage errors become
    a :class:`KBError` that says what happened and what to do.
    """
    try:
        root.mkdir(parents=True, exist_ok=True)
        fh = (root / LOCK).open("a+")
    except OSError as exc:
        raise _storage_error(root, exc) from exc
    try:
        try:
            fcntl.flock(fh.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError as exc:
            raise KBLocked(
                f"Another EviGraph build or update is running on {root}. Wait for it to finish and try again."
            ) from exc
        try:
            yield
        except BaseException as exc:
            _remove_tmp_builds(root)
            translated = _storage_error(root, exc)
            if translated is not exc:
                raise translated from exc
            raise
    finally:
        fh.close()


DISK_FULL = (errno.ENOSPC, errno.EDQUOT)
READ_ONLY = (errno.EROFS, errno.EACCES, errno.EPERM)


def _storage_error(root: Path, exc: BaseException) -> BaseException:
    """A full disk or a read-only directory as a :class:`KBError` naming the place and the fix, else ``exc``.

    Note: ``sqlite3`` reports ENOSPC as ``OperationalError("database or disk is full")``."""
    text = str(exc).lower()
    if isinstance(exc, shutil.Error):  # copytree gathers its errors: [(src, dst, "[Errno 28] No space …")]
        exc = _first_os_error(exc)
        text = str(exc).lower()
    if (isinstance(exc, OSError) and exc.errno in DISK_FULL) or (
        isinstance(exc, sqlite3.OperationalError) and "disk is full" in text
    ):
        return KBError(
            f"The disk holding {root} is full ({exc}). Nothing was changed: the knowledge base is as it was "
            "and the partial files were removed. Free some space (a build needs about twice the size of "
            "`evigraph kb info`'s total) or set EVIGRAPH_DATA_DIR / --kb-dir to a disk with room, and run "
            "the command again."
        )
    if (isinstance(exc, OSError) and exc.errno in READ_ONLY) or (
        isinstance(exc, sqlite3.OperationalError) and "readonly" in text.replace("-", "")
    ):
        where = getattr(exc, "filename", None) or root
        return KBError(
            f"Cannot write to {where} ({getattr(exc, 'strerror', None) or exc}). Nothing was changed. Make "
            f"{root} writable, or set EVIGRAPH_DATA_DIR (or --kb-dir) to a writable directory."
        )
    return exc


def _first_os_error(exc: shutil.Error) -> BaseException:
    """The first per-file error of a ``copytree`` as the ``OSError`` it was (the message keeps its errno)."""
    for item in exc.args[0] if exc.args and isinstance(exc.args[0], list) else []:
        why = str(item[2]) if len(item) > 2 else ""
        for code in (*DISK_FULL, *READ_ONLY):
            if f"[Errno {code}]" in why:
                return OSError(code, os.strerror(code), item[1])
    return exc


def _remove_tmp_builds(root: Path) -> None:
    """Under the build lock every ``.tmp-*`` build belongs to a failed or killed builder: remove them."""
    for stale in (root / BUILDS).glob(".tmp-*"):
        shutil.rmtree(stale, ignore_errors=True)


SCRATCH = "scratch"
"""Scratch space of running builds (e.g. the default KB's source subset); a dead builder's is swept."""


@contextlib.contextmanager
def scratch_dir(root: Path) -> Iterator[Path]:
    """A fresh scratch directory under ``root`` named after this process, removed on exit; those of dead
    processes are removed first, so a killed build leaks nothing past the next run (unlike one in /tmp)."""
    base = root / SCRATCH
    try:
        base.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise _storage_error(root, exc) from exc
    for old in base.iterdir():
        pid = old.name.split("-")[0]
        if pid.isdigit() and not _alive(int(pid)):
            shutil.rmtree(old, ignore_errors=True)
    target = base / f"{os.getpid()}-{time.monotonic_ns()}"
    target.mkdir()
    try:
        yield target
    finally:
        shutil.rmtree(target, ignore_errors=True)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def new_tmp_build(root: Path) -> Path:
    """A fresh temporary build directory; leftovers of killed builds are removed first."""
    builds = root / BUILDS
    builds.mkdir(parents=True, exist_ok=True)
    _remove_tmp_builds(root)
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
    # The build's mtime is its publish time: pruning orders builds by it, and a copied build
    # (copytree keeps the source's mtime) would otherwise tie with its source and prune at random.
    os.utime(final)
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
    """Keep the published build and the previous one (for rollback); remove older builds that no process
    holds a lease on (a running server keeps its build until it switches; a later publish prunes it)."""
    builds = sorted(
        (p for p in (root / BUILDS).iterdir() if p.is_dir() and not p.name.startswith(".")),
        key=lambda p: (p.stat().st_mtime_ns, p.name),
    )
    old = [p for p in builds if p != keep]
    for p in old[: max(0, len(old) - KEEP_PREVIOUS_BUILDS)]:
        claim = _claim_unused(p)
        if claim is None:
            continue
        with claim:
            shutil.rmtree(p, ignore_errors=True)
            with contextlib.suppress(OSError):
                _lease_path(p).unlink()


def dir_size(path: Path) -> int:
    return sum(f.stat().st_size for f in path.rglob("*") if f.is_file())
