"""The asked-detail check after the "answered" model: does the direct answer, composed as it would be shown,
name the detail the question asks for (agent/nodes/asked_detail.py says what each kind of detail is), the
question's own unlinked term (agent/nodes/asked_term.py), the treatment a yes/no question asks about
(``missing_intervention``) and each thing a comparison compares (agent/nodes/comparison.py)?

Why a module of its own: the check composes the direct answer, and the direct answer reads the asked detail
to lead with the sentence that names it; the question-reading half (asked_detail.py) imports neither.
"""

from __future__ import annotations

from agent.nodes.asked_detail import AskedDetail, asked_detail, names_in
from agent.nodes.asked_intervention import asked_interventions
from agent.nodes.asked_term import asked_about, missing_term, turn_entities
from agent.nodes.comparison import compared_subjects
from agent.nodes.direct_answer import compose_direct_answer, linked_ids
from agent.nodes.focus import Focus
from agent.nodes.other_condition import titled_off_question
from agent.nodes.retrieval import search_question
from agent.state import ConsultState, DirectAnswerRec
from graphs.kb import KnowledgeBase
from graphs.model.labels import mentions_label


def shown_answer_misses_detail(kb: KnowledgeBase, state: ConsultState, focus: Focus) -> AskedDetail | None:
    """The detail asked when the direct answer, composed as it would be shown if "answered", names none of
    it; ``None`` when it does or when nothing specific is asked. For a question with no linked subject, an
    asked aspect (treatment, symptoms …) that no shown sentence carries is such a detail too
    (``shows_asked_aspect``)."""
    question = search_question(state)
    detail = asked_detail(question)
    term_question = asked_about(state, question)
    unanchored = unanchored_aspects(kb, state, focus, question)
    if detail is None and not term_question and not unanchored:
        return None
    direct, _ = compose_direct_answer(kb, state, focus, sufficient=True)
    if unanchored and not shows_asked_aspect(state, direct, unanchored):
        return AskedDetail("aspect", frozenset(), unanchored[0])
    if detail is not None and shows_asked_detail(kb, question, linked_ids(state), direct, detail) is False:
        return detail
    if term_question:
        texts = shown_texts(state, direct)
        term = missing_term(term_question, turn_entities(state), texts) or missing_intervention(
            kb, state, term_question, texts
        )
        if term is not None:
            return AskedDetail("term", frozenset(), term)
        subject = uncompared_subject(term_question, focus, texts)
        if subject is not None:
            return AskedDetail("subject", frozenset(), subject)
    return None


def uncompared_subject(question: str, focus: Focus, texts: list[str]) -> str | None:
    """The name of a subject a comparing question asks about that neither the shown sentences nor their
    passages name ("How is Crohn's disease different from ulcerative colitis?" answered from Crohn's pages
    alone); the planner's next round then walks from it (agent/nodes/planner.py, missing entities)."""
    for entity, pattern in compared_subjects(question, focus):
        if not any(pattern.search(t) for t in texts):
            return str(entity.get("surface") or entity.get("name", ""))
    return None


def missing_intervention(
    kb: KnowledgeBase, state: ConsultState, question: str, texts: list[str]
) -> str | None:
    """The name of a treatment or exposure a short yes/no question asks about (a confidently linked drug or
    concept) that neither the shown sentences nor their passages name under any of its KG names; ``None``
    when each is named or the question is not a yes/no.

    Why: "Should a woman with a history of breast cancer take hormone replacement therapy?" was answered
    (p 0.97) with "Hormonal therapy keeps cancer cells from getting the hormones they need to grow." and
    tamoxifen — the anti-hormone treatment of the cancer, nearly the opposite of what was asked. The reader
    reads "hormonal therapy" as on the question; the KG's names of the linked concept (HRT, estrogen
    replacement therapy, menopausal hormone therapy) say it is another thing."""
    asked = asked_interventions(state, question)
    if not asked or not texts:
        return None
    named = {i for mentions in kb.matcher.find_many(texts) for m in mentions for i in m.entity_ids}
    missing = [e for e in asked if e["id"] not in named]
    return missing[0]["name"] if missing else None


def unanchored_aspects(kb: KnowledgeBase, state: ConsultState, focus: Focus, question: str) -> list[str]:
    """The asked aspects (not "overview") of a question the KG links no subject of, when some retrieved
    page is titled with a condition the question does not name (other_condition.py
    ``titled_off_question``): the KB then holds pages on named conditions that answer the same shape of
    question, and only the asked aspect ties a shown sentence to this one. A PubMed snippet pool (titles
    "PubMed 123") never qualifies: its questions name their subject in words the sentences repeat."""
    asked = [label for label in focus.asked if label != "overview"]
    if focus.entities or not asked or not titled_off_question(kb, question, state.get("evidence", [])):
        return []
    return asked


def shows_asked_aspect(state: ConsultState, direct: DirectAnswerRec, asked: list[str]) -> bool:
    """Whether a shown key sentence carries an asked aspect: it names one of its cues ("splint",
    "treated") or is quoted from a passage labelled with it (a MedQuAD "What are the treatments for …"
    page).

    Why, for a question the KG links no subject of (``shown_answer_misses_detail``): nothing else ties its
    answer to what was asked. "What is the treatment for a broken wrist?" was *answered* with "Wrist pain
    with bruising and swelling can be a sign of injury." from the wrist injuries overview — a sentence on
    the right body part that says nothing of treatment."""
    label = {ev["id"]: ev.get("label", "") for ev in state.get("evidence", [])}
    return any(
        label.get(s["evidence_id"]) in asked or any(mentions_label(s.get("text", ""), a) for a in asked)
        for s in direct.get("sentences", [])
    )


def shown_texts(state: ConsultState, direct: DirectAnswerRec) -> list[str]:
    """The shown key sentences and the passages they are quoted from (the turn's evidence holds their text):
    a sentence of a passage that names the term is about it ("It promotes tumour growth" in a passage on
    TAMs)."""
    passages = {ev["id"]: ev.get("text", "") for ev in state.get("evidence", [])}
    sentences = direct.get("sentences", [])
    quoted = dict.fromkeys(s["evidence_id"] for s in sentences)
    return [s.get("text", "") for s in sentences] + [passages[i] for i in quoted if i in passages]


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
