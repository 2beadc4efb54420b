"""For "What is X?" the sentence that says what X is leads (agent/nodes/definition_lead.py)."""

from __future__ import annotations

import re

from agent.consult import Consultant
from agent.nodes.definition_lead import asks_what_it_is, defines_subject, definition_first
from agent.nodes.reading import ReadSentence

COPD = re.compile(r"\b(?:COPD|chronic obstructive pulmonary disease)\b", re.IGNORECASE)


def said(text: str, logit: float) -> ReadSentence:
    return ReadSentence("E:x", text, 0, len(text), 0, logit, 0.5, logit, "overview")


def test_a_definition_opens_on_the_subject_and_says_what_it_is() -> None:
    assert defines_subject(
        "Chronic obstructive pulmonary disease, or COPD, is a progressive lung disease in which the airways "
        "of the lungs become damaged.",
        COPD,
    )
    assert defines_subject("COPD (chronic obstructive pulmonary disease) is a lung disease.", COPD)
    assert defines_subject("Gout is a form of arthritis.", re.compile(r"\bgout\b", re.IGNORECASE))
    assert not defines_subject("COPD is a major cause of death and illness throughout the world.", COPD)
    assert not defines_subject("COPD is the third leading cause of death.", COPD)
    assert not defines_subject("COPD is diagnosed with spirometry.", COPD)
    assert not defines_subject("With COPD, airways become blocked.", COPD)  # the subject is not what is said
    assert not defines_subject("In COPD, the airways are partially blocked.", COPD)
    assert not defines_subject(
        "Proteinuria is a sign of chronic kidney disease.", re.compile("proteinuria", re.I)
    )
    assert not defines_subject(
        "Pituitary tumors are divided into three groups.", re.compile("pituitary tumors", re.I)
    )
    assert not defines_subject("A concussion is the mildest type.", re.compile("concussion", re.I))
    assert not defines_subject("Viral infections are hard to treat.", re.compile("viral infections", re.I))
    fever = re.compile(r"\b(?:valley fever|fever)\b", re.IGNORECASE)
    assert not defines_subject(
        "A fever is a body temperature that is higher than normal.", fever, "Valley Fever"
    )
    assert defines_subject("Valley fever is a fungal infection.", fever, "Valley Fever")
    assert defines_subject("Chronic obstructive pulmonary disease, or COPD, is a lung disease.", COPD, "COPD")


def test_only_a_question_asking_what_the_subject_is_gets_the_definition_first() -> None:
    assert asks_what_it_is("What is COPD?") and asks_what_it_is("What are thalassemias?")
    assert asks_what_it_is("what is a stroke")
    assert not asks_what_it_is("What is the first-line medicine for type 2 diabetes?")  # asks for a medicine
    assert not asks_what_it_is("How is COPD treated?")
    assert not asks_what_it_is("What is COPD and how is it treated? Is it curable?")
    for aspect in ("What are its symptoms?", "What are the symptoms?", "What are the side effects?"):
        assert not asks_what_it_is(aspect), aspect  # an aspect of a subject named before, not a subject
    airways = said('The "airways" are the tubes that carry air in and out of the lungs.', 1.22)
    cause = said("COPD is a major cause of death and illness throughout the world.", 1.11)
    defined = said("Chronic obstructive pulmonary disease, or COPD, is a progressive lung disease.", -0.22)
    shown = [airways, cause, defined]
    assert definition_first(shown, [airways, cause], "What is COPD?", COPD, 60) == [defined, airways]
    assert definition_first(shown, [airways, cause], "What is COPD?", COPD, 60, ["symptoms"]) == [
        airways,
        cause,
    ]
    assert definition_first(shown, [airways, cause], "How is COPD treated?", COPD, 60) == [airways, cause]
    assert definition_first([airways, cause], [airways, cause], "What is COPD?", COPD, 60) == [airways, cause]
    assert definition_first(shown, [defined, airways], "What is COPD?", COPD, 60) == [defined, airways]
    assert definition_first(shown, [airways, cause], "What is COPD?", COPD, 12) == [defined]  # word budget


def test_what_is_gout_leads_with_what_gout_is(consultant: Consultant) -> None:
    """Whole consult on the slice KB: the first key sentence defines gout."""
    result = consultant.ask("What is gout?")
    shown = result.answer["direct"]["sentences"]
    gout = re.compile(r"\bgout\b", re.IGNORECASE)
    assert shown and defines_subject(shown[0]["text"], gout), [s["text"][:80] for s in shown]
