"""``answer``: a cited answer, or an explicit "insufficient evidence", always with sources and KB version.

LLM mode: a Markdown answer streamed token by token, whose every claim must cite ``[E:…]``/``[C:…]`` ids
retrieved in this consult; :mod:`agent.citations` strips invalid ids and removes uncited claims. Offline
(or when the LLM fails): an extractive answer — the best passages grouped by label with their citations and
the key chains — labelled as retrieved evidence, not a generated answer. For an exam question the offline
answer names an option only when the evidence separates it by a calibrated margin (:mod:`agent.nodes.mcq`).

Offline the answer opens with the direct-answer block (agent/nodes/direct_answer.py: KG facts for the
asked relation, then key sentences) and shows only a few short supporting passages after it
(``SHOWN_PER_LABEL`` × ``SHOWN_LABELS``, ``PASSAGE_CHARS`` each; ``context.extra["full"]`` shows all, as
before). On insufficient evidence it says so, names what is missing, and shows at most
``CLOSEST_SHOWN`` closest passages, labelled as not answering the question — never a page of them.
"""

from __future__ import annotations

import re
from collections import OrderedDict
from typing import Any

from langgraph.runtime import Runtime

from agent.citations import ANSWER_OPTION, check_citations, citation_index
from agent.compact_answer import compact_answer_prompt
from agent.context import ConsultContext
from agent.deps import ConsultDeps
from agent.llm import LLMStepFailed, Usage, text_call
from agent.nodes.claim_check import reply_check_lines, reply_status
from agent.nodes.common import emit, llm_on, question_in_context, step, usage_update
from agent.nodes.coverage import NOT_ENGLISH
from agent.nodes.direct_answer import compose_direct_answer
from agent.nodes.focus import answering_passages, question_focus, without_section_label
from agent.nodes.hypothesis import condition
from agent.nodes.mcq import McqJudgement, judge_options, mcq_lines, mcq_status
from agent.nodes.other_condition import closest_first, qualified_subject_passages
from agent.nodes.retrieval import as_asked
from agent.redact import redact
from agent.state import ChainRec, ConsultState, DirectAnswerRec, EvidenceRec, ReplyCheckRec, Verdict
from graphs.model.labels import asks_for_a_differential, specific_labels_asked
from prompts import load_prompt

SAFETY_NOTE = (
    "Decision support only: check the cited sources and apply clinical judgement; this is not a "
    "substitute for professional assessment of the patient."
)
OFFLINE_LABEL = "Retrieved evidence (offline mode — extractive, not a generated answer)"
DIRECT_LABEL = "Direct answer (from the retrieved evidence)"
REPLY_EVIDENCE_LABEL = "What the evidence says about the reply's subject (not a verdict on the reply)"
KG_ONLY_LABEL = (
    "What the knowledge graph lists for the asked relation (the passages are not enough to answer)"
)
SHOWN_LABELS = 3
SHOWN_PER_LABEL = 2
PASSAGE_CHARS = 320
CLOSEST_SHOWN = 3


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


LEADING_BULLET = re.compile(r"^(?:[-•*]\s+)+")


def clip(text: str, chars: int) -> str:
    """``text`` on one line, cut at a word boundary with "…" when longer than ``chars``; a passage that is
    itself a list item loses its marker (it is shown as a bullet: "- - Drugs and diseases …" was doubled),
    and a MedlinePlus page its "Summary :" label."""
    flat = without_section_label(LEADING_BULLET.sub("", " ".join(text.split())))
    if len(flat) <= chars:
        return flat
    return flat[:chars].rsplit(" ", 1)[0] + "…"


def distinct_passages(evidence: list[EvidenceRec]) -> list[EvidenceRec]:
    """The passages without one that would show what an earlier one shows (its first ``PASSAGE_CHARS``):
    MedQuAD files one paragraph under several questions ("What is Parkinson's disease?", "What are the
    treatments …"), and the same DBS paragraph was shown twice among three closest passages."""
    seen: set[str] = set()
    out: list[EvidenceRec] = []
    for e in evidence:
        key = clip(e["text"], PASSAGE_CHARS).lower()
        if key not in seen:
            seen.add(key)
            out.append(e)
    return out


def extractive_text(
    state: ConsultState,
    mcq: McqJudgement | None,
    direct: DirectAnswerRec | None = None,
    full: bool = False,
    supporting: list[EvidenceRec] | None = None,
    closest: list[EvidenceRec] | None = None,
) -> str:
    """The offline answer as Markdown; ``supporting`` (default: all evidence) are the passages shown after
    the direct answer unless ``full`` — the agent passes the passages about the question's subject, those
    that answer it first, so a Wilson disease passage never leads a Fabry disease answer. ``closest``
    (default: all evidence in rank order) is the order an insufficient answer lists its closest passages in
    (``other_condition.closest_first``)."""
    evidence = state.get("evidence", [])
    verdict = state.get("verdict", {})
    lines = [f"**{OFFLINE_LABEL}**", ""]
    sufficient = bool(verdict.get("sufficient")) and bool(evidence)
    # A checked reply is judged by its claim verdicts (put above this by the answer node); whether the
    # reply, read as a question, is "answered" would only contradict them.
    claims_judged = state.get("task") == "check_reply" and bool(state.get("reply_check", {}).get("claims"))
    if not sufficient and not claims_judged:
        lines += [insufficient_line(verdict, state.get("question", "")), ""]
    lines += mcq_lines(mcq, {e["id"] for e in evidence})
    if direct and direct.get("lines"):
        heading = DIRECT_LABEL if sufficient else KG_ONLY_LABEL
        if state.get("task") == "check_reply":  # evidence about the reply, never its verdict (issue 22)
            heading = REPLY_EVIDENCE_LABEL
        lines += [f"### {heading}", *direct["lines"], ""]
    if not sufficient and not full:
        # A question in another language matched nothing: its "closest" passages (unstable angina under a
        # Spanish gout question) are noise, shown only on request (--full, /more).
        english = verdict.get("not_covered") != NOT_ENGLISH
        shown = distinct_passages(evidence if closest is None else closest)[:CLOSEST_SHOWN] if english else []
        if shown:
            lines.append(
                "### Other passages retrieved for the reply"  # not "about its subject": a croup reply's were
                if claims_judged  # about antibiotics for urinary infections
                else "### Closest passages (not judged to answer the question)"
            )
            lines += [f"- {clip(e['text'], PASSAGE_CHARS)} [{e['id']}]" for e in shown]
            lines.append("")
        return "\n".join(lines).strip()
    groups: OrderedDict[str, list[EvidenceRec]] = OrderedDict(
        (label, []) for label in specific_labels_asked(state.get("question", ""))
    )  # what the question asks about comes first, then the other labels in rank order
    for e in distinct_passages(evidence if full or supporting is None else supporting):
        groups.setdefault(e.get("label", "evidence"), []).append(e)
    groups = OrderedDict((label, items) for label, items in groups.items() if items)
    if groups and not full:
        lines.append("### Supporting passages")
    for n, (label, items) in enumerate(groups.items()):
        if not full and n >= SHOWN_LABELS:
            break
        lines.append(f"### {label.capitalize()}" if full else f"**{label.capitalize()}**")
        for e in items[: 4 if full else SHOWN_PER_LABEL]:
            lines.append(f"- {clip(e['text'], 700 if full else PASSAGE_CHARS)} [{e['id']}]")
        lines.append("")
    if not full and len(evidence) > sum(
        len(v[:SHOWN_PER_LABEL]) for v in list(groups.values())[:SHOWN_LABELS]
    ):
        lines += [f"({len(evidence)} passages retrieved; `--full` or `/more` shows them all.)", ""]
    chains = state.get("chains", [])[:5]
    if chains and full:
        lines.append("### Knowledge-graph chains")
        lines += [f"- {c['text']} [{c['id']}]" for c in chains]
        lines.append("")
    return "\n".join(lines).strip()


def offline_direct(
    deps: ConsultDeps, state: ConsultState
) -> tuple[DirectAnswerRec, list[ChainRec], list[EvidenceRec], list[EvidenceRec]]:
    """The direct-answer block for this turn (empty on a question with no recognised subject), its fact
    chains, the supporting passages (those answering the question, then the others about its subject), and
    the evidence in the order an insufficient answer lists its closest passages."""
    focus = question_focus(deps.kb, state)
    evidence = state.get("evidence", [])
    sufficient = bool(state.get("verdict", {}).get("sufficient")) and bool(evidence)
    direct, chains = compose_direct_answer(deps.kb, state, focus, sufficient)
    about, answering = answering_passages(deps.kb, focus, evidence)
    answering_ids = {e["id"] for e in answering}
    supporting = answering + [e for e in about if e["id"] not in answering_ids]
    # Passages on a qualified form of the subject go last: "Pulmonary hypertension (PH) has no cure." led the
    # supporting passages of "What are the treatments for hypertension?" (other_condition.py).
    qualified = qualified_subject_passages(deps.kb, focus, evidence)
    supporting = [e for e in supporting if e["id"] not in qualified] + [
        e for e in supporting if e["id"] in qualified
    ]
    if state.get("task") == "check_reply" or not supporting:
        # A checked reply: the passages quoted about the claims lead (reply_sentences.py). No passage about a
        # subject (the question has none, or none of its passages names it): the passages the key sentences
        # quote are what the answer rests on, not an empty "Supporting passages" heading.
        quoted = list(dict.fromkeys(s["evidence_id"] for s in direct.get("sentences", [])))
        by_id = {e["id"]: e for e in evidence}
        supporting = [by_id[i] for i in quoted if i in by_id] + [
            e for e in supporting if e["id"] not in quoted
        ]
    # Only an insufficient answer lists closest passages: the title matching is not spent on the others.
    closest = evidence if sufficient else closest_first(deps.kb, focus, evidence, supporting)
    return direct, chains, supporting, closest


UNVERIFIED_LINE = (
    "**The reply was not checked claim by claim.** The claim checker could not judge it; below is what the "
    "knowledge base holds about its subject. Read each of the reply's claims against the cited passages "
    "before acting on it."
)


DIFFERENTIAL_MISSING = "a passage on a condition that explains the findings"
"""What a differential lacks: its findings are not its subject ("A 30-year-old woman has fatigue, weight
gain and always feels cold. What could it be?" was told "Missing: Weight Gain", as if no page named it)."""


def insufficient_line(verdict: Verdict, question: str = "") -> str:
    named = (
        [DIFFERENTIAL_MISSING]
        if asks_for_a_differential(question)
        else [as_asked(name, question) for name in verdict.get("missing_entities", [])]
        + verdict.get("missing_labels", [])
        + verdict.get("missing_relations", [])
    )
    seen: dict[str, str] = {}
    for name in named:  # once each, case-insensitively ("gout, Gout" was shown)
        seen.setdefault(name.strip().lower(), name.strip())
    missing = [name for name in seen.values() if name]
    why = "; ".join(verdict.get("reasons", [])[:3])
    if why:  # a sentence of its own: "Missing: X. No retrieved sentence …" (it read "X. no retrieved …")
        why = why[0].upper() + why[1:] + ("" if why.endswith(".") else ".")
    # The calibrated verdict states its probability and threshold in its first reason; a "completeness 8.6/10"
    # beside "Insufficient" then only read as a contradiction (issue 22).
    completeness = f" (completeness {verdict.get('completeness', 0)}/10)"
    score = "" if "answered_probability" in verdict else completeness
    lacking = ", ".join(missing) or "relevant passages"
    if verdict.get("not_covered") == NOT_ENGLISH:  # nothing was matched: a similarity or a "best" sentence
        return f"**Insufficient evidence** — not covered: {NOT_ENGLISH}"  # would only read as a finding
    if verdict.get("not_covered"):  # what the KB cannot answer at all comes first (issue 21)
        note = verdict["not_covered"]
        return f"**Insufficient evidence** — not covered: {note} Missing: {lacking}. {why}".strip()
    return f"**Insufficient evidence**{score}. Missing: {lacking}. {why}".strip()


def llm_answer(
    deps: ConsultDeps,
    state: ConsultState,
    runtime: Runtime[ConsultContext],
    usage: Usage,
    fact_chains: list[ChainRec],
) -> dict[str, Any]:
    """The model's cited answer; ``LLMStepFailed`` when it cites nothing retrieved or declines ("insufficient
    evidence"): a weak model's refusal must never sit under an "answered" status (it did, with a real 1.5B
    model on type 2 diabetes), and when the evidence is short the offline extract says more."""
    assert deps.llm is not None
    evidence = state.get("evidence", [])
    # The KG facts for the asked relation come first: they are what a treatment question needs, and a
    # real 1.5B model given only passage sentences declined to name metformin for type 2 diabetes.
    chains = list({c["id"]: c for c in [*fact_chains, *state.get("chains", [])[:10]]}.values())
    task = state.get("task", "clinical")
    prompt = compact_answer_prompt(  # key sentences with ids, not whole passages (agent/compact_answer.py)
        deps,
        state,
        condition(task),
        question_in_context(state),
        load_prompt("answer_mcq_rules") if task == "mcq" else "",
        chains=chains[: len(fact_chains) + 3],
    )
    raw = text_call(deps.llm, prompt, usage, on_token=lambda t: emit(runtime, "token", text=t), step="answer")
    retrieved = {e["id"] for e in evidence} | {c["id"] for c in chains}
    texts = {e["id"]: e.get("text", "") for e in evidence} | {c["id"]: c.get("text", "") for c in chains}
    checked = check_citations(raw, retrieved, texts)
    ignored = ", ".join(checked.ignored_instructions)
    if not checked.claims:
        if ignored:
            raise LLMStepFailed(f"the model repeated instructions planted in a source ({ignored}); ignored")
        if "insufficient evidence" not in checked.text.lower():
            raise LLMStepFailed("the answer had no claim with a valid citation")
        # A bare "Insufficient evidence: …" tells the clinician less than the offline extract, which
        # says what is missing and lists the KG facts and closest passages with citations.
        raise LLMStepFailed(
            "the model declined to answer although the sufficiency check found passages that answer"
            if state.get("verdict", {}).get("sufficient")
            else "the model declined to answer, as the sufficiency check expected"
        )
    option = ANSWER_OPTION.search(checked.text)
    text = checked.text
    if ignored:  # said in the answer itself, not only in a field a front end may not show
        text += (
            f"\n\n_A retrieved source ({ignored}) contained instructions to the reader or the model; "
            "they were ignored._"
        )
    return {
        "text": text,
        "claims": checked.claims,
        "removed_claims": checked.removed,
        "invalid_citations": sorted(set(checked.invalid_ids)),
        "ignored_instructions": checked.ignored_instructions,
        "option": option.group(1) if option else None,
    }


def _lead_with_verdicts(payload: dict[str, Any], table: ReplyCheckRec, status: str) -> str:
    """A reply check leads with its claim verdicts and takes its status from them (issue 22): "answered"
    above aspirin-helps sentences once reassured a reader about a reply that the evidence contradicts.
    When no claim could be judged (no claim, a question, the checker missing) the answer says so first."""
    payload["reply_check"] = dict(table)
    head, _, rest = payload["text"].partition("\n")
    if table.get("method") == "claim checker" and table.get("claims"):
        block = "\n".join(reply_check_lines(table))
        payload["text"] = (
            f"{head}\n\n{block}\n{rest}" if payload["mode"] == "offline" else f"{block}\n{payload['text']}"
        )
        return reply_status(table)
    note = "\n".join(reply_check_lines(table)) if table.get("problem") else UNVERIFIED_LINE
    payload["text"] = (
        f"{head}\n\n{note}\n{rest}" if payload["mode"] == "offline" else f"{note}\n\n{payload['text']}"
    )
    return "unverified" if status == "answered" else status


def make_answer(deps: ConsultDeps):  # type: ignore[no-untyped-def]
    def answer(state: ConsultState, runtime: Runtime[ConsultContext]) -> dict[str, Any]:
        usage = Usage()
        evidence = state.get("evidence", [])
        verdict = state.get("verdict", {})
        fallback = ""
        payload: dict[str, Any] | None = None
        # The direct answer's KG facts for the asked relation: shown offline, given to the model first.
        direct, new_chains, supporting, closest = offline_direct(deps, state)
        if llm_on(deps, runtime) and evidence:
            try:
                payload = {"mode": "llm", **llm_answer(deps, state, runtime, usage, new_chains)}
                if not verdict.get("sufficient") and "insufficient evidence" not in payload["text"].lower():
                    missing = insufficient_line(verdict, state.get("question", ""))
                    payload["text"] = missing + "\n\n" + payload["text"]
            except LLMStepFailed as exc:
                # Redacted before it enters the answer, its turn and the store (an error body may echo a key).
                fallback = redact(f"LLM answer failed ({exc}); showing the retrieved evidence instead")
        if payload is None:
            mcq = judge_options(deps, state["question"]) if state.get("task") == "mcq" else None
            full = bool(runtime.context.extra.get("full"))
            payload = {
                "mode": "offline",
                "text": extractive_text(state, mcq, direct, full, supporting, closest),
                "direct": direct,
                "claims": [{"text": e["text"], "citations": [e["id"]]} for e in evidence],
                "removed_claims": [],
                "invalid_citations": [],
                "option": mcq.chosen if mcq else None,
                "mcq": mcq.as_dict() if mcq else None,
            }
            if fallback:
                payload["fallback"] = fallback
        status = "answered" if verdict.get("sufficient") else "insufficient"
        if not evidence:
            status = "insufficient"
        if state.get("task") == "check_reply":
            status = _lead_with_verdicts(payload, state.get("reply_check", {}), status)
        elif state.get("task") == "mcq":
            status = mcq_status(status, state["question"], payload.get("option"))
        payload.update(
            {
                "status": status,
                "task": state.get("task"),
                "verdict": dict(verdict),
                "sources": sources_of(evidence),
                "kb_version": deps.kb.version,
                "safety_note": SAFETY_NOTE,
                "evidence_ids": [e["id"] for e in evidence],
                "chain_ids": list(
                    dict.fromkeys(
                        [*(c["id"] for c in new_chains), *(c["id"] for c in state.get("chains", [])[:10])]
                    )
                ),
                "warnings": state.get("warnings", []),
                **citation_index(evidence, [*new_chains, *state.get("chains", [])[:10]]),
            }
        )
        emit(runtime, "answer", status=status, mode=payload["mode"], fallback=fallback)
        turn = {
            "question": state["question"],
            "task": state.get("task", ""),
            "answer": payload,
            "kb_version": deps.kb.version,
        }
        update: dict[str, Any] = {"chains": new_chains, "direct_answer": direct} if direct is not None else {}
        return {
            **update,
            **usage_update(state, usage),
            "answer": payload,
            "turns": [turn],
            "trace": [step(state, "answer", f"{payload['mode']} answer, {status}", fallback)],
        }

    return answer
