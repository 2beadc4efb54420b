"""Follow-up questions keep their subject — real consults over the real slice KB, offline.

"its", "the dose", "what about children?" continue with the consult's focus; a question with a subject of its
own starts a new focus; a question with neither ("capital of France?") borrows nothing; a follow-up asked as
the first question of a consult ends insufficient with a message saying what to do; and the chains an
answer shows are its own turn's, never an earlier turn's again.
"""

from __future__ import annotations

from typing import Any

import pytest
from langgraph.runtime import Runtime

from agent.citations import cited_ids
from agent.consult import Consultant, TurnResult
from agent.context import ConsultContext
from agent.deps import ConsultDeps
from agent.nodes.follow_up import focus_before, is_follow_up, refers_back
from agent.nodes.retrieval import UNRESOLVED_REFERENCE, make_ner_link, search_question
from agent.sessions import thread_config
from agent.state import ConsultState, EntityRec
from graphs.kb import KnowledgeBase

GOUT, ASTHMA, ALLOPURINOL = "DOID:13189", "DOID:2841", "DRUGBANK:DB00437"


def link_step(result: TurnResult) -> dict[str, Any]:
    return next(s for s in result.trace if s["step"] == "ner_link")


def state_of(consultant: Consultant, consult_id: str) -> dict[str, Any]:
    return dict(consultant.graph.get_state(thread_config(consult_id)).values)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    "follow_up",
    [
        "and what are its side effects?",
        "how is the dose adjusted?",
        "what about children?",
        "Is it inherited?",
    ],
)
def test_a_follow_up_that_refers_back_continues_with_the_consults_focus(
    consultant: Consultant, follow_up: str
) -> None:
    first = consultant.ask("What is the treatment for gout?")
    second = consultant.ask(follow_up, consult_id=first.consult_id)
    link = link_step(second)
    assert link["detail"]["carried"][0] == GOUT and "continuing with gout" in link["summary"]
    # A drug question about "its" treatment also carries the drugs the previous answer named first.
    drugs = [f["entity_id"] for f in first.answer["direct"]["facts"] if f["entity_type"] == "Compound"][:2]
    drug_question = follow_up in ("and what are its side effects?", "how is the dose adjusted?")
    assert link["detail"]["carried"][1:] == (drugs if drug_question else [])
    state = state_of(consultant, first.consult_id)
    assert GOUT in state["turn_entity_ids"] and focus_before({**state, "turn": 3}) == [GOUT]
    assert (
        "FOCUS:drug_reactions" not in state["turn_entity_ids"]
    )  # "side effects" is the aspect, not the subject
    asked = search_question(state)  # the vector search looks for gout: named in place of "it", or in brackets
    if follow_up == "Is it inherited?":
        assert asked == "Is gout inherited?"
    else:
        assert asked.startswith(f"{follow_up} (gout")
    top = consultant.kb.store.get_evidence(second.answer["evidence_ids"][:3])
    assert any("gout" in ev.text.lower() for ev in top.values())


def test_chains_shown_are_this_turns_and_a_new_subject_replaces_the_focus(consultant: Consultant) -> None:
    first = consultant.ask("Is allopurinol used to treat gout?")
    assert first.answer["chain_ids"], "the first turn connects allopurinol and gout"
    assert "Allopurinol -treats-> gout" in first.answer["chain_texts"].values()
    second = consultant.ask("What are the symptoms of asthma?", consult_id=first.consult_id)
    assert link_step(second)["detail"]["carried"] == []
    assert not set(second.answer["chain_ids"]) & set(first.answer["chain_ids"])
    assert not set(cited_ids(second.answer["text"])) & set(first.answer["chain_ids"])
    assert focus_before({**state_of(consultant, first.consult_id), "turn": 3}) == [ASTHMA]
    third = consultant.ask("what are its complications?", consult_id=first.consult_id)
    assert link_step(third)["detail"]["carried"] == [ASTHMA]  # "its" is asthma now, not gout


def test_a_question_without_subject_or_cue_borrows_nothing(consultant: Consultant) -> None:
    first = consultant.ask("What is the treatment for gout?")
    second = consultant.ask("What is the capital of France?", consult_id=first.consult_id)
    assert link_step(second)["detail"]["carried"] == []
    assert second.answer["status"] == "insufficient"
    # kept for a later "its"
    assert focus_before({**state_of(consultant, first.consult_id), "turn": 3}) == [GOUT]


@pytest.mark.parametrize(
    "question", ["and what are its side effects?", "what is the dose?", "Is it contagious?"]
)
def test_a_follow_up_as_the_first_turn_ends_insufficient_and_says_what_to_do(
    consultant: Consultant, question: str
) -> None:
    result = consultant.ask(question)
    assert result.answer["status"] == "insufficient"
    assert UNRESOLVED_REFERENCE in result.answer["warnings"]
    assert state_of(consultant, result.consult_id)["turn_entity_ids"] == []
    assert "Traceback" not in result.answer["text"]


def test_a_patient_case_saying_this_is_not_taken_for_a_follow_up(consultant: Consultant) -> None:
    """A first-turn vignette ("How should this be treated?", "the patient") carries its own content: it must
    keep its entities and get no "refers back" warning (the rule is for bare references like "Is it
    contagious?")."""
    case = (
        "A 45-year-old man who drinks alcohol every day has pain in his liver and kidney area. "
        "What should be done about this?"
    )
    result = consultant.ask(case)
    assert UNRESOLVED_REFERENCE not in result.answer["warnings"]
    assert state_of(consultant, result.consult_id)["turn_entity_ids"], "the case's own entities are kept"


def test_its_side_effects_after_a_treatment_answer_carries_the_answers_drug(slice_kb: KnowledgeBase) -> None:
    """The previous answer's key entity: the drug on the chains it cited (here allopurinol for gout)."""
    gout: EntityRec = {
        "id": GOUT,
        "name": "gout",
        "type": "Disease",
        "score": 1.0,
        "turn": 1,
        "surface": "gout",
    }
    chain = "C:gout-allopurinol"
    state: ConsultState = {
        "question": "and what are its side effects?",
        "turn": 2,
        "entities": [gout],
        "focus_by_turn": {"1": [GOUT]},
        "turns": [
            {
                "question": "What is the treatment for gout?",
                "answer": {"chain_ids": [chain], "chain_nodes": {chain: [ALLOPURINOL, GOUT]}},
            }
        ],
    }
    runtime = Runtime(context=ConsultContext(), stream_writer=lambda _: None)
    out = make_ner_link(ConsultDeps(slice_kb))(state, runtime)
    assert out["turn_entity_ids"][-2:] == [GOUT, ALLOPURINOL]
    assert out["focus_by_turn"] == {"1": [GOUT], "2": [GOUT]}  # the consult is still about gout
    merged: ConsultState = {**state, **out, "entities": [gout, *out["entities"]]}
    assert search_question(merged) == "and what are its side effects? (gout, Allopurinol)"
    # A symptom question about "it" is not a drug question: the disease alone is carried.
    out = make_ner_link(ConsultDeps(slice_kb))({**state, "question": "what are its symptoms?"}, runtime)
    assert ALLOPURINOL not in out["turn_entity_ids"]


@pytest.mark.parametrize(
    ("question", "expected"),
    [
        ("What are its symptoms?", True),
        ("how is the dose adjusted?", True),
        ("what about children?", True),
        ("And in pregnancy?", True),
        ("What are the symptoms?", True),
        ("What is the capital of France?", False),
        ("Tell me a joke", False),
    ],
)
def test_what_reads_as_a_follow_up_without_a_subject(question: str, expected: bool) -> None:
    assert is_follow_up(question, []) is expected


def test_a_named_subject_is_not_a_follow_up_unless_it_refers_back() -> None:
    asthma: EntityRec = {"id": ASTHMA, "name": "asthma", "type": "Disease", "surface": "asthma"}
    assert not is_follow_up("What about asthma?", [asthma])
    assert not is_follow_up("What is the treatment for asthma?", [asthma])  # "the treatment" is asthma's
    assert is_follow_up("Is asthma one of its complications?", [asthma])


@pytest.mark.parametrize(
    ("question", "back"),
    [
        ("What are the side effects of statins?", False),  # names what they are of, though the KG lacks it
        ("What are the side effects?", True),
        ("What are the side effects of it?", True),
        ("What is the dose for children?", True),  # "for children" is who, not what
        ("What is the dose of the drug?", True),
        ("What is the treatment for a broken wrist?", False),  # names what it is for
        ("What is the treatment for it?", True),
        ("What are the symptoms of a blood sugar that is too low?", False),  # a relative "that"
        ("My son has a rash that won't go away. What should I do?", False),
        ("How is that treated?", True),
        ("Is that serious?", True),
        ("Can that cause fever?", True),
    ],
)
def test_an_aspect_of_a_named_thing_does_not_refer_back(question: str, back: bool) -> None:
    """ "What are the side effects of statins?" was warned that it "refers back … but the consult has no
    earlier subject" on its first turn."""
    assert refers_back(question) is back
