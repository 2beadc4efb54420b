"""What an abbreviation stands for (graphs/text/abbreviations.py) and the answer to "What does X stand for?"
(agent/nodes/asked_detail.py, key_sentences.py, direct_answer.py).

"What does RUNX2 stand for?" was *answered* with sentences that use RUNX2 and never expand it, while the
top retrieved snippet was "Runt related factor-2 (Runx2)". The long form must be found in both directions
("long (SF)", "SF (long)"), for acronyms and for gene symbols, and a bracket that is not a definition
("HP1 (n = 23)") must not be read as one.
"""

from __future__ import annotations

import pytest

from agent.consult import Consultant
from agent.nodes.asked_detail import asked_detail, names_in
from agent.nodes.key_sentences import defining_sentence
from agent.nodes.reading import ReadSentence
from graphs.kb import KnowledgeBase
from graphs.text.abbreviations import asked_expansion, definitions, most_given


@pytest.mark.parametrize(
    ("short", "text", "long"),
    [
        ("RUNX2", "Runt related factor-2 (Runx2)", "Runt related factor-2"),
        (
            "Runx2",
            "Runx2 (runt-related transcription factor 2) is a master regulator",
            "runt-related transcription factor 2",
        ),
        (
            "TAMs",
            "cells such as tumor-associated macrophages (TAMs). In particular",
            "tumor-associated macrophages",
        ),
        ("EREG", "Expression of epiregulin (EREG) was higher", "epiregulin"),
        (
            "COPD",
            "Chronic obstructive pulmonary disease (COPD) is a lung disease",
            "Chronic obstructive pulmonary disease",
        ),
        (
            "MVA85A",
            "the Modified Vaccinia virus Ankara expressing Antigen 85A (MVA85A) vaccine",
            "Modified Vaccinia virus Ankara expressing Antigen 85A",
        ),
        (
            "PCAT6",
            "prostate cancer-associated transcript 6 (PCAT6) promotes",
            "prostate cancer-associated transcript 6",
        ),
    ],
)
def test_the_long_form_a_text_gives(short: str, text: str, long: str) -> None:
    assert definitions(short, text) == [long]


@pytest.mark.parametrize(
    ("short", "text"),
    [
        ("HP1", "Binding of HP1 (n = 23) to H3K9me3 was measured."),  # a count, not a definition
        (
            "RUNX2",
            "Overexpression of ESR1 and RUNX2 in mouse neural stem cells.",
        ),  # uses it, never expands it
        ("BPH", "The condition is common in older men (see below)."),
        ("ALS", "Patients with ALS (n = 40) and controls (n = 40)."),
        ("TAM", "Tamoxifen (Nolvadex) is a hormone therapy."),  # another drug's brand, not TAM's long form
    ],
)
def test_a_bracket_that_is_not_a_definition(short: str, text: str) -> None:
    assert definitions(short, text) == []


def test_the_long_form_most_texts_give_wins_and_says_where() -> None:
    texts = [
        "Overexpression of RUNX2 induces differentiation.",
        "Runx2 (runt-related transcription factor 2) is needed for bone.",
        "Runt-related transcription factor 2 (RUNX2) controls osteoblasts.",
        "Runt related factor-2 (Runx2)",
    ]
    assert most_given("RUNX2", texts) == ("runt-related transcription factor 2", [1, 2])
    assert most_given("RUNX2", texts[:1]) is None


@pytest.mark.parametrize(
    ("question", "short"),
    [
        ("What does RUNX2 stand for?", "RUNX2"),
        ("What does the gene symbol EREG stand for?", "EREG"),
        ("What does the acronym 'COPD' stand for?", "COPD"),
        ("What is COPD short for?", "COPD"),
        ("What is the full name of MODY?", "MODY"),
        ("What does smoking stand for?", None),  # not an abbreviation
        ('What does "28" stand for in the Disease Activity Score DAS28?', None),  # a number's meaning
        ("What is RUNX2?", None),  # asks what it is, not what the letters stand for
    ],
)
def test_questions_that_ask_what_an_abbreviation_stands_for(question: str, short: str | None) -> None:
    assert asked_expansion(question) == short


def read(evidence_id: str, text: str, score: float) -> ReadSentence:
    return ReadSentence(evidence_id, text, 0, len(text), 0, score, 0.7, score, "")


def test_the_defining_fragment_is_the_answer_however_short(slice_kb: KnowledgeBase) -> None:
    """The four-word, verbless "Runt related factor-2 (Runx2)" is what the question asks for: it leads the key
    sentences over higher-scored sentences that only use the symbol, and it is what the asked-detail check
    counts as naming the expansion."""
    question = "What does RUNX2 stand for?"
    uses = read(
        "E:1", "Overexpression of ESR1 and RUNX2 in mouse neural stem cells induces differentiation.", 3.0
    )
    defines = read("E:2", "Runt related factor-2 (Runx2)", 1.0)
    assert defining_sentence([uses, defines], question) == defines
    assert defining_sentence([uses], question) is None
    assert defining_sentence([uses, defines], "What is the role of RUNX2 in bone?") is None
    detail = asked_detail(question)
    assert detail is not None and detail.kind == "expansion"
    assert names_in(slice_kb, question, set(), [defines.text], detail) is True
    assert names_in(slice_kb, question, set(), [uses.text], detail) is False


def test_a_consult_answers_with_the_long_form_the_evidence_gives(consultant: Consultant) -> None:
    """On the real slice KB (MedQuAD's breast cancer pages write "ductal carcinoma in situ (DCIS)"): the named
    answer is the long form, cited to passages that give it, and the first key sentence defines it."""
    answer = consultant.ask("What does DCIS stand for?").answer
    assert answer["status"] == "answered"
    direct = answer["direct"]
    named = direct.get("named", [])
    assert [n["name"].lower() for n in named] == ["ductal carcinoma in situ"]
    assert named[0]["evidence_ids"] and set(named[0]["evidence_ids"]) <= set(answer["evidence_ids"])
    assert definitions("DCIS", direct["sentences"][0]["text"])
    lead = "- **Answer (as the evidence names it):** Ductal carcinoma in situ ["
    assert direct["lines"][0].startswith(lead)
