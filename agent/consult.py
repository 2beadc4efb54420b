"""``Consultant``: the one entry point the front ends use — ask a question in a consult, get a cited answer.

It validates the question, builds the graph once (KB, optional LLM, checkpointer), runs a turn with the
run's context and an explicit recursion limit, streams progress events to a callback, and returns the answer
with the turn's trace and LLM usage. Errors a person can act on are raised as ``UserError``.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any

from langchain_core.language_models import BaseChatModel
from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.base import BaseCheckpointSaver

from agent.consult_lock import consult_locks
from agent.context import TASKS, ConsultContext
from agent.deps import ConsultDeps
from agent.errors import UserError
from agent.graph import build_consult_graph, recursion_limit
from agent.llm import make_chat_model
from agent.sanitize import clean_payload, clean_text
from agent.sessions import consult_exists, new_consult_id, open_checkpointer, thread_config
from graphs.kb import KnowledgeBase, open_kb
from graphs.model.settings import Settings

MAX_INPUT_CHARS = 50_000
Event = dict[str, Any]


@dataclass
class TurnResult:
    consult_id: str
    answer: dict[str, Any]
    trace: list[dict[str, Any]]
    llm_calls: int
    llm_tokens: int
    seconds: float
    turns: list[dict[str, Any]] = field(default_factory=list)

    def payload(self) -> dict[str, Any]:
        """The turn as machines get it (``evigraph ask --json``, the HTTP API)."""
        return {
            "consult_id": self.consult_id,
            "answer": self.answer,
            "llm_calls": self.llm_calls,
            "llm_tokens": self.llm_tokens,
            "seconds": self.seconds,
            "trace": self.trace,
        }


def turn_result(consult_id: str, state: dict[str, Any], started: float) -> TurnResult:
    """The finished turn as the front ends get it, from the consult's state after the run; its text is
    cleaned of control and escape sequences, because every front end shows it and it carries KB text."""
    return TurnResult(
        consult_id=consult_id,
        answer=clean_payload(dict(state.get("answer", {}))),
        trace=clean_payload(list(state.get("trace", []))),
        llm_calls=int(state.get("llm_calls", 0)),
        llm_tokens=int(state.get("llm_tokens", 0)),
        seconds=round(time.perf_counter() - started, 3),
        turns=clean_payload(list(state.get("turns", []))),
    )


def prepare_turn(
    question: str, task: str, context: ConsultContext | None = None
) -> tuple[str, ConsultContext]:
    """The question as it is checkpointed and the run context of its turn; ``UserError`` for bad input.

    Shared by the sync ``Consultant.ask`` and the async serving path, so both refuse the same input with
    the same words before anything is written to the consult store.
    """
    text = (question or "").strip()
    if not text:
        raise UserError(
            "The question is empty. Type a clinical question, e.g. "
            '"What is the first-line treatment for type 2 diabetes?"'
        )
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        # Bytes that are not UTF-8 reach Python as lone surrogates (stdin, argv): one plain line here, not a
        # validation dump from the first tool that reads the question.
        raise UserError(
            "The question is not valid UTF-8 text (it holds bytes of another encoding). Save or paste it as "
            "UTF-8, e.g. `iconv -f latin1 -t utf-8 question.txt | evigraph ask -`."
        ) from None
    check_task(task)
    original_chars = len(text)
    if original_chars > MAX_INPUT_CHARS:
        # Bound what is checkpointed; start_turn cuts further and warns with the original size.
        text = text[:MAX_INPUT_CHARS]
    base = context or ConsultContext()
    extra = {**base.extra, "input_chars": original_chars}
    return text, replace(base, task=task, extra=extra)  # type: ignore[arg-type]  # task validated above


def turn_config(consult_id: str, ctx: ConsultContext) -> RunnableConfig:
    """The run config of one turn: the consult's thread and an explicit step budget."""
    return {**thread_config(consult_id), "recursion_limit": recursion_limit(ctx)}  # type: ignore[typeddict-item]


def check_task(task: str) -> None:
    """Refuse a task name that is neither ``auto`` nor one of the search conditions."""
    if task not in ("auto", *TASKS):
        raise UserError(f"Unknown task '{task}'. Choose one of: auto, {', '.join(TASKS)}.")


class Consultant:
    """A loaded KB + optional LLM + checkpointer, ready to run consult turns."""

    def __init__(
        self,
        settings: Settings,
        kb: KnowledgeBase | None = None,
        llm: BaseChatModel | None = None,
        checkpointer: BaseCheckpointSaver[Any] | None = None,
        use_llm: bool = True,
    ) -> None:
        self.settings = settings
        self.kb = kb or open_kb(settings)
        self.llm = llm if llm is not None else (make_chat_model(settings) if use_llm else None)
        self.checkpointer = checkpointer if checkpointer is not None else open_checkpointer(settings)
        self.graph = build_consult_graph(ConsultDeps(self.kb, self.llm), self.checkpointer)
        self.locks = consult_locks(settings.data_dir)

    @property
    def mode(self) -> str:
        return "llm" if self.llm is not None else "offline"

    def ask(
        self,
        question: str,
        consult_id: str | None = None,
        task: str = "auto",
        on_event: Callable[[Event], None] | None = None,
        context: ConsultContext | None = None,
        start_if_missing: bool = False,
    ) -> TurnResult:
        """Run one turn of consult ``consult_id`` (a new consult when it is None).

        ``start_if_missing`` lets a front end choose the id of a new consult itself (Slack derives it from
        the thread), so the first message of a thread and its follow-ups are handled alike; without it an
        unknown id is refused, because a typed id that matches nothing is usually a typo.
        """
        text, ctx = prepare_turn(question, task, context)
        if (
            consult_id is not None
            and not start_if_missing
            and not consult_exists(self.checkpointer, consult_id)
        ):
            raise UserError(
                f"No consult '{consult_id}'. Start a new one, or list them with `evigraph consults`."
            )
        cid = consult_id or new_consult_id()
        with self.locks.hold(cid):
            return self._run(text, cid, ctx, on_event)

    def _run(
        self, text: str, cid: str, ctx: ConsultContext, on_event: Callable[[Event], None] | None
    ) -> TurnResult:
        config = turn_config(cid, ctx)
        started = time.perf_counter()
        for event in self.graph.stream(
            {"question": text}, config=config, context=ctx, stream_mode="custom", durability="sync"
        ):
            if on_event is not None and isinstance(event, dict):
                on_event(event)
        return turn_result(cid, self.graph.get_state(config).values, started)

    def evidence_texts(self, evidence_ids: list[str]) -> dict[str, str]:
        """The passage text of each evidence id (what citations are shown with)."""
        found = self.kb.store.get_evidence(list(dict.fromkeys(evidence_ids)))
        return {evidence_id: clean_text(record.text) for evidence_id, record in found.items()}

    def history(self, consult_id: str) -> list[dict[str, Any]]:
        if not consult_exists(self.checkpointer, consult_id):
            raise UserError(f"No consult '{consult_id}'.")
        config: RunnableConfig = thread_config(consult_id)  # type: ignore[assignment]
        return clean_payload(list(self.graph.get_state(config).values.get("turns", [])))
