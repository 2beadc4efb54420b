"""A treatment question's answer leads with a sentence that names a treatment (agent/nodes/treatment_lead.py).

On the default KB "What is the recommended treatment for latent tuberculosis?" led with "Treatment of latent
TB infection is essential for controlling and eliminating TB in the United States." and the sentence naming
isoniazid, rifampin and rifapentine came fifth, below the budget; "What medicines treat heart failure?" led
with "Your doctor will prescribe medicines based on the type of heart failure you have …".
"""

from __future__ import annotations

import re

import pytest

from agent.consult import Consultant
from agent.nodes.focus import Focus
from agent.nodes.treatment_lead import treatment_lead
from agent.state import KGFactRec
from graphs.kb import KnowledgeBase

QUESTION = "How is gout treated?"


def _facts(kb: KnowledgeBase, drug: str, disease_id: str) -> list[KGFactRec]:
    ids = kb.matcher.entity_ids(drug)
    assert ids, f"the slice KG should know {drug}"
    return [
        {
            "entity_id": ids[0],
            "entity_name": drug,
            "entity_type": "Compound",
            "relation": "treats",
            "relations": ["treats"],
            "focus_id": disease_id,
        }
    ]


def test_a_sentence_naming_a_listed_drug_or_a_class_of_medicine_may_lead(slice_kb: KnowledgeBase) -> None:
    gout = {"id": "DOID:13189", "name": "gout", "type": "Disease"}
    facts = _facts(slice_kb, "colchicine", "DOID:13189")
    lead = treatment_lead(slice_kb, QUESTION, Focus([gout], ["treatment"]), facts)  # type: ignore[list-item]
    assert lead is not None
    assert lead("Colchicine can relieve the pain of a gout attack.")
    assert lead("Bacterial pneumonia is treated with medicines called antibiotics.")
    assert lead("ACE inhibitors work to improve heart failure in many ways.")
    assert not lead("The goals of treatment are to cure the infection and prevent complications.")
    assert not lead("Insulin resistance is common in people with gout.")
    # A lead must say on its own whose treatment it is: this one was said of people with type 2 diabetes.
    assert not lead("Others require oral medications or insulin, and some people may need to take both.")
    assert not lead(
        "In most cases, health care providers do not prescribe corticosteroids for long-term use."
    )


def test_no_lead_unless_the_treatment_of_a_condition_is_asked(slice_kb: KnowledgeBase) -> None:
    gout = {"id": "DOID:13189", "name": "gout", "type": "Disease"}
    assert treatment_lead(slice_kb, QUESTION, Focus([gout], ["symptoms"]), []) is None  # type: ignore[list-item]
    # "Dasatinib and Blinatumomab are used for treatment of which disease?": the asked thing is a condition.
    dasatinib = {"id": "DB01254", "name": "Dasatinib", "type": "Compound"}
    assert treatment_lead(slice_kb, QUESTION, Focus([dasatinib], ["treatment"]), []) is None  # type: ignore[list-item]
    assert treatment_lead(slice_kb, QUESTION, Focus([dasatinib, gout], ["treatment"]), []) is None  # type: ignore[list-item]


@pytest.mark.parametrize(
    ("question", "named"),
    [
        # was "There are two ways to approach the treatment of migraine headache with drugs: …"
        ("How is migraine treated?", "sumatriptan"),
        # was "Health care providers treat resistant or uncontrolled high blood pressure with an intensive …";
        # two classes sit near the reader's floor here (ACE inhibitors, alpha-beta blockers) and either leads
        ("How is high blood pressure treated?", "inhibitors|blockers"),
    ],
)
def test_a_treatment_question_leads_with_a_sentence_naming_a_treatment(
    consultant: Consultant, question: str, named: str
) -> None:
    answer = consultant.ask(question).answer
    sentences = answer["direct"]["sentences"]
    assert answer["status"] == "answered" and sentences, answer["text"]
    assert re.search(named, sentences[0]["text"]), sentences[0]["text"]
