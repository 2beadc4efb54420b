"""``sufficiency``: is the evidence enough? If not, say exactly what is missing (ALGORITHMS.md §7).

LLM mode: a structured verdict (completeness 0–10, missing entities / relation types / labels, follow-up
requests). Offline: a measurable rule over the top evidence —

* entity coverage: the share of the question's affirmed entities that some top passage mentions (``f(e)``);
* label coverage: the share of the labels the question asks about (treatment, symptoms, …) that some top
  passage carries;
* relevance: the best passage's cosine similarity to the question reaches ``MIN_RELEVANCE``.

``completeness = 10 · (0.5 · entity coverage + 0.3 · label coverage + 0.2 · relevance)``; sufficient when
it is above ``SUFFICIENT_AT`` (the paper's "high", > 7, as for an LLM's rating) and at least one question
entity is covered — so every entity covered but none of the asked-about labels (exactly 7) is a reason to
search for those labels, not an answer. A question whose entities the
KB does not know, or whose best passage is unrelated, therefore ends "insufficient" instead of being
answered from loosely related text. Either way the verdict and its reasons are kept in state and shown.
"""

from __future__ import annotations

from typing import Literal

from langgraph.runtime import Runtime
from langgraph.types import Command
from pydantic import BaseModel, Field

from agent.context import ConsultContext
from agent.deps import ConsultDeps
from agent.llm import LLMStepFailed, Usage, structured_call
from agent.nodes.common import emit, llm_on, question_in_context, step, usage_update
from agent.nodes.hypothesis import condition
from agent.state import ConsultState, EntityRec, Verdict
from agent.verdict_check import second_opinion
from graphs.labels import specific_labels_asked
from prompts import render_prompt

MIN_RELEVANCE = 0.45
SUFFICIENT_AT = 7.0
TOP_FOR_COVERAGE = 8


class LLMVerdict(BaseModel):
    """The model's rating of the evidence (seed 000 §7.1 scale)."""

    completeness: float = Field(ge=0, le=10, description="0 = nothing relevant … 10 = everything needed.")
    missing_entities: list[str] = Field(default_factory=list, description="Entities the evidence lacks.")
    missing_relations: list[str] = Field(default_factory=list, description="Relation types lacking.")
    missing_labels: list[str] = Field(default_factory=list, description="Evidence labels lacking.")
    followups: list[str] = Field(default_factory=list, description="At most three follow-up search requests.")
    reasons: list[str] = Field(default_factory=list, description="Why, in a sentence or two.")


def question_entities(state: ConsultState) -> list[EntityRec]:
    turn_ids = set(state.get("turn_entity_ids", []))
    return [e for e in state.get("entities", []) if e["id"] in turn_ids and not e.get("negated")]


def entity_coverage(deps: ConsultDeps, state: ConsultState) -> tuple[list[EntityRec], list[str], float]:
    """The question's entities, the names no top passage mentions, and the best passage's cosine."""
    top = state.get("evidence", [])[:TOP_FOR_COVERAGE]
    ents = question_entities(state)
    mentioned = deps.kb.store.evidence_entities([e["id"] for e in top])
    covered_ids = {m for ev in top for m in (*mentioned.get(ev["id"], []), ev.get("keyword_entity", ""))}
    missing_entities = [e["name"] for e in ents if e["id"] not in covered_ids]
    best = max((ev.get("scores", {}).get("cosine", 0.0) for ev in top), default=0.0)
    return ents, missing_entities, best


def rule_verdict(deps: ConsultDeps, state: ConsultState) -> Verdict:
    top = state.get("evidence", [])[:TOP_FOR_COVERAGE]
    ents, missing_entities, best = entity_coverage(deps, state)
    entity_cov = (len(ents) - len(missing_entities)) / len(ents) if ents else 0.0
    asked = specific_labels_asked(state.get("question", ""))
    have = {ev.get("label") for ev in top}
    missing_labels = [lab for lab in asked if lab not in have]
    label_cov = (len(asked) - len(missing_labels)) / len(asked) if asked else 1.0
    relevant = best >= MIN_RELEVANCE
    completeness = round(10 * (0.5 * entity_cov + 0.3 * label_cov + 0.2 * float(relevant)), 1)
    reasons = [
        f"{len(ents) - len(missing_entities)}/{len(ents)} question entities covered by the top passages",
        f"{len(asked) - len(missing_labels)}/{len(asked)} asked-about labels covered "
        f"({', '.join(asked) or 'none'})",
        f"best passage similarity {best:.2f} (needs ≥ {MIN_RELEVANCE})",
    ]
    if not ents:
        reasons.insert(0, "no medical entity of the question was found in the knowledge graph")
    sufficient = completeness > SUFFICIENT_AT and entity_cov > 0 and relevant
    return {
        "sufficient": sufficient,
        "completeness": completeness,
        "missing_entities": missing_entities,
        "missing_labels": missing_labels,
        "missing_relations": [],
        "reasons": reasons,
        "method": "rule",
    }


def _llm_verdict(deps: ConsultDeps, state: ConsultState, usage: Usage) -> Verdict:
    assert deps.llm is not None
    evidence = "\n".join(
        f"[{e['id']}] ({e.get('label', '')}) {e['text'][:600]}" for e in state.get("evidence", [])[:10]
    )
    chains = "\n".join(f"[{c['id']}] {c['text']}" for c in state.get("chains", [])[:8]) or "(none)"
    entities = ", ".join(e["name"] for e in question_entities(state)) or "(none)"
    prompt = render_prompt(
        "sufficiency",
        condition=condition(state.get("task", "clinical")),
        question=question_in_context(state),
        entities=entities,
        evidence=evidence or "(none)",
        chains=chains,
    )
    out = structured_call(deps.llm, LLMVerdict, prompt, usage, step="verdict")
    sufficient = out.completeness > SUFFICIENT_AT
    reasons = [*out.reasons, *out.followups][:6]
    method = "llm"
    if sufficient:
        overruled = unrelated_evidence(deps, state)
        if overruled:
            sufficient, method = False, "llm, overruled by the evidence check"
            reasons.append(overruled)
    verdict: Verdict = {
        "sufficient": sufficient,
        "completeness": out.completeness,
        "missing_entities": out.missing_entities[:5],
        "missing_labels": out.missing_labels[:5],
        "missing_relations": out.missing_relations[:5],
        "reasons": reasons,
        "method": method,
    }
    if sufficient:
        return verdict
    rule = rule_verdict(deps, state)  # second opinion on an "insufficient" (agent/verdict_check.py)
    covered = [e["name"] for e in question_entities(state) if e["name"] not in rule["missing_entities"]]
    top_text = " ".join(e["text"] for e in state.get("evidence", [])[:TOP_FOR_COVERAGE])
    return second_opinion(verdict, rule, covered, top_text)


def unrelated_evidence(deps: ConsultDeps, state: ConsultState) -> str:
    """Why the evidence plainly does not cover the question, or "" — a floor under an LLM's "sufficient".

    Models over-trust incomplete evidence (ALGORITHMS.md §7); when no passage mentions any entity of the
    question and none is even similar to it, no rating makes the evidence an answer to this question.
    """
    ents, missing, best = entity_coverage(deps, state)
    if len(missing) < len(ents) or best >= MIN_RELEVANCE:
        return ""
    return (
        f"overruled: no top passage mentions an entity of the question and the best passage similarity "
        f"{best:.2f} is below {MIN_RELEVANCE}"
    )


def make_sufficiency(deps: ConsultDeps):  # type: ignore[no-untyped-def]
    def sufficiency(
        state: ConsultState, runtime: Runtime[ConsultContext]
    ) -> Command[Literal["plan", "answer"]]:
        usage = Usage()
        fallback = ""
        verdict: Verdict
        if llm_on(deps, runtime):
            try:
                verdict = _llm_verdict(deps, state, usage)
            except LLMStepFailed as exc:
                fallback = f"LLM verdict failed ({exc}); used the offline rule"
                verdict = rule_verdict(deps, state)
        else:
            verdict = rule_verdict(deps, state)
        next_round = state.get("round", 0) + 1
        done = verdict["sufficient"] or next_round >= runtime.context.max_rounds
        emit(
            runtime,
            "sufficiency",
            sufficient=verdict["sufficient"],
            completeness=verdict["completeness"],
            missing=verdict.get("missing_entities", []) + verdict.get("missing_labels", []),
            round=next_round,
        )
        summary = (
            f"round {next_round}: completeness {verdict['completeness']}/10, "
            f"{'sufficient' if verdict['sufficient'] else 'insufficient'}"
        )
        return Command(
            goto="answer" if done else "plan",
            update={
                **usage_update(state, usage),
                "verdict": verdict,
                "round": next_round,
                "trace": [step(state, "sufficiency", summary, fallback, **dict(verdict))],
            },
        )

    return sufficiency
