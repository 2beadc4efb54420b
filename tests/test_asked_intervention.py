"""A yes/no question about a linked treatment is answered only by evidence that names it
(agent/nodes/detail_check.missing_intervention).

On the default KB "Should a woman with a history of breast cancer take hormone replacement therapy?" was
answered (p 0.97) with "Hormonal therapy keeps cancer cells from getting the hormones they need to grow." and
tamoxifen: the cancer's anti-hormone treatment, not the menopausal hormones asked about
(tests/test_default_kb.py asks it for real).
"""

from __future__ import annotations

from typing import Any

from agent.nodes.detail_check import missing_intervention
from graphs.kb import KnowledgeBase

METFORMIN = {
    "id": "DRUGBANK:DB00331",
    "name": "Metformin",
    "type": "Compound",
    "method": "dictionary",
    "score": 1.0,
    "surface": "metformin",
}


def _state(*entities: dict[str, Any]) -> Any:
    return {"entities": list(entities), "turn_entity_ids": [e["id"] for e in entities]}


def test_a_yes_no_question_needs_the_drug_it_asks_about_named(slice_kb: KnowledgeBase) -> None:
    question = "Is metformin safe in pregnancy?"
    state = _state(METFORMIN)
    assert missing_intervention(slice_kb, state, question, ["Insulin is safe in pregnancy."]) == "Metformin"
    assert missing_intervention(slice_kb, state, question, ["Metformin crosses the placenta."]) is None


def test_no_check_for_an_overview_request_a_one_word_concept_or_a_tentative_link(
    slice_kb: KnowledgeBase,
) -> None:
    off_topic = ["Insulin is safe in pregnancy."]
    request = "Do you have information about metformin"
    assert missing_intervention(slice_kb, _state(METFORMIN), request, off_topic) is None
    assert missing_intervention(slice_kb, _state(METFORMIN), "What is metformin?", off_topic) is None
    shot = {
        "id": "FOCUS:childhood_immunization",
        "name": "Childhood Immunization",
        "type": "Concept",
        "method": "dictionary",
        "score": 1.0,
        "surface": "shot",
    }
    assert (
        missing_intervention(slice_kb, _state(shot), "Can I still get the shingles shot?", off_topic) is None
    )
    tentative = {**METFORMIN, "method": "embedding", "score": 0.72, "surface": "metformin"}
    assert missing_intervention(slice_kb, _state(tentative), "Is metformin safe?", off_topic) is None


def test_kg_facts_are_shown_for_a_yes_no_treatment_question_only_when_they_name_the_treatment() -> None:
    from agent.nodes.asked_intervention import names_the_asked_intervention

    question = "Is metformin safe in pregnancy?"
    breast_cancer_drugs = [{"entity_id": "DRUGBANK:DB00675", "entity_name": "Tamoxifen"}]
    with_metformin = [*breast_cancer_drugs, {"entity_id": METFORMIN["id"], "entity_name": "Metformin"}]
    assert not names_the_asked_intervention(_state(METFORMIN), question, breast_cancer_drugs)  # type: ignore[arg-type]
    assert names_the_asked_intervention(_state(METFORMIN), question, with_metformin)  # type: ignore[arg-type]
    by_name = [{"entity_id": "LABELEDIN:metformin", "entity_name": "metformin"}]  # the same drug, another id
    assert names_the_asked_intervention(_state(METFORMIN), question, by_name)  # type: ignore[arg-type]
    assert names_the_asked_intervention(_state(METFORMIN), "How is diabetes treated?", breast_cancer_drugs)  # type: ignore[arg-type]
