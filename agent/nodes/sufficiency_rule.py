"""The offline sufficiency rule: which top passages are about the question's subject and carry the asked
aspect, and what is missing when none do (ALGORITHMS.md §7).

Why its own module: the rule is both a verdict (when the reader or the answered model is unavailable) and
the explanation behind every offline verdict — "2 passages are about gout; none carries the asked aspect" —
and the calibration scripts sweep exactly this code (evals/sufficiency_calibration.py,
evals/answered_calibration.py). A passage answers when it is about the question's focus entity and carries
the asked aspect (agent/nodes/focus.py); "sufficient" needs at least ``MIN_ANSWERING`` such passages and the
best of them at cosine ≥ ``MIN_RELEVANCE`` to the question.
"""

from __future__ import annotations

import math

from agent.deps import ConsultDeps
from agent.nodes.coverage import not_covered
from agent.nodes.focus import Focus, answering_passages, question_focus
from agent.nodes.retrieval import as_asked, distinct_names
from agent.state import ConsultState, EntityRec, EvidenceRec, Verdict

MIN_RELEVANCE = 0.65
"""Cosine floor for the best *answering* passage. Calibrated (evals/reports/sufficiency_calibration.md):
the best-recall pair whose calibration precision of "answered" is ≥ 0.95; held-out precision 40/40,
recall 40/62 (links below the calibrated linking threshold no longer make a question's subject: that cost
two answerable questions, "Gallstones" and "Crohn's flare", which had been answered through such links)."""
MIN_ANSWERING = 1
"""Answering passages needed among the top ones (calibrated with ``MIN_RELEVANCE``)."""
TOP_FOR_COVERAGE = 8


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


def sufficiency_features(
    deps: ConsultDeps,
    state: ConsultState,
    found: tuple[Focus, list[EvidenceRec], list[EvidenceRec]] | None = None,
) -> dict[str, float | int]:
    """What the offline rule decides from (also what the calibration script records per question);
    ``found`` passes in (focus, about, answering) when the caller already has them."""
    top = state.get("evidence", [])[:TOP_FOR_COVERAGE]
    if found is None:
        focus = question_focus(deps.kb, state)
        about, answering = answering_passages(deps.kb, focus, top)
    else:
        focus, about, answering = found
    return {
        "focus": len(focus.entities),
        "about": len(about),
        "answering": len(answering),
        "best_answering": max((cosine(ev) for ev in answering), default=0.0),
        "best": max((cosine(ev) for ev in top), default=0.0),
    }


CLOSE_ENOUGH = "a passage close enough to the question"


def cosine(ev: EvidenceRec) -> float:
    return float(ev.get("scores", {}).get("cosine", 0.0))


def floor3(value: float) -> str:
    """``value`` to three decimals, rounded down: a score just under a two-decimal threshold never prints as
    the threshold itself ("0.906" must not read "0.91"; 0.6496 must not read "0.650 … needs ≥ 0.65")."""
    return f"{math.floor(value * 1000 + 1e-9) / 1000:.3f}"


def counted(n: int, noun: str) -> str:
    """ "1 passage", "3 passages" (a newcomer read "1 passages" as a sign of sloppy checking)."""
    return f"{n} {noun}" if n == 1 else f"{n} {noun}s"


def be(n: int) -> str:
    return "is" if n == 1 else "are"


def similarity_line(answering: list[EvidenceRec], about: list[EvidenceRec]) -> list[str]:
    """The similarity the rule compared, to three decimals beside a two-decimal threshold (0.649 printed as
    "0.65 … needs ≥ 0.65" read as a contradiction); measured over the passages that carry the asked aspect,
    else over those about the subject ("similarity 0.00" was printed when none carried it although
    passages about the subject existed); left out when no passage is about the subject."""
    if answering:
        best = max(cosine(ev) for ev in answering)
        return [
            f"the closest of them to the question has similarity {floor3(best)} (needs ≥ {MIN_RELEVANCE:.2f})"
        ]
    if about:
        best = max(cosine(ev) for ev in about)
        return [f"the closest passage about the subject has similarity {floor3(best)} to the question"]
    return []


def decide(features: dict[str, float | int], min_answering: int, min_relevance: float) -> bool:
    """The offline rule itself, parameterised so the calibration sweeps exactly what the agent runs."""
    return features["answering"] >= min_answering and features["best_answering"] >= min_relevance


def focus_and_answering(
    deps: ConsultDeps, state: ConsultState
) -> tuple[Focus, list[EvidenceRec], list[EvidenceRec]]:
    """(focus, passages about it, those that also carry the asked aspect) among the top passages."""
    focus = question_focus(deps.kb, state)
    about, answering = answering_passages(deps.kb, focus, state.get("evidence", [])[:TOP_FOR_COVERAGE])
    return focus, about, answering


def rule_verdict(
    deps: ConsultDeps,
    state: ConsultState,
    found: tuple[Focus, list[EvidenceRec], list[EvidenceRec]] | None = None,
) -> Verdict:
    top = state.get("evidence", [])[:TOP_FOR_COVERAGE]
    focus, about, answering = found or focus_and_answering(deps, state)
    f = sufficiency_features(deps, state, (focus, about, answering))
    missing_entities = uncovered(deps, focus, about)
    missing_labels = [] if answering else [lab for lab in focus.asked if lab != "overview"]
    if answering and f["best_answering"] < MIN_RELEVANCE:
        missing_labels = [f"{CLOSE_ENOUGH} (best {floor3(f['best_answering'])})"]
    focus_cov = (len(focus.entities) - len(missing_entities)) / len(focus.entities) if focus.entities else 0.0
    relevant = f["best_answering"] >= MIN_RELEVANCE
    share = min(1.0, len(answering) / MIN_ANSWERING)
    completeness = round(10 * (0.3 * focus_cov + 0.5 * share + 0.2 * float(relevant)), 1)
    # "about Vitamins or scurvy": a passage counts when it is about any of them, and "about Vitamins, scurvy"
    # read as if the passages were about scurvy beside "Missing: scurvy".
    question = state.get("question", "")
    subject, unfound = subject_phrase(distinct_names(focus.entities), missing_entities, question)
    asked = ", ".join(focus.asked)
    carry = "carries" if len(answering) == 1 else "carry"  # "1 of the top 8 passages is about X and carries"
    carried = f"and {carry} the asked aspect ({asked})" if asked else "(no specific aspect asked)"
    carried += f", none about {unfound}" if unfound else ""
    reasons = [
        # Worded as what was found, not as "answer": an insufficient verdict whose reason said "5 passages
        # answer the question" read as a contradiction to a clinician.
        f"{len(answering)} of the top {counted(len(top), 'passage')} {be(len(answering))} about {subject} "
        f"{carried}; needs ≥ {MIN_ANSWERING}",
        f"{counted(len(about), 'passage')} {be(len(about))} about the question's subject",
        *similarity_line(answering, about),
    ]
    if not focus.entities:  # "0 of the top 8 passages are about no recognised subject" said nothing
        reasons = ["so no retrieved passage can be counted as answering it"]
    if not question_entities(state):
        reasons.insert(0, "no medical entity of the question was found in the knowledge graph")
    elif not focus.entities:
        reasons.insert(0, "the question's entities only name what is asked, not a medical subject")
    return with_coverage(
        deps,
        focus,
        {
            "sufficient": decide(f, MIN_ANSWERING, MIN_RELEVANCE),
            "completeness": completeness,
            "missing_entities": missing_entities,
            "missing_labels": missing_labels,
            "missing_relations": [],
            "reasons": reasons,
            "method": "rule",
        },
        state,
    )


def subject_phrase(names: list[str], missing: list[str], question: str) -> tuple[str, str]:
    """(the subjects the passages are about, as alternatives; those no passage is about, or "").

    Why: "7 of the top 8 passages are about Vitamins or scurvy …" stood beside "Missing: scurvy", which read
    as if some passages were about scurvy; now "… about Vitamins …, none about scurvy"."""
    absent = {n.lower() for n in missing}
    present = [n for n in names if n.lower() not in absent] if len(names) > 1 else names
    present = present or names  # every subject missing: the count is about all of them, as before
    subject = or_list([as_asked(n, question) for n in present]) or "no recognised subject"
    unfound = or_list([as_asked(n, question) for n in names if n not in present])
    return subject, unfound


def or_list(names: list[str]) -> str:
    """Names joined as alternatives: "gout", "gout or pain", "joint pain, skin or diabetes mellitus"."""
    if len(names) < 2:
        return "".join(names)
    return f"{', '.join(names[:-1])} or {names[-1]}"


def with_coverage(deps: ConsultDeps, focus: Focus, verdict: Verdict, state: ConsultState) -> Verdict:
    """``verdict`` with ``not_covered`` set when it is insufficient and the KB cannot cover the kind of
    question at all (agent/nodes/coverage.py), and without it otherwise."""
    note = None if verdict.get("sufficient") else not_covered(deps.kb, focus, state.get("question", ""))
    if note:
        verdict["not_covered"] = note
    else:
        verdict.pop("not_covered", None)
    return verdict


def uncovered(deps: ConsultDeps, focus: Focus, about: list[EvidenceRec]) -> list[str]:
    """Names of focus entities no on-focus passage is about (keyword entity, mention, or a name in its text
    or its document's title, as ``focus.on_focus`` reads them)."""
    if not about:
        return [e["name"] for e in focus.entities]
    mentioned = deps.kb.store.evidence_entities([e["id"] for e in about])
    covered = {m for ev in about for m in (*mentioned.get(ev["id"], []), ev.get("keyword_entity", ""))}
    texts = " ".join(f"{ev.get('title', '')} {ev.get('text', '')}" for ev in about)
    return [
        e["name"]
        for e in focus.entities
        if e["id"] not in covered
        and not any(n.lower() in texts.lower() for n in focus.names.get(e["id"], []))
    ]
