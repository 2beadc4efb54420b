"""What the evidence says under a checked reply: read claim by claim, from the passages about the claim's
condition (agent/nodes/reply_sentences.py; issue 22's AF/aspirin reply).

Real components: the slice KB's linker, the shipped int8 claim checker, the slice KB's consults.
"""

from __future__ import annotations

from typing import Any

from agent.consult import Consultant
from agent.nodes.reply_sentences import (
    REPLY_WORDS,
    bears_on,
    claim_stems,
    condition_passages,
    reply_key_sentences,
)
from agent.state import ConsultState, EvidenceRec
from graphs.kb import KnowledgeBase

GOUT_QUESTION = "Is allopurinol used for gout with kidney stones?"
"""Names two conditions the slice KB links (gout, kidney stones), as the AF/aspirin reply names atrial
fibrillation and stroke; the default-KB test (tests/test_default_kb.py) asks that reply itself."""


def _passage(pid: str, title: str, text: str, keyword: str = "") -> EvidenceRec:
    rec: Any = {
        "id": pid,
        "document_id": f"doc:{pid}",
        "title": title,
        "text": text,
        "keyword_entity": keyword,
    }
    return rec


BOTH_SUBJECTS = _passage(
    "E:both",
    "What are the treatments for Gout and Kidney Stones ?",
    "Allopurinol lowers uric acid and is used to prevent gout attacks and uric acid kidney stones. During an "
    "attack, anti-inflammatory medicines such as NSAIDs or colchicine relieve the pain and swelling.",
    "DOID:13189",
)
ONE_SUBJECT = _passage(
    "E:one",
    "What are the treatments for Gout ?",
    "Gout attacks are treated with NSAIDs, colchicine or corticosteroids. Allopurinol is taken every day to "
    "lower uric acid.",
    "DOID:13189",
)
IN_PASSING = _passage(
    "E:passing",
    "What causes High Blood Pressure ?",
    "Some medicines raise blood pressure. People with gout or kidney stones often have other conditions, "
    "such as high blood pressure, that need treatment too.",
)


def test_the_passages_kept_for_a_claim_are_those_with_most_of_its_conditions_as_subject(
    slice_kb: KnowledgeBase,
) -> None:
    kept = condition_passages(slice_kb, GOUT_QUESTION, [IN_PASSING, ONE_SUBJECT, BOTH_SUBJECTS])
    assert kept is not None
    # Both conditions are the subject of one page (keyword entity and title); the other has gout only, and
    # the blood-pressure page names both in passing.
    assert [p["id"] for p in kept] == ["E:both"]
    kept = condition_passages(slice_kb, GOUT_QUESTION, [IN_PASSING, ONE_SUBJECT])
    assert kept is not None and [p["id"] for p in kept] == ["E:one"]


def test_a_claim_that_names_no_disease_has_no_condition_to_hold_passages_to(slice_kb: KnowledgeBase) -> None:
    assert condition_passages(slice_kb, "Is aspirin safe for everyone?", [IN_PASSING]) is None


def test_no_passage_about_the_named_condition_leaves_the_claim_without_sentences(
    slice_kb: KnowledgeBase,
) -> None:
    state: Any = {
        "reply_check": {
            "claims": [
                {"text": "sickle cell disease is inherited", "question": "Is sickle cell disease inherited?"}
            ]
        },
        "evidence": [ONE_SUBJECT, IN_PASSING],
    }
    assert condition_passages(slice_kb, "Is sickle cell disease inherited?", state["evidence"]) == []
    assert reply_key_sentences(slice_kb, state) == []


def test_the_reply_evidence_is_read_from_the_page_about_the_claim(slice_kb: KnowledgeBase) -> None:
    state: ConsultState = {  # type: ignore[typeddict-item]
        "reply_check": {
            "claims": [{"text": "allopurinol is used for gout with kidney stones", "question": GOUT_QUESTION}]
        },
        "evidence": [IN_PASSING, ONE_SUBJECT, BOTH_SUBJECTS],
    }
    picked = reply_key_sentences(slice_kb, state)
    assert picked, "the page about both conditions is read as bearing on the claim"
    assert {k.evidence_id for k in picked} == {"E:both"}
    assert any("Allopurinol" in k.text for k in picked)
    assert sum(len(k.text.split()) for k in picked) <= REPLY_WORDS


def test_a_checked_reply_on_the_slice_shows_claim_sentences_only_from_retrieved_passages(
    consultant: Consultant,
) -> None:
    answer = consultant.ask(
        "Colleague says: gout is caused by too much uric acid in the blood.", task="check_reply"
    ).answer
    sentences = answer["direct"]["sentences"]
    assert sentences, answer["text"]
    assert {s["evidence_id"] for s in sentences} <= set(answer["evidence_ids"])
    assert all("gout" in s["text"].lower() or "uric" in s["text"].lower() for s in sentences)


def test_a_sentence_must_name_what_the_claim_asserts_besides_its_one_condition() -> None:
    stems = claim_stems("croup is caused by bacteria", ["croup"])
    assert bears_on(stems, "The cause is usually a virus, often parainfluenza virus.")
    assert not bears_on(stems, "Croup is more common in the fall and winter.")
    # Two conditions: their relation is the claim, so the second condition's name counts.
    stems = claim_stems("aspirin alone is adequate stroke prevention in atrial fibrillation", [])
    assert bears_on(
        stems, "Treating individuals with warfarin reduces the rate of stroke for those who have AF."
    )


def test_a_list_lead_in_without_its_items_is_not_shown(slice_kb: KnowledgeBase) -> None:
    cut = _passage(
        "E:cut",
        "What are the symptoms of Gout ?",
        "Allopurinol is not started during a gout attack. As the gout attack goes on, you may have",
        "DOID:13189",
    )
    state: Any = {
        "reply_check": {
            "claims": [
                {
                    "text": "allopurinol is started during a gout attack",
                    "question": "Is allopurinol started during a gout attack?",
                }
            ]
        },
        "evidence": [cut],
    }
    shown = [k.text for k in reply_key_sentences(slice_kb, state) or []]
    assert shown == ["Allopurinol is not started during a gout attack."]
