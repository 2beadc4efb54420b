"""A drug's list of indications answers "what is it for?", not whether it fits the condition a question names.

Newcomer trial (2026-11-27): "We prescribed ciprofloxacin … 10 weeks pregnant … uncomplicated bladder
infection. Was that the right decision?" opened with "Conditions the KG lists Ciprofloxacin for: chronic
obstructive pulmonary disease; dyspepsia; heartburn". On the real slice KB with metformin: the general
question keeps the list, a question naming an unlinked condition or a pregnancy shows none, and a question
naming a linked condition keeps only the drug's fact for it.
"""

from __future__ import annotations

import pytest

from agent.consult import Consultant
from agent.nodes.direct_answer import answers_the_aspect
from graphs.kb import KnowledgeBase
from graphs.model.labels import relations_for
from graphs.stores.kg_facts import kg_facts

HEADING = "Conditions the KG lists Metformin for"
T2D = "DOID:9352"
METFORMIN = "DRUGBANK:DB00331"


def test_the_general_question_lists_what_the_kg_gives_the_drug_for(consultant: Consultant) -> None:
    direct = consultant.ask("What does metformin treat?").answer["direct"]
    assert direct["fact_heading"].startswith(HEADING) and direct["facts"]


@pytest.mark.parametrize(
    "question",
    [
        "We started metformin for a woman with a bladder infection. Was that the right treatment?",
        "Should she take metformin while she is pregnant?",
    ],
)
def test_a_question_naming_another_condition_or_a_pregnancy_gets_no_indication_list(
    consultant: Consultant, question: str
) -> None:
    answer = consultant.ask(question).answer
    assert not answer["direct"]["fact_heading"].startswith(HEADING), answer["direct"]["lines"]
    assert HEADING not in answer["text"]


def test_a_question_naming_a_linked_condition_keeps_only_the_drugs_fact_for_it(
    slice_kb: KnowledgeBase,
) -> None:
    facts = kg_facts(slice_kb.store, [METFORMIN], relations_for(["treatment"]))
    assert facts and all(f.focus_is_head for f in facts)
    assert all(answers_the_aspect("treatment", f, None) for f in facts)  # "what does metformin treat?"
    assert not any(answers_the_aspect("treatment", f, set()) for f in facts)  # "… a bladder infection"
    kept = [f for f in facts if answers_the_aspect("treatment", f, {T2D, "DOID:0000000"})]
    assert kept and {f.entity_id for f in kept} == {T2D}


def test_a_question_asking_which_disease_a_drug_treats_keeps_the_list(consultant: Consultant) -> None:
    direct = consultant.ask("Metformin is used for treatment of which disease?").answer["direct"]
    assert direct["fact_heading"].startswith(HEADING) and direct["facts"]
