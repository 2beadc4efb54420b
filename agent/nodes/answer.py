"""``answer``: a cited answer, or an explicit "insufficient evidence", always with sources and KB version.

LLM mode: a Markdown answer streamed token by token, whose every claim must cite ``[E:…]``/``[C:…]`` ids
retrieved in this consult; :mod:`agent.citations` strips invalid ids and removes uncited claims. Offline
(or when the LLM fails): an extractive answer — the best passages grouped by label with their citations and
the key chains — labelled as retrieved evidence, not a generated answer. For an exam question the offline
answer also names the option whose text the top evidence supports best, marked as a retrieval heuristic.
"""

from __future__ import annotations

from collections import OrderedDict
from typing import Any

import numpy as np
from langgraph.runtime import Runtime

from agent.citations import ANSWER_OPTION, check_citations
from agent.compact_answer import compact_answer_prompt
from agent.context import ConsultContext
from agent.deps import ConsultDeps
from agent.llm import LLMStepFailed, Usage, text_call
from agent.nodes.common import emit, llm_on, question_in_context, step, usage_update
from agent.nodes.hypothesis import condition
from agent.nodes.turn import mcq_options
from agent.state import ConsultState, EvidenceRec, Verdict
from graphs.labels import specific_labels_asked
from prompts import load_prompt

SAFETY_NOTE = (
    "Decision support only: check the cited sources and apply clinical judgement; this is not a "
    "substitute for professional assessment of the patient."
)
OFFLINE_LABEL = "Retrieved evidence (offline mode — extractive, not a generated answer)"


def best_option(deps: ConsultDeps, question: str, evidence: list[EvidenceRec]) -> tuple[str, float] | None:
    """Offline MCQ heuristic: the option most similar to the top passages (mean of its top-3 cosines)."""
    options = mcq_options(question)
    if len(options) < 2 or not evidence:
        return None
    vecs = deps.kb.vectors.get_vectors("evidence", [e["id"] for e in evidence[:10]])
    if not vecs:
        return None
    mat = np.stack(list(vecs.values()))
    opt = deps.kb.embed(list(options.values()))
    sims = np.sort(opt @ mat.T, axis=1)[:, ::-1][:, :3].mean(axis=1)
    return list(options)[int(np.argmax(sims))], float(np.max(sims))


def sources_of(evidence: list[EvidenceRec]) -> list[dict[str, str]]:
    seen: OrderedDict[str, dict[str, str]] = OrderedDict()
    for e in evidence:
        if e["document_id"] not in seen:
            seen[e["document_id"]] = {
                "document_id": e["document_id"],
                "title": e.get("title", ""),
                "source": e.get("source", ""),
                "url": e.get("url", ""),
                "date": e.get("date", ""),
            }
    return list(seen.values())


def extractive_text(state: ConsultState, option: tuple[str, float] | None) -> str:
    evidence = state.get("evidence", [])
    verdict = state.get("verdict", {})
    lines = [f"**{OFFLINE_LABEL}**", ""]
    if not verdict.get("sufficient"):
        lines += [insufficient_line(verdict), ""]
    if option is not None:
        lines += [
            f"Option best supported by the retrieved evidence (retrieval heuristic, not a judgement): "
            f"**{option[0]}**",
            "",
        ]
    groups: OrderedDict[str, list[EvidenceRec]] = OrderedDict(
        (label, []) for label in specific_labels_asked(state.get("question", ""))
    )  # what the question asks about comes first, then the other labels in rank order
    for e in evidence:
        groups.setdefault(e.get("label", "evidence"), []).append(e)
    groups = OrderedDict((label, items) for label, items in groups.items() if items)
    for label, items in groups.items():
        lines.append(f"### {label.capitalize()}")
        for e in items[:4]:
            text = " ".join(e["text"].split())
            lines.append(f"- {text[:700]}{'…' if len(text) > 700 else ''} [{e['id']}]")
        lines.append("")
    chains = state.get("chains", [])[:5]
    if chains:
        lines.append("### Knowledge-graph chains")
        lines += [f"- {c['text']} [{c['id']}]" for c in chains]
        lines.append("")
    return "\n".join(lines).strip()


def insufficient_line(verdict: Verdict) -> str:
    missing = (
        verdict.get("missing_entities", [])
        + verdict.get("missing_labels", [])
        + verdict.get("missing_relations", [])
    )
    why = "; ".join(verdict.get("reasons", [])[:3])
    return (
        f"**Insufficient evidence** (completeness {verdict.get('completeness', 0)}/10). "
        f"Missing: {', '.join(missing) or 'relevant passages'}. {why}".strip()
    )


def llm_answer(
    deps: ConsultDeps, state: ConsultState, runtime: Runtime[ConsultContext], usage: Usage
) -> dict[str, Any]:
    assert deps.llm is not None
    evidence = state.get("evidence", [])
    chains = state.get("chains", [])[:10]
    task = state.get("task", "clinical")
    prompt = compact_answer_prompt(  # key sentences with ids, not whole passages (agent/compact_answer.py)
        deps,
        state,
        condition(task),
        question_in_context(state),
        load_prompt("answer_mcq_rules") if task == "mcq" else "",
    )
    raw = text_call(deps.llm, prompt, usage, on_token=lambda t: emit(runtime, "token", text=t), step="answer")
    retrieved = {e["id"] for e in evidence} | {c["id"] for c in chains}
    checked = check_citations(raw, retrieved)
    if not checked.claims and "insufficient evidence" not in checked.text.lower():
        raise LLMStepFailed("the answer had no claim with a valid citation")
    option = ANSWER_OPTION.search(checked.text)
    return {
        "text": checked.text,
        "claims": checked.claims,
        "removed_claims": checked.removed,
        "invalid_citations": sorted(set(checked.invalid_ids)),
        "option": option.group(1) if option else None,
    }


def make_answer(deps: ConsultDeps):  # type: ignore[no-untyped-def]
    def answer(state: ConsultState, runtime: Runtime[ConsultContext]) -> dict[str, Any]:
        usage = Usage()
        evidence = state.get("evidence", [])
        verdict = state.get("verdict", {})
        fallback = ""
        payload: dict[str, Any] | None = None
        if llm_on(deps, runtime) and evidence:
            try:
                payload = {"mode": "llm", **llm_answer(deps, state, runtime, usage)}
                if not verdict.get("sufficient") and "insufficient evidence" not in payload["text"].lower():
                    payload["text"] = insufficient_line(verdict) + "\n\n" + payload["text"]
            except LLMStepFailed as exc:
                fallback = f"LLM answer failed ({exc}); showing the retrieved evidence instead"
        if payload is None:
            option = best_option(deps, state["question"], evidence) if state.get("task") == "mcq" else None
            payload = {
                "mode": "offline",
                "text": extractive_text(state, option),
                "claims": [{"text": e["text"], "citations": [e["id"]]} for e in evidence],
                "removed_claims": [],
                "invalid_citations": [],
                "option": option[0] if option else None,
            }
            if fallback:
                payload["fallback"] = fallback
        status = "answered" if verdict.get("sufficient") else "insufficient"
        if not evidence:
            status = "insufficient"
        payload.update(
            {
                "status": status,
                "task": state.get("task"),
                "verdict": dict(verdict),
                "sources": sources_of(evidence),
                "kb_version": deps.kb.version,
                "safety_note": SAFETY_NOTE,
                "evidence_ids": [e["id"] for e in evidence],
                "chain_ids": [c["id"] for c in state.get("chains", [])[:10]],
                "warnings": state.get("warnings", []),
            }
        )
        emit(runtime, "answer", status=status, mode=payload["mode"], fallback=fallback)
        turn = {
            "question": state["question"],
            "task": state.get("task", ""),
            "answer": payload,
            "kb_version": deps.kb.version,
        }
        return {
            **usage_update(state, usage),
            "answer": payload,
            "turns": [turn],
            "trace": [step(state, "answer", f"{payload['mode']} answer, {status}", fallback)],
        }

    return answer
