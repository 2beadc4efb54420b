"""Bounds on LLM calls: one deadline per consult turn that all its calls share, and a circuit breaker.

Why: a hung endpoint used to cost timeout × (retries + 1) per step and five steps per turn (≥ 540 s), and
every step retried an endpoint that had just failed. Now a turn's LLM calls share one deadline (a call
still running when it passes is abandoned and its step falls back offline), and after
``BREAKER_THRESHOLD`` consecutive endpoint failures the LLM is skipped for a cool-down instead of being
retried at every step. Both are process-wide and keyed so concurrent consults do not share a deadline.

The turn is identified by LangGraph's ``thread_id`` (one writer per consult): the first LLM step of a turn
(``hypothesis``) starts the deadline, later steps read it through :func:`current_deadline`.
"""

from __future__ import annotations

import contextvars
import os
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TypeVar

T = TypeVar("T")
BREAKER_THRESHOLD = 2
_lock = threading.Lock()
_deadlines: dict[str, float] = {}
_breakers: dict[str, Breaker] = {}


class DeadlineExceeded(TimeoutError):
    """The turn's LLM deadline passed before the call returned."""


class BreakerOpen(RuntimeError):
    """The endpoint failed repeatedly; it is skipped until the cool-down ends."""


def _thread_id() -> str | None:
    """The running consult's thread id, or ``None`` outside a graph run (direct calls, tests)."""
    try:
        from langgraph.config import get_config

        return str(get_config().get("configurable", {}).get("thread_id") or "") or None
    except RuntimeError:
        return None


# Seconds an offline finish takes after the LLM gives up (the rest of one turn on one core: ner_link to
# answer, p90 of evals/bench_consult.py's offline turns ≈ 0.75 s). The LLM's share of the turn deadline
# ends this long before the deadline, so the turn as a whole — the user's wait — ends by it (issue 23).
OFFLINE_FINISH_S = 0.8


def offline_reserve(seconds: float, turns_running: int = 1, cores: int | None = None) -> float:
    """Time kept back from a ``seconds`` turn deadline for the offline finish.

    Turns running side by side share the cores, so their offline finishes queue: 20 turns on 2 cores
    against a hung endpoint ended 4 s after their LLM calls gave up (evals/bench_hung_server.py). The
    reserve grows with turns per core, but never past half the deadline: under load a healthy endpoint
    still gets at least half the turn.
    """
    per_core = max(1.0, turns_running / max(1, cores or os.cpu_count() or 1))
    return min(OFFLINE_FINISH_S * per_core, seconds / 2)


def start_turn_deadline(seconds: float, started_at: float | None = None, turns_running: int = 1) -> float:
    """Start this turn's LLM deadline (monotonic seconds) for the running consult; returns it.

    The deadline is ``seconds`` after ``started_at`` (when the user's wait began; now when None) less the
    :func:`offline_reserve`, so an LLM that never answers still leaves the turn ending within ``seconds``.
    """
    begin = time.monotonic() if started_at is None else started_at
    deadline = begin + seconds - offline_reserve(seconds, turns_running)
    key = _thread_id()
    if key is not None:
        with _lock:
            now = time.monotonic()
            for old in [k for k, v in _deadlines.items() if v < now - 3600]:
                del _deadlines[old]
            _deadlines[key] = deadline
    return deadline


def current_deadline() -> float | None:
    """The running turn's deadline, if its first LLM step set one."""
    key = _thread_id()
    if key is None:
        return None
    with _lock:
        return _deadlines.get(key)


@dataclass
class Breaker:
    """Consecutive-failure circuit breaker for one endpoint."""

    cooldown_s: float
    failures: int = 0
    open_until: float = 0.0
    last_error: str = ""
    lock: threading.Lock = field(default_factory=threading.Lock)

    def check(self) -> None:
        with self.lock:
            wait = self.open_until - time.monotonic()
            if wait > 0:
                raise BreakerOpen(
                    f"LLM skipped for {wait:.0f} s more: the endpoint failed {self.failures} times in a "
                    f"row (last: {self.last_error})"
                )

    def failure(self, reason: str) -> None:
        with self.lock:
            self.failures += 1
            self.last_error = reason[:160]
            if self.failures >= BREAKER_THRESHOLD:
                self.open_until = time.monotonic() + self.cooldown_s

    def success(self) -> None:
        with self.lock:
            self.failures, self.open_until = 0, 0.0


def breaker_for(endpoint: str, cooldown_s: float) -> Breaker:
    """The process-wide breaker of ``endpoint`` (base URL + model)."""
    with _lock:
        if endpoint not in _breakers:
            _breakers[endpoint] = Breaker(cooldown_s)
        return _breakers[endpoint]


def reset_breakers() -> None:
    """Forget every breaker (tests; ``evigraph llm serve`` after a restart)."""
    with _lock:
        _breakers.clear()


def run_within(fn: Callable[[], T], deadline: float | None) -> T:
    """``fn()``, abandoned with :class:`DeadlineExceeded` if it has not returned by ``deadline``.

    The call runs in a daemon thread with the caller's context (LangChain callbacks and LangGraph's stream
    writer live in context variables); an abandoned call ends on its own client timeout.
    """
    if deadline is None:
        return fn()
    remaining = deadline - time.monotonic()
    if remaining <= 0:
        raise DeadlineExceeded("the turn's LLM deadline has passed")
    box: dict[str, object] = {}
    ctx = contextvars.copy_context()

    def target() -> None:
        try:
            box["value"] = ctx.run(fn)
        except BaseException as exc:  # handed to the caller below
            box["error"] = exc

    worker = threading.Thread(target=target, name="llm-call", daemon=True)
    worker.start()
    worker.join(remaining)
    if worker.is_alive():
        raise DeadlineExceeded("no reply before the turn's LLM deadline")
    if "error" in box:
        raise box["error"]  # type: ignore[misc]
    return box["value"]  # type: ignore[return-value]
