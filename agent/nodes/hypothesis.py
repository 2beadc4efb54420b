"""``hypothesis`` (HyKGE §4.1.1): the model's tentative answer, used only to decide where to look.

One structured LLM call returns the hypothesis, ≥ 5 search terms (EbmKG's term prompt) and IDEP evidence
features with usefulness scores (EbmKG §4.2) — three uses from one call keeps a one-round consult within
the ≤ 4-call budget. Offline the step is skipped and recorded as skipped.
"""

from __future__ import annotations

from typing import Any

from langgraph.runtime import Runtime
from pydantic import BaseModel, Field

from agent.context import ConsultContext
from agent.deps import ConsultDeps
from agent.llm import LLMStepFailed, Usage, structured_call, turn_deadline_seconds
from agent.llm_guard import start_turn_deadline
from agent.nodes.common import emit, llm_on, question_in_context, step, usage_update
from agent.state import ConsultState
from prompts import load_prompt, render_prompt


class EvidenceFeature(BaseModel):
    text: str = Field(description="What a useful passage must say, in one short sentence.")
    usefulness: float = Field(ge=0, le=10, description="How useful such a passage is, 0-10.")


class HypothesisOutput(BaseModel):
    """Where to look: a tentative answer, search terms and evidence features."""

    hypothesis: str = Field(description="A short tentative answer (2-4 sentences).")
    search_terms: list[str] = Field(description="At least five medical search terms, most important first.")
    features: list[EvidenceFeature] = Field(default_factory=list, description="3-6 evidence features.")


def condition(task: str) -> str:
    return load_prompt(f"condition_{task if task in ('mcq', 'check_reply', 'audit') else 'clinical'}")


def make_hypothesis(deps: ConsultDeps):  # type: ignore[no-untyped-def]
    def hypothesis(state: ConsultState, runtime: Runtime[ConsultContext]) -> dict[str, Any]:
        if not llm_on(deps, runtime) or deps.llm is None:
            emit(runtime, "hypothesis", skipped=True)
            return {"trace": [step(state, "hypothesis", "skipped (offline mode)")]}
        seconds = turn_deadline_seconds(deps.llm)
        if seconds:  # the first LLM step of a turn starts the deadline every later LLM step shares
            start_turn_deadline(seconds, runtime.context.started_at, runtime.context.turns_running)
        usage = Usage()
        prompt = render_prompt(
            "hypothesis",
            condition=condition(state.get("task", "clinical")),
            question=question_in_context(state),
        )
        try:
            out = structured_call(deps.llm, HypothesisOutput, prompt, usage, step="hypothesis")
        except LLMStepFailed as exc:
            emit(runtime, "hypothesis", skipped=True, fallback=str(exc))
            return {
                **usage_update(state, usage),
                "trace": [step(state, "hypothesis", "LLM failed; continuing without a hypothesis", str(exc))],
            }
        terms = [t.strip() for t in out.search_terms if t.strip()][:12]
        features = [f.model_dump() for f in out.features if f.text.strip()][:8]
        emit(runtime, "hypothesis", hypothesis=out.hypothesis, search_terms=terms)
        return {
            **usage_update(state, usage),
            "hypothesis": out.hypothesis.strip()[:2000],
            "search_terms": terms,
            "features": features,
            "trace": [
                step(
                    state,
                    "hypothesis",
                    f"{len(terms)} search terms, {len(features)} features",
                    hypothesis=out.hypothesis[:300],
                    search_terms=terms,
                )
            ],
        }

    return hypothesis
