"""``start_turn``: take a new question, reset per-turn fields, choose the task's search condition."""

from __future__ import annotations

import re
from typing import Any

from langgraph.runtime import Runtime
from langgraph.types import Overwrite

from agent.context import TASKS, ConsultContext
from agent.nodes.common import emit, step
from agent.nodes.mcq_parse import parse_mcq
from agent.state import ConsultState
from tools.common import truncate

MAX_QUESTION_CHARS = 6000
SPEAKERS = (
    r"colleague|co-?worker|resident|registrar|consultant|attending|gp|intern|student|fellow|pharmacist|nurse|"
    r"senior|physician|specialist|surgeon|[a-z]+ologist|pa?ediatrician|doctor|dr\.? \w+"
)
REPORTED_CLAIM = re.compile(
    rf"\b(?:{SPEAKERS})s?\b[^.?!:;]{{0,40}}?\b(?:says|said|thinks|thought|claims|claimed|believes|believed|"
    r"tells|told|wrote|writes|argues|argued|insists|insisted|reckons|maintains|advised|advises|recommends|"
    r"recommended|suggests|suggested|wants)\b",
    re.I,
)
"""A clinician reported as saying something: "Colleague says: …", "My registrar thinks the ECG …", "the GP
wrote: …". Speakers are clinicians only: "the patient says he has chest pain" is a case, not a claim."""
REPORT_HEADER = re.compile(
    r"^\W*(?:[a-z'’-]+ ){0,4}"
    rf"(?:reply|answer|response|note|letter|handover|summary|advice|plan|{SPEAKERS})\b[^:\n]{{0,20}}:"
    r"(?=\s*\S.{15,})",
    re.I,
)
"""A statement under a header: "Neuro registrar: …", "Vascular clinic note: …", "From the handover: …"."""
REPORT_CUES = (
    "reply:",
    "doctor's reply",
    "check this answer",
    "check my answer",
    "is this correct:",
    "response:",
)
ASKS_IF_RIGHT = re.compile(
    r"\b(?:is|was|are|were) (?:this|that|it|he|she|they|the \w+)\b[^?]{0,40}\b(?:right|correct|true|accurate|"
    r"wrong)\b|\bdo you agree\b|\bcheck (?:this|that|it|my)\b|\bis (?:this|that) so\b|\bshould (?:i|we) "
    r"(?:believe|trust|follow)\b",
    re.I,
)
"""A reported statement followed by a question is a question ("The doctor said my son has roundworms. What
medicine gets rid of them?") unless the question asks whether the statement is right."""


def is_reported_statement(question: str) -> bool:
    """A colleague's (or a doctor's) statement given to be checked, not a question that quotes one.

    Why: a newcomer's "Colleague says: hyperthyroidism typically causes weight gain …" was answered as a
    clinical question, "answered", under "Lack of thyroid hormone … cause weight gain" from an obesity page
    (issue 22); and "The doctor said my son has roundworms. What medicine gets rid of them?" was checked as a
    reply. Measured on the labelled wordings in evals/reports/task_detection.md."""
    reported = (
        any(cue in question.lower() for cue in REPORT_CUES)
        or REPORTED_CLAIM.search(question) is not None
        or REPORT_HEADER.search(question) is not None
    )
    return reported and ("?" not in question or ASKS_IF_RIGHT.search(question) is not None)


def mcq_options(question: str) -> dict[str, str]:
    """Lettered options ("A) …", "(b) …", "c. …", "A: …"; one a line or inline after the stem), keyed by the
    upper-case letter: one reading for detecting an exam question and for judging its options."""
    return parse_mcq(question).options


def detect_task(question: str) -> str:
    """Which search condition fits (EbmKG Figure 9), when the user did not say.

    Rules, in order: three or more lettered options (one a line or inline) → exam MCQ; a quoted reply or a
    clinician reported as saying something ("colleague says", "the registrar thinks"), unless followed by a
    question other than whether it is right → check a reply; "decided"/"audit"/"was it right" → audit a
    decision; otherwise an open clinical question.
    """
    q = question.lower()
    if len(mcq_options(question)) >= 3:
        return "mcq"
    if is_reported_statement(question):
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
