"""A blocking face on the async ``ConsultService``, for front ends that answer on worker threads (Slack, MCP).

Why: the Slack bot answers in bolt's listener threads and the MCP server's tools hand work to threads, but
their turns must get what the HTTP API's get — consults side by side up to ``max_parallel_turns``, bounded
admission, one writer per consult across processes, live KB switching. So the runner owns one event loop in
a daemon thread, opens the service there, and hands each call to it (``run_coroutine_threadsafe``): a
calling thread waits only for its own turn, never behind another consult's.

Progress callbacks never run on the loop: Slack's makes blocking HTTP calls, which would stall every other
turn. The service's callback only queues the events; the calling thread runs the caller's callback on them
while it waits for its turn to end.
"""

from __future__ import annotations

import asyncio
import logging
import queue
import threading
from collections.abc import Callable, Coroutine
from concurrent.futures import Future
from typing import Any, TypeVar

from langchain_core.language_models import BaseChatModel
from langgraph.checkpoint.base import BaseCheckpointSaver

from agent.consult import Event, TurnResult
from agent.serving import ConsultService, ServeSettings
from agent.sessions import open_checkpointer
from graphs.kb import KnowledgeBase
from graphs.model.settings import Settings

log = logging.getLogger("evigraph.serving")
T = TypeVar("T")
_Opened = tuple[ConsultService, asyncio.AbstractEventLoop, asyncio.Event]
_TURN_ENDED = object()
"""Queued after a turn's last event: the waiting thread stops reading events there."""


class ServiceRunner:
    """A ``ConsultService`` on its own event-loop thread, with blocking methods for any other thread."""

    def __init__(
        self,
        settings: Settings,
        limits: ServeSettings | None = None,
        *,
        kb: KnowledgeBase | None = None,
        llm: BaseChatModel | None = None,
    ) -> None:
        """Open the service (its KB, unless ``kb`` is given, and its async consult store); a failure to
        open (a consult store that cannot be used, …) is raised here, as ``UserError`` where it can."""
        self.settings = settings
        opened: Future[_Opened] = Future()
        self._thread = threading.Thread(
            target=self._main, args=(limits, kb, llm, opened), name="evigraph-consult-service", daemon=True
        )
        self._thread.start()
        self.service, self._loop, self._stop = opened.result()
        self._sync_store: BaseCheckpointSaver[Any] | None = None
        self._store_lock = threading.Lock()

    def _main(
        self,
        limits: ServeSettings | None,
        kb: KnowledgeBase | None,
        llm: BaseChatModel | None,
        opened: Future[_Opened],
    ) -> None:
        async def live() -> None:
            stop = asyncio.Event()
            async with ConsultService.open(self.settings, limits, kb=kb, llm=llm) as service:
                opened.set_result((service, asyncio.get_running_loop(), stop))
                await stop.wait()

        try:
            asyncio.run(live())  # at the end: tasks left are cancelled, the loop's worker threads joined
        except BaseException as exc:
            if opened.done():
                log.exception("the consult service stopped with an error")
            else:
                opened.set_exception(exc)  # raised by the constructor

    def call(self, work: Coroutine[Any, Any, T]) -> T:
        """Run a coroutine on the service's loop and wait for its result (from any thread but the loop's)."""
        return asyncio.run_coroutine_threadsafe(work, self._loop).result()

    def ask(
        self,
        question: str,
        consult_id: str | None = None,
        task: str = "auto",
        start_if_missing: bool = False,
        on_event: Callable[[Event], None] | None = None,
    ) -> TurnResult:
        """``ConsultService.ask``, blocking until the turn ends; ``on_event`` runs on this thread, for each
        event in order. Should it raise, the turn is cancelled and the error raised here."""
        events: queue.SimpleQueue[Any] = queue.SimpleQueue()
        turn = asyncio.run_coroutine_threadsafe(
            self.service.ask(
                question,
                consult_id,
                task,
                on_event=events.put if on_event is not None else None,
                start_if_missing=start_if_missing,
            ),
            self._loop,
        )
        if on_event is not None:
            turn.add_done_callback(lambda _: events.put(_TURN_ENDED))  # after the turn's last event
            try:
                for event in iter(events.get, _TURN_ENDED):
                    on_event(event)
            except BaseException:
                turn.cancel()
                raise
        return turn.result()

    def history(self, consult_id: str) -> list[dict[str, Any]] | None:
        """Every finished turn of a consult, or None when there is none (never waits for a running turn)."""
        return self.call(self.service.history(consult_id))

    def exists(self, consult_id: str) -> bool:
        return self.call(self.service.exists(consult_id))

    def evidence_texts(self, evidence_ids: list[str]) -> dict[str, str]:
        """The passage text of each cited evidence id, from the KB in use."""
        return self.call(self.service.evidence_texts(evidence_ids))

    def use_kb(self, read: Callable[[KnowledgeBase], T]) -> T:
        """``read(kb)`` over the newest published build, kept open while it runs (MCP's retrieval tools)."""
        return self.call(self.service.use_kb(read))

    @property
    def kb(self) -> KnowledgeBase:
        """The KB build turns run on now (a live switch replaces it)."""
        return self.service.kb

    @property
    def checkpointer(self) -> BaseCheckpointSaver[Any]:
        """A sync connection to the same consult store, for callers that need one (Slack's delivery log);
        turns use the service's async one. Opened on first use, closed by ``close``."""
        with self._store_lock:
            if not self._thread.is_alive():
                raise RuntimeError("the consult service is closed")
            if self._sync_store is None:
                self._sync_store = open_checkpointer(self.settings)
            return self._sync_store

    def close(self) -> None:
        """Stop the service (closing the KB it opened and its consult store) and its loop; idempotent."""
        if self._thread.is_alive():
            self._loop.call_soon_threadsafe(self._stop.set)
            self._thread.join()
        with self._store_lock:
            if self._sync_store is not None:
                self._sync_store.conn.close()  # type: ignore[attr-defined]  # SqliteSaver, PostgresSaver
                self._sync_store = None
