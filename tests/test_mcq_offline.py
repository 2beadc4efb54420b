"""Offline exam questions on the real slice KB: an option is named only past the calibrated gate, otherwise
the answer says plainly that the evidence does not decide and shows each option's evidence."""

from __future__ import annotations

import math

import pytest

from agent.consult import Consultant
from agent.deps import ConsultDeps
from agent.nodes import mcq
from graphs.kb import KnowledgeBase

MCQ = "Which drug lowers uric acid in gout?\nA. Allopurinol\nB. Ibuprofen\nC. Prednisone\nD. Colchicine"


def test_an_exam_question_gets_per_option_evidence_and_no_unsupported_pick(consultant: Consultant) -> None:
    answer = consultant.ask(MCQ).answer
    assert answer["task"] == "mcq"
    judged = answer["mcq"]
    assert judged["stem"] == "Which drug lowers uric acid in gout?"
    assert [o["letter"] for o in judged["options"]] == ["A", "B", "C", "D"]
    if math.isinf(mcq.MARGIN):  # the calibration found no gate that beats chance: never name an option
        assert answer["option"] is None
        assert "**The evidence does not decide between the options**" in answer["text"]
        # the question asked was which option: "answered" beside no named option misread as settled
        assert answer["status"] == "undecided"
    assert "best supported" not in answer["text"]
    for letter, text in (("A", "Allopurinol"), ("B", "Ibuprofen"), ("C", "Prednisone"), ("D", "Colchicine")):
        assert f"- {letter}) {text} — " in answer["text"]
    # the KG's drug–disease facts for gout reach the per-option evidence
    allopurinol = judged["options"][0]
    assert allopurinol["kg"] == 1.0
    assert any("gout" in fact.lower() and "allopurinol" in fact.lower() for fact in allopurinol["kg_facts"])
    assert "KG: " in answer["text"].split("- A) Allopurinol")[1].splitlines()[0]


def test_options_on_one_line_are_an_exam_question(consultant: Consultant) -> None:
    answer = consultant.ask(
        "Which drug lowers uric acid in gout? Options: A) Allopurinol B) Ibuprofen C) Prednisone"
    ).answer
    assert answer["task"] == "mcq"
    assert [o["text"] for o in answer["mcq"]["options"]] == ["Allopurinol", "Ibuprofen", "Prednisone"]


def test_options_without_a_stem_get_a_clear_message(consultant: Consultant) -> None:
    answer = consultant.ask("A) Allopurinol B) Ibuprofen C) Prednisone D) Colchicine").answer
    assert answer["task"] == "mcq" and answer["option"] is None
    assert "**No question to answer:** the options have no question (stem) before them" in answer["text"]
    assert answer["mcq"]["reason"] == "the options have no question (stem) before them"


def test_an_undecided_exam_question_has_its_own_status_and_an_open_question_keeps_its_own() -> None:
    assert mcq.mcq_status("answered", MCQ, None) == "undecided"
    assert mcq.mcq_status("insufficient", MCQ, None) == "undecided"
    assert mcq.mcq_status("answered", MCQ, "A") == "answered"  # a named option (LLM mode or a passed gate)
    # asked as an exam question but with no options, or options with no stem: answered as it stands
    assert mcq.mcq_status("answered", "Which drug lowers uric acid in gout?", None) == "answered"
    assert mcq.mcq_status("insufficient", "A) Allopurinol B) Ibuprofen", None) == "insufficient"


def test_the_gate_names_the_leader_only_past_the_margin(slice_kb: KnowledgeBase) -> None:
    judged = mcq.judge_options(ConsultDeps(slice_kb), MCQ)
    assert judged is not None
    ranked = sorted(judged.options, key=lambda s: -s.score)
    lead = ranked[0].score - ranked[1].score
    assert judged.margin == pytest.approx(lead, abs=1e-6)
    assert mcq.decide(judged.stem, judged.options, lead)[0] == ranked[0].letter
    assert mcq.decide(judged.stem, judged.options, lead + 0.01)[0] is None
    negated = "Which drug does NOT lower uric acid in gout?"
    chosen, _, why = mcq.decide(negated, judged.options, -1.0)
    assert chosen is None and "NOT" in why


def test_scores_count_only_what_separates_the_options() -> None:
    scores = [mcq.OptionScore("A", "x", kg=1.0, ir=0.50), mcq.OptionScore("B", "y", kg=0.0, ir=0.40)]
    mcq.combine(scores, {"kg": 1.0, "ir": 10.0, "dense": 0.0})
    assert [s.score for s in scores] == pytest.approx([1.5, -0.5])
    shifted = [mcq.OptionScore("A", "x", ir=0.9), mcq.OptionScore("B", "y", ir=0.8)]
    mcq.combine(shifted, {"kg": 0.0, "ir": 10.0, "dense": 0.0})
    assert shifted[0].score - shifted[1].score == pytest.approx(1.0)  # same gap, same lead


@pytest.mark.parametrize(
    ("stem", "negated"),
    [
        ("Which of the following is NOT a cause of gout?", True),
        ("All of the following are true EXCEPT", True),
        ("Which statement is false about allopurinol?", True),
        ("Which drug lowers uric acid in gout?", False),
        ("Which is the most likely diagnosis?", False),
    ],
)
def test_negated_stems_are_recognised(stem: str, negated: bool) -> None:
    assert mcq.negated_stem(stem) is negated


def test_a_negated_finding_in_the_vignette_does_not_negate_the_question() -> None:
    vignette = "A 50-year-old man does not smoke. He has gout. Which drug lowers his uric acid level?"
    assert not mcq.negated_stem(vignette)
    assert mcq.negated_stem("A 50-year-old man has gout. Which drug is NOT indicated?")


@pytest.mark.parametrize(
    ("stem", "relations"),
    [
        ("A man has gout. Which drug lowers his uric acid?", {"treats", "indicated_for", "palliates"}),
        ("Which is a symptom of gout?", {"has_phenotype", "has_symptom"}),
        ("Which test confirms gout?", set()),  # the KG has no diagnostic-test relation
    ],
)
def test_the_kg_signal_reads_only_the_relation_the_question_asks(stem: str, relations: set[str]) -> None:
    assert mcq.asked_relations(stem) == relations


def test_an_exam_question_without_options_says_what_to_fix(consultant: Consultant) -> None:
    answer = consultant.ask("Which drug lowers uric acid in gout?", task="mcq").answer
    assert answer["task"] == "mcq" and answer["option"] is None
    assert answer["mcq"]["reason"] == mcq.NO_OPTIONS and answer["mcq"]["options"] == []
    assert "**No options found:**" in answer["text"]
