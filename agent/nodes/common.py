"""Helpers shared by the nodes: the run's context, LLM availability, progress events, trace records."""

from __future__ import annotations

from typing import Any

from langgraph.runtime import Runtime

from agent.context import ConsultContext
from agent.deps import ConsultDeps
from agent.llm import Usage
from agent.redact import redact, redact_value
from agent.state import ConsultState, StepRec


def llm_on(deps: ConsultDeps, runtime: Runtime[ConsultContext]) -> bool:
    return deps.llm is not None and runtime.context.llm_enabled


def emit(runtime: Runtime[ConsultContext], step: str, **payload: Any) -> None:
    """A progress event on LangGraph's custom stream (the terminal and Slack show these live).

    Redacted: a failure reason in ``payload`` may quote an LLM error body with a key in it."""
    writer = runtime.stream_writer
    if writer is not None:
        writer({"step": step, **redact_value(payload)})


def step(state: ConsultState, name: str, summary: str, fallback: str = "", **detail: Any) -> StepRec:
    """A trace record. The fallback reason is redacted here, the one place failure text enters the trace:
    it often quotes an LLM error body, which may echo the request's ``Bearer sk-…`` header."""
    rec: StepRec = {"step": name, "round": state.get("round", 0), "summary": summary, "detail": detail}
    if fallback:
        rec["fallback"] = redact(fallback)
    return rec


def usage_update(state: ConsultState, usage: Usage) -> dict[str, int]:
    """State update adding this step's LLM calls and tokens to the turn's totals."""
    return {
        "llm_calls": state.get("llm_calls", 0) + usage.calls,
        "llm_tokens": state.get("llm_tokens", 0) + usage.tokens,
    }


def question_in_context(state: ConsultState, keep: int = 2, chars: int = 300) -> str:
    """The question as the LLM should read it: in a follow-up turn, prefixed by the consult's last questions.

    Why: "What are its symptoms?" means nothing without the question before it; the prompts quote the
    question as data, so earlier questions are quoted with it, marked as earlier.
    """
    earlier = [t.get("question", "") for t in state.get("turns", [])][-keep:]
    if not earlier:
        return state["question"]
    lines = [f"(earlier in this consult: {q[:chars]})" for q in earlier if q]
    return "\n".join([*lines, state["question"]])
