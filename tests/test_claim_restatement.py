"""A claim a passage restates in its own words, affirmed or negated (agent/nodes/claim_restatement.py).

The unit tests read real sentence shapes (MedQuAD's own wording); the last test runs a reply through the
slice KB's real retrieval, claim checker and renderer.
"""

from __future__ import annotations

import pytest

from agent.consult import Consultant
from agent.nodes.claim_restatement import restated
from graphs.text.negation import negated_spans


@pytest.mark.parametrize(
    ("question", "sentence", "affirms"),
    [
        ("Does dengue spread from person to person?", "Dengue does not spread from person to person.", False),
        ("Do NSAIDs cause ulcers?", "Long-term NSAID use can cause peptic ulcers.", True),
        ("Do NSAIDs cause ulcers?", "NSAIDs do not cause ulcers in most people.", False),
        # "no cure" does not negate a mention of the disease, but it denies that it can be cured
        ("Can Crohn's disease be cured?", "There is no cure for Crohn's disease.", False),
        (
            "Can Lyme disease be cured with antibiotics?",
            "Antibiotics can cure most cases of Lyme disease.",
            True,
        ),
    ],
)
def test_a_sentence_holding_every_word_of_the_claim_decides_it_by_its_negation(
    question: str, sentence: str, affirms: bool
) -> None:
    found = restated(question, ["Unrelated text about something else.", sentence])
    assert (
        found is not None and found.affirms is affirms and found.passage == 1 and found.sentence == sentence
    )


@pytest.mark.parametrize(
    ("question", "sentence"),
    [
        # a negation over one mention of a word and not the other: ambiguous
        (
            "Is dengue spread by mosquitoes?",
            "Although dengue does not spread from person to person, mosquitoes spread it.",
        ),
        ("Does smoking cause bladder cancer?", "It is not known whether smoking causes bladder cancer."),
        ("Do NSAIDs cause ulcers?", "NSAIDs may cause ulcers."),  # a hedge the claim does not make
        ("Does smoking cause bladder cancer?", "Smoking is the main risk factor for bladder cancer."),
        ("Is aspirin safe?", "Aspirin is not safe for everyone."),  # too few words to be a restatement
    ],
)
def test_no_verdict_without_a_plain_restatement(question: str, sentence: str) -> None:
    assert restated(question, [sentence]) is None


def test_a_hedged_claim_is_restated_by_a_hedged_sentence() -> None:
    found = restated("Do NSAIDs cause ulcers?", ["NSAIDs may cause ulcers."], claim_hedged=True)
    assert found is not None and found.affirms


def test_passages_that_say_both_decide_nothing() -> None:
    passages = ["NSAIDs cause ulcers in older patients.", "NSAIDs do not cause ulcers."]
    assert restated("Do NSAIDs cause ulcers?", passages) is None


def test_a_statement_s_negation_counts_what_a_mention_s_does_not() -> None:
    text = "NSAIDs do not cause ulcers."
    span = [(text.index("ulcers"), text.index("ulcers") + len("ulcers"))]
    assert negated_spans(text, span) == [False]  # "not cause" is a pseudo trigger for the mention
    assert negated_spans(text, span, statement=True) == [True]


def test_a_reply_the_slice_restates_negated_is_contradicted_and_cites_the_sentence(
    consultant: Consultant,
) -> None:
    answer = consultant.ask(
        "Colleague says: eating certain foods causes Crohn's disease.", task="check_reply"
    ).answer
    claim = answer["reply_check"]["claims"][0]
    assert claim["verdict"] == "contradicted" and claim["decided_by"] == "restatement", claim
    assert "do not cause Crohn's disease" in claim["quotes"][0]
    assert claim["evidence_ids"][0] in answer["evidence_ids"]
    assert "the passage says it in the claim's own words" in answer["text"]
    assert "A verdict above without a checker probability" in answer["text"]


def test_a_passage_titled_with_the_condition_may_leave_its_name_out_of_the_sentence() -> None:
    sentence = "Stress and spicy foods do not cause ulcers, but can make them worse."
    question = "Are peptic ulcers caused by spicy food?"
    on_its_page = restated(question, [sentence], False, ["What causes Peptic Ulcer ?"], ("peptic ulcers",))
    assert on_its_page is not None and not on_its_page.affirms
    # on another condition's page the sentence does not say "peptic", and the claim does
    assert restated(question, [sentence], False, ["What causes Gastritis ?"], ("peptic ulcers",)) is None
    assert restated(question, [sentence]) is None


def test_a_myth_reported_to_correct_it_restates_nothing_and_filler_verbs_are_not_required() -> None:
    myth = "Another common myth is that dirty skin causes acne; however, blackheads are not caused by dirt."
    assert restated("Is acne caused by dirty skin?", [myth]) is None
    vaccine = "The shingles vaccine is a preventive therapy and not a treatment for postherpetic neuralgia."
    found = restated("Is the shingles vaccine used to treat postherpetic neuralgia?", [vaccine])
    assert found is not None and not found.affirms
