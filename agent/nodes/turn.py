"""``start_turn``: take a new question, reset per-turn fields, choose the task's search condition."""

from __future__ import annotations

from typing import Any

from langgraph.runtime import Runtime
from langgraph.types import Overwrite

from agent.context import TASKS, ConsultContext
from agent.nodes.common import emit, step
from agent.nodes.mcq_parse import parse_mcq
from agent.state import ConsultState
from tools.common import truncate

MAX_QUESTION_CHARS = 6000


def mcq_options(question: str) -> dict[str, str]:
    """Lettered options ("A) …", "(b) …", "c. …", "A: …"; one a line or inline after the stem), keyed by the
    upper-case letter: one reading for detecting an exam question and for judging its options."""
    return parse_mcq(question).options


def detect_task(question: str) -> str:
    """Which search condition fits (EbmKG Figure 9), when the user did not say.

    Rules, in order: three or more lettered options (one a line or inline) → exam MCQ; a quoted reply or
    "doctor said" → check a reply; "decided"/"audit"/"was it right" → audit a decision; otherwise an open
    clinical question.
    """
    q = question.lower()
    if len(mcq_options(question)) >= 3:
        return "mcq"
    if any(
        cue in q
        for cue in (
            "reply:",
            "doctor said",
            "doctor's reply",
            "my doctor told",
            "check this answer",
            "check my answer",
            "is this correct:",
            "response:",
        )
    ):
        return "check_reply"
    if any(
        cue in q
        for cue in (
            "audit",
            "we decided",
            "decision to",
            "was it right to",
            "was the decision",
            "was this appropriate",
        )
    ):
        return "audit"
    return "clinical"


def start_turn(state: ConsultState, runtime: Runtime[ConsultContext]) -> dict[str, Any]:
    """Reset the per-turn fields; a question beyond the input limit is cut with a warning.

    Chains are per turn: a follow-up computes its own from its entities (carried ones included), so turn 1's
    chains are not shown again under turn 2's answer. Entities, topics and graph candidates stay for reuse.
    """
    question, note = truncate(state.get("question", "").strip(), MAX_QUESTION_CHARS)
    original = int(runtime.context.extra.get("input_chars", 0) or 0)
    if note and original > len(state.get("question", "")):  # the caller already cut it: report the real size
        note = f"input truncated from {original:,} to {len(question):,} characters"
    task = runtime.context.task if runtime.context.task in TASKS else detect_task(question)
    turn = len(state.get("turns", [])) + 1
    emit(runtime, "start", task=task, turn=turn)
    warnings = [note] if note else []
    return {
        "question": question,
        "task": task,
        "turn": turn,
        "round": 0,
        "hypothesis": "",
        "search_terms": [],
        "features": [],
        "turn_entity_ids": [],
        "unlinked_terms": [],
        "chains": Overwrite([]),  # the answer shows this turn's chains, not every chain of the consult
        "evidence": [],
        "verdict": {},
        "pending_calls": [],
        "answer": {},
        "reply_check": {},
        "llm_calls": 0,
        "llm_tokens": 0,
        "warnings": warnings,
        "trace": Overwrite([step({}, "start_turn", f"turn {turn}, task {task}")]),
    }
