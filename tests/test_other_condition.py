"""A sentence about a sibling of the question's subject is not shown as answering it
(agent/nodes/other_condition.py): "hepatitis C … 1 to 3 months" was the second line of a hepatitis A
answer."""

from __future__ import annotations

from agent.consult import Consultant
from agent.nodes.focus import question_focus
from agent.nodes.other_condition import about_other_condition
from agent.state import ConsultState
from graphs.kb import KnowledgeBase


def focus_on(kb: KnowledgeBase, entity_id: str, question: str) -> ConsultState:
    entity = kb.store.get_entities([entity_id])[entity_id]
    return {
        "question": question,
        "entities": [{"id": entity_id, "name": entity.name, "type": entity.type}],
        "turn_entity_ids": [entity_id],
    }


def test_a_sibling_condition_is_another_subject_a_broader_name_is_not(slice_kb: KnowledgeBase) -> None:
    state = focus_on(slice_kb, "DOID:9744", "How is type 1 diabetes treated?")
    focus = question_focus(slice_kb, state)
    texts = [
        "People with type 2 diabetes often take metformin by mouth.",  # a sibling: not this subject
        "Type 1 diabetes is treated with insulin.",  # the subject
        "Diabetes means that blood glucose is too high.",  # a broader name: still about the subject
        "Over the years it can lead to kidney disease.",  # another disease sharing no distinctive word
        "Insulin is taken several times a day.",  # no disease named
    ]
    assert about_other_condition(slice_kb, focus, texts) == [True, False, False, False, False]
    assert about_other_condition(slice_kb, question_focus(slice_kb, {"question": "x"}), texts[:1]) == [False]


def test_no_key_sentence_is_about_a_sibling_of_the_subject(consultant: Consultant) -> None:
    """On the slice KB this answer led with "The signs and symptoms of type 2 diabetes can be so mild that
    you might not even notice them." """
    answer = consultant.ask("What are the symptoms of type 1 diabetes?").answer
    assert answer["direct"]["focus"] and answer["direct"]["sentences"], answer["text"][:300]
    for sentence in answer["direct"]["sentences"]:
        assert "type 2" not in sentence["text"].lower(), sentence["text"]
