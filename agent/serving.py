"""The consult service the network front ends share: async turns, bounded admission, live KB switching.

Why async: the graph runs with ``astream`` on an async checkpointer, so independent consults run side by
side (their sync nodes on worker threads) up to ``max_parallel_turns``, while history reads and health
checks are answered at once instead of waiting behind a running turn. Admission is bounded: at most
``max_parallel_turns + max_queued_turns`` turns are admitted; the next one is refused with ``ServerBusy``
(HTTP 429 + Retry-After) instead of piling up until clients time out.

One writer per consult: a turn holds its consult's lock (:mod:`agent.consult_lock`) for its whole run,
across processes, so two writers never fork a consult and lose a turn; reads never take it.

Live KB updates: before each turn the service compares the published build (``current_build``) with the one
it has open (at most once per ``kb_check_interval_s``); on a change it opens the new build and runs new
turns on it, and closes the old one when its last running turn ends. A turn never changes KB midway.

The Slack bot and the MCP server use this service too, from worker threads, through
:class:`agent.service_runner.ServiceRunner`.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import AsyncIterator, Callable
from concurrent.futures import ThreadPoolExecutor
from contextlib import asynccontextmanager
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, TypeVar

from langchain_core.language_models import BaseChatModel
from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.graph.state import CompiledStateGraph
from pydantic import Field, SecretStr
from pydantic_settings import BaseSettings, SettingsConfigDict

from agent.consult import Event, TurnResult, prepare_turn, turn_config, turn_result
from agent.consult_lock import ConsultLocks, consult_locks
from agent.deps import ConsultDeps
from agent.errors import UserError
from agent.graph import build_consult_graph
from agent.sanitize import clean_payload, clean_text
from agent.sessions import (
    aconsult_exists,
    new_consult_id,
    open_async_checkpointer,
    thread_config,
)
from graphs.disk.layout import KBError, current_build
from graphs.kb import KnowledgeBase, open_kb
from graphs.model.settings import Settings

log = logging.getLogger("evigraph.serving")
T = TypeVar("T")


class ServeSettings(BaseSettings):
    """Limits of a serving process (environment ``EVIGRAPH_…``; defaults suit a 2–4 core machine)."""

    model_config = SettingsConfigDict(env_prefix="EVIGRAPH_", env_file=".env", extra="ignore")

    api_token: SecretStr | None = Field(default=None, description="Bearer token the HTTP API requires.")
    max_parallel_turns: int = Field(default=4, ge=1, description="Turns that run at the same time.")
    max_queued_turns: int = Field(default=64, ge=0, description="Turns that may wait for a free slot.")
    turn_lock_wait_s: float = Field(default=120.0, gt=0, description="Wait for a busy consult, then 409.")
    step_timeout_s: float = Field(
        default=120.0, gt=0, description="One graph step (a store query, an LLM call) longer than this fails."
    )
    body_timeout_s: float = Field(default=10.0, gt=0, description="Time to receive a request body.")
    max_body_bytes: int = Field(default=200_000, ge=1_000)
    kb_check_interval_s: float = Field(default=1.0, ge=0, description="How often to look for a new build.")


class ServerBusy(UserError):
    """Every turn slot and queue place is taken: come back after ``retry_after_s``."""

    def __init__(self, admitted: int, retry_after_s: int) -> None:
        super().__init__(
            f"The server is busy ({admitted} turns running or queued). Retry in {retry_after_s} s."
        )
        self.retry_after_s = retry_after_s


class UnknownConsult(UserError):
    """A consult id that matches nothing (404 over HTTP)."""


@dataclass
class KbSlot:
    """One opened build and the graph compiled over it, with the number of turns running on it."""

    kb: KnowledgeBase
    graph: CompiledStateGraph[Any, Any, Any, Any]
    owned: bool
    """Opened by the service (so closed by it); a KB handed in by the caller is the caller's to close."""
    users: int = 0
    retired: bool = False


class ConsultService:
    """Async consult turns over one KB (switched live), an async checkpointer and an optional LLM."""

    def __init__(
        self,
        settings: Settings,
        limits: ServeSettings,
        checkpointer: BaseCheckpointSaver[Any],
        kb: KnowledgeBase,
        llm: BaseChatModel | None,
        *,
        kb_owned: bool = False,
    ) -> None:
        self.settings = settings
        self.limits = limits
        self.checkpointer = checkpointer
        self.llm = llm
        self.locks: ConsultLocks = consult_locks(settings.data_dir, limits.turn_lock_wait_s)
        self._slot = self._make_slot(kb, owned=kb_owned)
        self._slots = asyncio.Semaphore(limits.max_parallel_turns)
        self._admitted = 0
        self._running = 0
        self._switch_lock = asyncio.Lock()
        self._next_kb_check = 0.0

    @classmethod
    @asynccontextmanager
    async def open(
        cls,
        settings: Settings,
        limits: ServeSettings | None = None,
        *,
        kb: KnowledgeBase | None = None,
        llm: BaseChatModel | None = None,
    ) -> AsyncIterator[ConsultService]:
        """A service for the ``async with`` block (the KB it opened itself is closed at the end)."""
        limits = limits or ServeSettings()
        # Every running turn holds a worker thread for its sync nodes, and an LLM call holds it until the
        # turn's deadline. asyncio's default pool has min(32, cores + 4) threads — 6 here — so 20 turns
        # against a hung endpoint ended in waves: 33 s median for a 10 s deadline (bench_hung_server.py).
        # The pool fits the turns the service admits to run at once, plus a few for history reads.
        asyncio.get_running_loop().set_default_executor(
            ThreadPoolExecutor(max_workers=limits.max_parallel_turns + 4, thread_name_prefix="evigraph-turn")
        )
        owned = kb is None
        opened = kb if kb is not None else await asyncio.to_thread(open_kb, settings)
        service: ConsultService | None = None
        try:
            async with open_async_checkpointer(settings, pool_size=limits.max_parallel_turns + 1) as saver:
                service = cls(settings, limits, saver, opened, llm, kb_owned=owned)
                yield service
        finally:
            if service is not None:
                service.close_kb()
            elif owned:
                opened.close()

    # ----- state -----
    @property
    def kb(self) -> KnowledgeBase:
        return self._slot.kb

    @property
    def mode(self) -> str:
        return "llm" if self.llm is not None else "offline"

    @property
    def admitted(self) -> int:
        """Turns running or waiting for a slot right now."""
        return self._admitted

    def _make_slot(self, kb: KnowledgeBase, *, owned: bool) -> KbSlot:
        graph = build_consult_graph(ConsultDeps(kb, self.llm), self.checkpointer)
        # A step that hangs (a frozen graph store, a stuck socket) fails the turn instead of holding it.
        graph.step_timeout = self.limits.step_timeout_s
        return KbSlot(kb=kb, graph=graph, owned=owned)

    # ----- turns -----
    async def ask(
        self,
        question: str,
        consult_id: str | None = None,
        task: str = "auto",
        on_event: Callable[[Event], None] | None = None,
        start_if_missing: bool = False,
    ) -> TurnResult:
        """Run one turn (a new consult when ``consult_id`` is None) — ``Consultant.ask``, async.

        Raises ``UserError`` for bad input, ``UnknownConsult``, ``ServerBusy`` (admission full) and
        ``ConsultBusy`` (the consult's other turn did not end within the lock wait). A new consult whose
        first turn fails is deleted, so a failure never leaves an empty consult behind.
        """
        arrived = time.monotonic()  # the turn's deadline counts from here, queueing included
        text, ctx = prepare_turn(question, task)
        capacity = self.limits.max_parallel_turns + self.limits.max_queued_turns
        if self._admitted >= capacity:
            raise ServerBusy(self._admitted, retry_after_s=max(1, round(self._admitted / capacity * 2)))
        if consult_id is not None and not start_if_missing and not await self.exists(consult_id):
            raise UnknownConsult(f"No consult '{consult_id}'. Start one with POST /v1/consults.")
        cid = consult_id or new_consult_id()
        self._admitted += 1
        try:
            async with self.locks.ahold(cid):
                is_new = not await self.exists(cid)
                async with self._slots:
                    slot = await self._current_slot()
                    slot.users += 1
                    self._running += 1
                    timed = replace(ctx, started_at=arrived, turns_running=self._running)
                    try:
                        return await self._run(slot, text, cid, timed, on_event)
                    except BaseException:
                        if is_new:
                            await self._forget(cid)
                        raise
                    finally:
                        self._running -= 1
                        slot.users -= 1
                        self._close_if_idle(slot)
        finally:
            self._admitted -= 1

    async def _run(
        self,
        slot: KbSlot,
        text: str,
        cid: str,
        ctx: Any,
        on_event: Callable[[Event], None] | None,
    ) -> TurnResult:
        config = turn_config(cid, ctx)
        started = time.perf_counter()
        async for event in slot.graph.astream(
            {"question": text}, config=config, context=ctx, stream_mode="custom", durability="sync"
        ):
            if on_event is not None and isinstance(event, dict):
                on_event(event)  # steps, and {"step": "token", "text": …} as the answer node streams
        state = await slot.graph.aget_state(config)
        return turn_result(cid, state.values, started)

    async def _forget(self, consult_id: str) -> None:
        try:
            await self.checkpointer.adelete_thread(consult_id)
        except Exception:  # the original failure matters more; this one is only logged
            log.exception("could not delete the failed new consult %s", consult_id)

    # ----- reads (never wait for a turn) -----
    async def exists(self, consult_id: str) -> bool:
        return await aconsult_exists(self.checkpointer, consult_id)

    async def history(self, consult_id: str) -> list[dict[str, Any]] | None:
        """Every finished turn of a consult, or None when there is no such consult."""
        if not await self.exists(consult_id):
            return None
        state = await self._slot.graph.aget_state(thread_config(consult_id))  # type: ignore[arg-type]
        return clean_payload(list(state.values.get("turns", [])))  # KB text, shown by HTTP clients

    async def use_kb(self, read: Callable[[KnowledgeBase], T]) -> T:
        """``read(kb)`` on a worker thread over the newest published build (MCP's retrieval tools), which
        stays open until ``read`` returns even if a live switch retires it meanwhile."""
        return await self._read(await self._current_slot(), read)

    async def evidence_texts(self, evidence_ids: list[str]) -> dict[str, str]:
        """The passage text of each evidence id (what citations are shown with), from the KB in use (no
        check for a newer build: the ids were just cited from this one)."""

        def read(kb: KnowledgeBase) -> dict[str, str]:
            found = kb.store.get_evidence(list(dict.fromkeys(evidence_ids)))
            return {evidence_id: clean_text(record.text) for evidence_id, record in found.items()}

        return await self._read(self._slot, read)

    async def _read(self, slot: KbSlot, read: Callable[[KnowledgeBase], T]) -> T:
        slot.users += 1
        try:
            return await asyncio.to_thread(read, slot.kb)
        finally:
            slot.users -= 1
            self._close_if_idle(slot)

    async def checkpointer_ok(self) -> None:
        """Raise if the consult store cannot answer a read (for /readyz)."""
        await self.checkpointer.aget_tuple(thread_config("__readyz__"))  # type: ignore[arg-type]

    # ----- live KB switching -----
    async def _current_slot(self) -> KbSlot:
        now = time.monotonic()
        if now < self._next_kb_check:
            return self._slot
        self._next_kb_check = now + self.limits.kb_check_interval_s
        async with self._switch_lock:
            try:
                published = await asyncio.to_thread(current_build, self.settings.kb_root)
            except KBError as exc:  # a publish in progress or a removed root: keep serving what is open
                log.warning("cannot read the published KB build (%s); keeping %s", exc, self.kb.version)
                return self._slot
            if _same_dir(published, self._slot.kb.build_dir):
                return self._slot
            try:
                kb = await asyncio.to_thread(open_kb, self.settings)
            except Exception as exc:
                log.warning("new KB build %s does not open (%s); keeping %s", published, exc, self.kb.version)
                return self._slot
            old, self._slot = self._slot, self._make_slot(kb, owned=True)
            old.retired = True
            log.info("switched KB %s -> %s", old.kb.version, kb.version)
            self._close_if_idle(old)
            return self._slot

    def _close_if_idle(self, slot: KbSlot) -> None:
        if slot.retired and slot.users == 0 and slot.owned:
            slot.owned = False  # close once
            slot.kb.close()

    def close_kb(self) -> None:
        """Close the KB builds this service opened itself (at shutdown)."""
        slot = self._slot
        if slot.owned:
            slot.owned = False
            slot.kb.close()


def _same_dir(a: Path, b: Path) -> bool:
    try:
        return a.resolve() == b.resolve()
    except OSError:
        return a == b
