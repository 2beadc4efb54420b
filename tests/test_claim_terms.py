"""An undecided claim says which of its named things no retrieved passage names (agent/nodes/claim_terms.py):
the AF/aspirin reply had no verdict, and nothing said that no passage mentions the CHA2DS2-VASc score."""

from __future__ import annotations

from agent.nodes.claim_check import NONE_WORD, reply_check_lines
from agent.nodes.claim_terms import unmentioned_terms
from agent.state import EvidenceRec, ReplyCheckRec
from graphs.kb import KnowledgeBase

AF_CLAIM = (
    "for a patient with atrial fibrillation and CHA2DS2-VASc of 3, "
    "aspirin alone is adequate stroke prevention"
)


def passage(pid: str, text: str) -> EvidenceRec:
    return {"id": pid, "title": "What are the treatments for Atrial Fibrillation and Stroke ?", "text": text}


def test_a_score_no_passage_mentions_is_named(slice_kb: KnowledgeBase) -> None:
    evidence = [
        passage(
            "E:a", "Some individuals with AF may have a lower risk of stroke and may be treated with aspirin."
        ),
        passage(
            "E:b", "Warfarin reduces the rate of stroke in atrial fibrillation by one-half to two-thirds."
        ),
    ]
    assert unmentioned_terms(slice_kb, AF_CLAIM, evidence) == ["CHA2DS2-VASc"]
    # Spelled without its hyphen, the score is mentioned; no evidence at all: nothing is claimed about it.
    scored = [*evidence, passage("E:c", "A CHA2DS2VASc score of 2 or more calls for anticoagulation.")]
    assert unmentioned_terms(slice_kb, AF_CLAIM, scored) == []
    assert unmentioned_terms(slice_kb, AF_CLAIM, []) == []


def test_a_kg_disease_no_passage_names_is_named_a_category_word_is_not(slice_kb: KnowledgeBase) -> None:
    claim = "in a patient with type 2 diabetes, metformin is the first drug to try"
    evidence = [passage("E:m", "Metformin lowers the amount of glucose the liver makes.")]
    assert unmentioned_terms(slice_kb, claim, evidence) == ["type 2 diabetes"]
    named = [*evidence, passage("E:d", "Type 2 diabetes is treated with diet, exercise and medicines.")]
    assert unmentioned_terms(slice_kb, claim, named) == []  # "patient", "drug": category words, never listed


def test_the_verdict_line_says_what_no_passage_mentions() -> None:
    table: ReplyCheckRec = {
        "claims": [
            {"text": AF_CLAIM, "question": "?", "verdict": NONE_WORD, "unmentioned": ["CHA2DS2-VASc"]}
        ],
        "thresholds": {"supported": 1.01, "contradicted": 1.01},
    }
    line = reply_check_lines(table)[1]
    assert "No verdict" in line and line.endswith("no retrieved passage mentions \u201cCHA2DS2-VASc\u201d"), (
        line
    )
