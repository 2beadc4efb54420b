"""``sufficiency``: is the evidence enough? If not, say exactly what is missing (ALGORITHMS.md §7).

LLM mode: a structured verdict (completeness 0–10, missing entities / relation types / labels, follow-up
requests), overruled when no retrieved passage answers the question at all. Offline: a measurable rule over
the top ``TOP_FOR_COVERAGE`` passages (agent/nodes/sufficiency_rule.py), built on what *answers* the
question (agent/nodes/focus.py): a passage answers when it is about the question's focus entity and carries
the asked aspect. "Sufficient" needs at least ``MIN_ANSWERING`` such passages and the best of them at
cosine ≥ ``MIN_RELEVANCE`` to the question.

Why not the earlier coverage score: it counted a question entity as covered when *any* top passage
mentioned it and an aspect as covered when *any* top passage carried the label — so "side effects of
metformin" was "answered, 10/10" from a metformin-prevention passage plus methamphetamine and acromegaly
passages. Both thresholds are calibrated on labelled questions (evals/sufficiency_calibration.py; the
table is evals/reports/sufficiency_calibration.md), not guessed.

``completeness = 10 · (0.3 · focus coverage + 0.5 · min(1, answering / MIN_ANSWERING) + 0.2 · relevant)``
is kept for display and for the planner's loop; it is ≥ 7 whenever the verdict is sufficient.

The offline verdict as it runs (:func:`offline_verdict`, issue 18): the rule alone could never answer a
question about something the KG does not know, so "sufficient" is decided by a calibrated logistic model
over the evidence reader's reading of the top sentences and the rule's own features
(agent/nodes/answered.py; held-out precision in evals/reports/answered_calibration.md); a question that asks
for a named detail ("Which CFTR mutation …") is answered only when the answer as shown names one
(agent/nodes/asked_detail.py: a near-miss — passages on the subject, none naming the mutation asked — is
insufficient and says so). Its probability is
the completeness shown (× 10); the rule's findings remain the explanation of what is missing, and the rule
decides alone when the reader or the model is unavailable (the answer's warnings say so). When the LLM
verdict fails, this offline verdict replaces it; the second opinion on an LLM "insufficient"
(agent/verdict_check.py) still reads the rule's findings.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from langgraph.runtime import Runtime
from langgraph.types import Command
from pydantic import BaseModel, Field, StringConstraints, model_validator

from agent.context import ConsultContext
from agent.deps import ConsultDeps
from agent.llm import LLMStepFailed, Usage, structured_call
from agent.nodes.answered import answered_features, answered_model, answered_model_error
from agent.nodes.common import emit, llm_on, question_in_context, step, usage_update
from agent.nodes.detail_check import shown_answer_misses_detail
from agent.nodes.direct_answer import name_the_answer
from agent.nodes.focus import Focus, answering_passages, carries_aspect, question_focus
from agent.nodes.hypothesis import condition
from agent.nodes.key_sentences import defining_sentence, shown_read, with_antecedent
from agent.nodes.reading import ReadSentence, read_evidence
from agent.nodes.retrieval import distinct_names, search_question
from agent.nodes.sentence_order import on_asked_direction
from agent.nodes.sufficiency_rule import (
    CLOSE_ENOUGH,
    TOP_FOR_COVERAGE,
    entity_coverage,
    floor3,
    focus_and_answering,
    question_entities,
    rule_verdict,
    sufficiency_features,
    with_coverage,
)
from agent.state import ConsultState, EvidenceRec, Verdict
from agent.verdict_check import second_opinion
from graphs.model.labels import specific_labels_asked
from prompts import render_prompt

UNRELATED_BELOW = 0.45
"""The LLM verdict's floor: no question entity in any top passage and the best cosine below this."""
SUFFICIENT_AT = 7.0


ShortText = Annotated[str, StringConstraints(max_length=80)]


# The lists and their items are bounded in the JSON schema (maxItems/maxLength): a grammar-constrained
# server (llama.cpp) then cannot write a verdict longer than its max_tokens — a real 1.5B model listed
# missing items until the cap cut its JSON, and the verdict fell back to the rule. A model that ignores
# the schema (function calling) is cut to the same bounds before validation. (The class docstring is
# sent to the model as the schema's description, so the why lives here.)
class LLMVerdict(BaseModel):
    """The model's rating of the evidence (seed 000 §7.1 scale)."""

    completeness: float = Field(ge=0, le=10, description="0 = nothing relevant … 10 = everything needed.")
    missing_entities: list[ShortText] = Field(
        default_factory=list, max_length=4, description="Entities the evidence lacks."
    )
    missing_relations: list[ShortText] = Field(
        default_factory=list, max_length=3, description="Relation types lacking."
    )
    missing_labels: list[ShortText] = Field(
        default_factory=list, max_length=3, description="Evidence labels lacking."
    )
    followups: list[ShortText] = Field(
        default_factory=list, max_length=3, description="At most three follow-up search requests."
    )
    reasons: list[ShortText] = Field(
        default_factory=list, max_length=2, description="Why, in a sentence or two."
    )

    @model_validator(mode="before")
    @classmethod
    def _cut_to_bounds(cls, data: Any) -> Any:
        if not isinstance(data, dict):
            return data
        cut = dict(data)
        for name, field in cls.model_fields.items():
            value = cut.get(name)
            limit = next((m.max_length for m in field.metadata if hasattr(m, "max_length")), None)
            if isinstance(value, list) and limit is not None:
                cut[name] = [str(v)[:80] if isinstance(v, str) else v for v in value[:limit]]
        return cut


def offline_verdict(deps: ConsultDeps, state: ConsultState) -> Verdict:
    """The offline verdict: the calibrated answered-model over the reader's reading and the rule's features
    (agent/nodes/answered.py); the rule alone when the reader or the model is unavailable (the answer's
    warnings say which). The rule's findings stay the explanation of what is missing."""
    found = focus_and_answering(deps, state)
    rule = rule_verdict(deps, state, found)
    inputs = answered_inputs(deps, state, found, rule)
    model = answered_model()
    if inputs is None or model is None:
        return rule
    features, read = inputs
    p = model.probability(features)
    # The asked-detail check (agent/nodes/asked_detail.py): a "which mutation" question whose shown answer
    # names no mutation is not answered, however on-subject its sentences read.
    missed = shown_answer_misses_detail(deps.kb, state, found[0]) if p >= model.threshold else None
    sufficient = p >= model.threshold and missed is None
    verdict: Verdict = {
        **rule,
        "sufficient": sufficient,
        "completeness": round(10 * p, 1),
        "answered_probability": round(p, 3),
        "method": "calibrated model (reader + rule) and the asked-detail check",
    }
    evidence = state.get("evidence", [])
    # The sentence that spells out an asked abbreviation is the best quote whatever its page (it leads the
    # key sentences too); otherwise the best shown sentence.
    best = defining_sentence(read, search_question(state)) or best_quote(
        shown_read(deps.kb, read, found[0], evidence), evidence
    )
    said = f'"{clip_text(best.text)}" [{best.evidence_id}]' if best else "no sentence"
    odds = f"answered probability {floor3(p)}, needs ≥ {model.threshold:.2f}"
    if sufficient and best is None:
        # Nothing the reader read may be shown (all from pages on another or a qualified condition, headings,
        # research notes): an "answered" turn would show no answer. "Why do people get kidney stones?" was
        # answered at p 0.97 with an empty direct answer: its pages were read as "qualified" forms
        # ("Kidney Stones in Adults").
        verdict["sufficient"] = sufficient = False
        verdict["reasons"] = [
            f"no sentence that may be shown answers the question ({odds} without this check)"
        ]
        verdict["missing_labels"] = ["a passage that answers the question"]
        return with_coverage(deps, found[0], verdict, state)
    if sufficient:
        verdict["missing_entities"], verdict["missing_labels"] = [], []
        verdict["reasons"] = [f"the evidence reader reads {said} as answering the question ({odds})"]
    elif missed is not None:
        subject = ", ".join(distinct_names(found[0].entities)) or "the question's subject"
        named_in_question = missed.kind in ("term", "subject")  # the question's own words, not a kind
        asked = missed.phrase if named_in_question else f"the {missed.phrase}"
        verdict["missing_entities"], verdict["missing_labels"] = [], [f"a passage naming {asked}"]
        if missed.kind == "subject":  # a compared subject: the planner's next round walks from it
            verdict["missing_entities"], verdict["missing_labels"] = [asked], []
        what = f"{asked}, which the question asks about" if named_in_question else f"{asked} asked"
        about = f"the passages are about {subject}, but"
        if missed.kind == "aspect":  # no linked subject: only the asked aspect ties the answer to it
            about = "the knowledge graph links no subject of the question, and"
        verdict["reasons"] = [
            f"{about} none of the sentences that would be shown names {what}; best: {said} ({odds} without "
            "this check)"
        ]
    else:
        weak = f"no retrieved sentence answers the question well enough ({odds}); best: {said}"
        verdict["reasons"] = [weak, *rule["reasons"]]
        # The model decided, not the rule's cosine cut: "Missing: a passage close enough (best 0.64)" named
        # a threshold that did not decide this verdict.
        labels = [lab for lab in rule["missing_labels"] if not lab.startswith(CLOSE_ENOUGH)]
        verdict["missing_labels"] = labels
        if not rule["missing_entities"] and not labels:
            verdict["missing_labels"] = ["a passage that answers the question"]
    return with_coverage(deps, found[0], verdict, state)


def answered_inputs(
    deps: ConsultDeps,
    state: ConsultState,
    found: tuple[Focus, list[EvidenceRec], list[EvidenceRec]],
    rule: Verdict,
) -> tuple[dict[str, float], list[ReadSentence]] | None:
    """The answered-model's features and the turn's reading, or ``None`` without a reader. For "what
    causes X?" the reading leaves out what the key sentences never show: sentences saying what X causes
    (agent/nodes/sentence_order.py ``on_asked_direction``) — "This may cause infection, anemia, and easy
    bleeding." read best for "What causes chronic lymphocytic leukemia?" and made it "answered"."""
    evidence = state.get("evidence", [])
    question = search_question(state)
    read = read_evidence(deps.kb, question, evidence)
    if read is None:
        return None
    read = on_asked_direction(read, found[0].asked, question, found[0].word_pattern())
    rule_features = sufficiency_features(deps, state, found)
    named, _ = name_the_answer(deps.kb, state, found[0])
    features = answered_features(question, evidence, read, rule_features, bool(rule["sufficient"]), named)
    return features, read


def best_quote(shown: list[ReadSentence], evidence: list[EvidenceRec]) -> ReadSentence | None:
    """The sentence a verdict quotes as the best, with the sentence it refers back to: "best: 'This drug is
    most effective when taken within the first 12 hours …'" did not say which drug."""
    if not shown:
        return None
    return with_antecedent(shown[0], {ev["id"]: ev.get("text", "") for ev in evidence})


def clip_text(text: str, chars: int = 120) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= chars else flat[:chars].rsplit(" ", 1)[0] + "…"


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
        asked=", ".join(specific_labels_asked(state.get("question", ""))) or "(not stated)",
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
    found = focus_and_answering(deps, state)  # once, for the rule and the open aspects
    rule = rule_verdict(deps, state, found)  # second opinion on an "insufficient" (agent/verdict_check.py)
    covered = [e["name"] for e in question_entities(state) if e["name"] not in rule["missing_entities"]]
    top_text = " ".join(e["text"] for e in state.get("evidence", [])[:TOP_FOR_COVERAGE])
    labels = open_labels(found[0], found[2])
    return second_opinion(verdict, rule, question_in_context(state), covered, top_text, labels)


def open_labels(focus: Focus, answering: list[EvidenceRec]) -> list[str]:
    """The asked aspects (labels other than "overview") that no answering passage carries."""

    def carried(label: str) -> bool:
        one = Focus(focus.entities, [label], focus.names, focus.pattern, focus.question)
        return any(carries_aspect(one, ev) for ev in answering)

    return [label for label in focus.asked if label != "overview" and not carried(label)]


def unrelated_evidence(deps: ConsultDeps, state: ConsultState) -> str:
    """Why the evidence plainly does not cover the question, or "" — a floor under an LLM's "sufficient".

    Models over-trust incomplete evidence (ALGORITHMS.md §7); when no passage mentions any entity of the
    question and none is even similar to it, no rating makes the evidence an answer to this question.
    """
    ents, missing, best = entity_coverage(deps, state)
    if len(missing) == len(ents) and best < UNRELATED_BELOW:
        return (
            f"overruled: no top passage mentions an entity of the question and the best passage similarity "
            f"{best:.2f} is below {UNRELATED_BELOW}"
        )
    focus = question_focus(deps.kb, state)
    if (
        focus.entities
        and not answering_passages(deps.kb, focus, state.get("evidence", [])[:TOP_FOR_COVERAGE])[1]
    ):
        return "overruled: no top passage is about the question's subject and carries the asked aspect"
    return ""


def make_sufficiency(deps: ConsultDeps):  # type: ignore[no-untyped-def]
    def sufficiency(
        state: ConsultState, runtime: Runtime[ConsultContext]
    ) -> Command[Literal["plan", "check_claims"]]:
        usage = Usage()
        fallback = ""
        verdict: Verdict
        if llm_on(deps, runtime):
            try:
                verdict = _llm_verdict(deps, state, usage)
            except LLMStepFailed as exc:
                fallback = f"LLM verdict failed ({exc}); used the offline verdict"
                verdict = offline_verdict(deps, state)
        else:
            verdict = offline_verdict(deps, state)
        next_round = state.get("round", 0) + 1
        known = state.get("warnings", [])
        degraded = [w for w in (deps.kb.reader_warning, answered_model_error()) if w and w not in known]
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
            goto="check_claims" if done else "plan",
            update={
                **usage_update(state, usage),
                "verdict": verdict,
                "round": next_round,
                **({"warnings": [*known, *degraded]} if degraded else {}),
                "trace": [step(state, "sufficiency", summary, fallback, **dict(verdict))],
            },
        )

    return sufficiency
