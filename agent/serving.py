"""What the network front ends (Slack bot, HTTP API) share: one consult turn at a time per ``Consultant``.

Why a lock: both servers answer requests on several threads, but a ``Consultant`` holds one KB whose SQLite
store (and lazily loaded embedder and matcher) must not be used from two threads at once. Turns are short
next to the time people take to type, so running them one after another costs little. The lock belongs to
the ``Consultant`` (a registry keyed on it), so a Slack app and an HTTP server built over the same one in one
process still share it.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any
from weakref import WeakKeyDictionary

from agent.consult import Consultant, Event, TurnResult
from agent.sessions import consult_exists

_LOCKS: WeakKeyDictionary[Consultant, threading.Lock] = WeakKeyDictionary()
_REGISTRY_LOCK = threading.Lock()


def turn_lock(consultant: Consultant) -> threading.Lock:
    """The one lock every front end takes around work on ``consultant`` (created on first use)."""
    with _REGISTRY_LOCK:
        lock = _LOCKS.get(consultant)
        if lock is None:
            lock = _LOCKS[consultant] = threading.Lock()
        return lock


def run_turn(
    consultant: Consultant,
    question: str,
    *,
    consult_id: str | None = None,
    task: str = "auto",
    start_if_missing: bool = False,
    on_event: Callable[[Event], None] | None = None,
) -> TurnResult:
    """``Consultant.ask`` under the consultant's lock (raises ``UserError`` for input a person can fix)."""
    with turn_lock(consultant):
        return consultant.ask(
            question, consult_id=consult_id, task=task, on_event=on_event, start_if_missing=start_if_missing
        )


def evidence_texts(consultant: Consultant, evidence_ids: list[str]) -> dict[str, str]:
    """The passage text of each cited evidence id, read from the KB store under the lock."""
    with turn_lock(consultant):
        return consultant.evidence_texts(evidence_ids)


def consult_turns(consultant: Consultant, consult_id: str) -> list[dict[str, Any]] | None:
    """Every finished turn of a consult, or None when there is no such consult."""
    with turn_lock(consultant):
        if not consult_exists(consultant.checkpointer, consult_id):
            return None
        return consultant.history(consult_id)


def known_consult(consultant: Consultant, consult_id: str) -> bool:
    with turn_lock(consultant):
        return consult_exists(consultant.checkpointer, consult_id)
