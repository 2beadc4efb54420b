"""One writer per consult, across threads, tasks and processes: the lock a turn holds while it runs.

Why: a turn reads the consult's last checkpoint, runs, and writes the next one. Two turns of one consult
running at once (the CLI and the server, two HTTP requests, two server processes) both start from the same
checkpoint and one of them silently replaces the other's turn. Holding this lock around the whole turn
makes the second writer wait; if it cannot get the lock within ``wait_s`` it gets ``ConsultBusy`` (HTTP 409)
— a loud refusal, never a lost turn. Reads (history, ``consult_exists``) never take it.

How: an OS file lock (``filelock``, ``flock`` on POSIX: released by the kernel when a process dies, so a
crash leaves no stale lock) on ``<data_dir>/locks/<hash of the id>.lock``, shared by every process that uses
the same data dir. Within one process an ``asyncio``/``threading`` wait would also do, but the file lock
covers both cases with one mechanism. Consults checkpointed in a Postgres server shared by several hosts
need the processes to share the data dir as well (or run on one host): the lock is a file, not a row.
"""

from __future__ import annotations

import asyncio
import hashlib
import time
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager
from pathlib import Path

from filelock import FileLock, Timeout

from agent.errors import UserError

DEFAULT_WAIT_S = 120.0
"""How long a second turn on a busy consult waits before it is refused (a turn takes seconds; an LLM turn
is bounded by its deadline)."""
POLL_S = 0.05


class ConsultBusy(UserError):
    """Another turn of this consult is running and did not finish within the wait."""

    def __init__(self, consult_id: str, waited_s: float) -> None:
        super().__init__(
            f"Consult '{consult_id}' is busy: another turn of it is still running (waited {waited_s:.0f} s). "
            "Send this question again when that turn has finished."
        )
        self.consult_id = consult_id
        self.waited_s = waited_s


class ConsultLocks:
    """The per-consult writer locks of one data dir."""

    def __init__(self, lock_dir: Path, wait_s: float = DEFAULT_WAIT_S) -> None:
        self.lock_dir = lock_dir
        self.wait_s = wait_s

    def lock_path(self, consult_id: str) -> Path:
        """A file name that any consult id maps to safely (ids come from clients and Slack threads)."""
        digest = hashlib.sha256(consult_id.encode("utf-8", "surrogatepass")).hexdigest()[:32]
        return self.lock_dir / f"{digest}.lock"

    def _file_lock(self, consult_id: str) -> FileLock:
        self.lock_dir.mkdir(parents=True, exist_ok=True)
        # thread_local=False: a lock taken in one thread may be released in another (asyncio executors).
        return FileLock(self.lock_path(consult_id), thread_local=False, is_singleton=False)

    @contextmanager
    def hold(self, consult_id: str, wait_s: float | None = None) -> Iterator[None]:
        """Hold the consult's lock (blocking, for threads); ``ConsultBusy`` after ``wait_s`` seconds."""
        wait = self.wait_s if wait_s is None else wait_s
        lock = self._file_lock(consult_id)
        try:
            lock.acquire(timeout=wait, poll_interval=POLL_S)
        except Timeout:
            raise ConsultBusy(consult_id, wait) from None
        try:
            yield
        finally:
            lock.release()

    @asynccontextmanager
    async def ahold(self, consult_id: str, wait_s: float | None = None) -> AsyncIterator[None]:
        """Hold the consult's lock without blocking the event loop: non-blocking tries, then a short sleep."""
        wait = self.wait_s if wait_s is None else wait_s
        lock = self._file_lock(consult_id)
        deadline = time.monotonic() + wait
        while True:
            try:
                lock.acquire(blocking=False)
                break
            except Timeout:
                if time.monotonic() >= deadline:
                    raise ConsultBusy(consult_id, wait) from None
                await asyncio.sleep(POLL_S)
        try:
            yield
        finally:
            lock.release()

    def is_held(self, consult_id: str) -> bool:
        """True when some turn holds the consult's lock right now (for tests and diagnostics)."""
        lock = self._file_lock(consult_id)
        try:
            lock.acquire(blocking=False)
        except Timeout:
            return True
        lock.release()
        return False


def consult_locks(data_dir: Path, wait_s: float = DEFAULT_WAIT_S) -> ConsultLocks:
    """The locks every process using ``data_dir`` shares."""
    return ConsultLocks(data_dir / "locks", wait_s)
