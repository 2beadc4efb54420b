"""The asked-detail check after the "answered" model: does the direct answer, composed as it would be shown,
name the detail the question asks for (agent/nodes/asked_detail.py says what each kind of detail is)?

Why a module of its own: the check composes the direct answer, and the direct answer reads the asked detail
to lead with the sentence that names it; the question-reading half (asked_detail.py) imports neither.
"""

from __future__ import annotations

from agent.nodes.asked_detail import AskedDetail, asked_detail, names_in
from agent.nodes.direct_answer import compose_direct_answer, linked_ids
from agent.nodes.focus import Focus
from agent.nodes.retrieval import search_question
from agent.state import ConsultState, DirectAnswerRec
from graphs.kb import KnowledgeBase


def shown_answer_misses_detail(kb: KnowledgeBase, state: ConsultState, focus: Focus) -> AskedDetail | None:
    """The detail asked when the direct answer, composed as it would be shown if "answered", names none of
    it; ``None`` when it does or when nothing specific is asked."""
    question = search_question(state)
    detail = asked_detail(question)
    if detail is None:
        return None
    direct, _ = compose_direct_answer(kb, state, focus, sufficient=True)
    return detail if shows_asked_detail(kb, question, linked_ids(state), direct, detail) is False else None


def shows_asked_detail(
    kb: KnowledgeBase,
    question: str,
    question_entity_ids: set[str],
    direct: DirectAnswerRec,
    detail: AskedDetail | None = None,
) -> bool | None:
    """Whether the direct answer as it would be shown names the detail asked: a named answer, a KG fact of
    the asked type, or a candidate in its key sentences; ``None`` when nothing specific is asked.
    ``detail`` is ``asked_detail(question)`` when the caller has it already."""
    detail = detail or asked_detail(question)
    if detail is None:
        return None
    if direct.get("named"):
        return True  # answer_candidates named a thing of the asked KG type the question does not hold
    if detail.kind in ("typed", "other") and any(
        f.get("entity_type") in detail.types and f.get("entity_id") not in question_entity_ids
        for f in direct.get("facts", [])
    ):
        return True
    texts = [s.get("text", "") for s in direct.get("sentences", [])]
    return names_in(kb, question, question_entity_ids, texts, detail)
