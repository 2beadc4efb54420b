"""The streamed turns running in this server process, by consult id, so the page's Stop button can cancel one.

Why a registry: a streamed turn runs as its own task so that a client that hangs up never loses it
(:func:`agent.frontends.http_app.stream_turn`); closing the connection therefore cannot stop it. Stop is an
explicit request that cancels the task: the service releases the consult's lock, a new consult whose first
turn was stopped is deleted, and an existing consult keeps every earlier turn. With ``serve --workers N``
only the process that runs the turn can stop it; the others answer that nothing is running here.
"""

from __future__ import annotations

import asyncio
from typing import Any


class RunningTurns:
    """Strong references to running turn tasks (a task nobody references may be garbage-collected)."""

    def __init__(self) -> None:
        self._turns: dict[str, asyncio.Future[Any]] = {}

    def add(self, consult_id: str, turn: asyncio.Future[Any]) -> None:
        self._turns[consult_id] = turn

        def forget(done: asyncio.Future[Any]) -> None:
            if self._turns.get(consult_id) is done:
                del self._turns[consult_id]

        turn.add_done_callback(forget)

    def running(self, consult_id: str) -> bool:
        turn = self._turns.get(consult_id)
        return turn is not None and not turn.done()

    def stop(self, consult_id: str) -> bool:
        """Cancel the consult's running turn; False when none runs in this process."""
        turn = self._turns.get(consult_id)
        if turn is None or turn.done():
            return False
        turn.cancel()
        return True


RUNNING = RunningTurns()
STOPPED_MESSAGE = "The turn was stopped; the consult keeps its earlier turns."
STOPPED_STATUS = 499
"""The ``status`` of the stream's ``error`` event for a stopped turn ("client closed request")."""
