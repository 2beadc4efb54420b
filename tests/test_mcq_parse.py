"""Reading exam questions: options one a line or inline, in every common marker style, stem kept apart."""

from __future__ import annotations

import pytest

from agent.nodes.mcq_parse import parse_mcq
from agent.nodes.turn import detect_task, mcq_options

GOUT_OPTIONS = {"A": "Allopurinol", "B": "Ibuprofen", "C": "Prednisone", "D": "Colchicine"}
STEM = "Which drug lowers uric acid in gout?"


@pytest.mark.parametrize(
    "question",
    [
        f"{STEM}\nA. Allopurinol\nB. Ibuprofen\nC. Prednisone\nD. Colchicine",
        f"{STEM}\nA) Allopurinol\nB) Ibuprofen\nC) Prednisone\nD) Colchicine",
        f"{STEM}\n(a) Allopurinol\n(b) Ibuprofen\n(c) Prednisone\n(d) Colchicine",
        f"{STEM}\na) Allopurinol\nb) Ibuprofen\nc) Prednisone\nd) Colchicine",
        f"{STEM}\na. Allopurinol\nb. Ibuprofen\nc. Prednisone\nd. Colchicine",
        f"{STEM}\nA: Allopurinol\nB: Ibuprofen\nC: Prednisone\nD: Colchicine",
        f"{STEM} Options: A) Allopurinol B) Ibuprofen C) Prednisone D) Colchicine",
        f"{STEM} A. Allopurinol B. Ibuprofen C. Prednisone D. Colchicine",
        f"{STEM} (A) Allopurinol, (B) Ibuprofen, (C) Prednisone, (D) Colchicine",
        f"{STEM}\nChoices:\n  A) Allopurinol\n  B) Ibuprofen\n  C) Prednisone\n  D) Colchicine",
    ],
)
def test_options_are_read_in_every_style_and_the_stem_is_kept_apart(question: str) -> None:
    parsed = parse_mcq(question)
    assert parsed.options == GOUT_OPTIONS
    assert parsed.stem == STEM and parsed.has_stem
    assert detect_task(question) == "mcq"


def test_a_letter_inside_an_option_is_not_taken_for_the_next_option() -> None:
    parsed = parse_mcq("Which vitamin deficiency causes scurvy? A) Vitamin B. B) Vitamin C. C) Vitamin D.")
    assert parsed.options == {"A": "Vitamin B.", "B": "Vitamin C.", "C": "Vitamin D."}


def test_a_line_after_one_option_a_line_goes_back_to_the_stem() -> None:
    parsed = parse_mcq(f"{STEM}\nA. Allopurinol\nB. Ibuprofen\nC. Prednisone\nExplain your choice.")
    assert parsed.options == {"A": "Allopurinol", "B": "Ibuprofen", "C": "Prednisone"}
    assert parsed.stem == f"{STEM} Explain your choice."


@pytest.mark.parametrize(
    "question",
    [
        "Options A and B were discussed for gout.",
        "Is vitamin A. deficiency common? What about vitamin B.",
        "what is a. b. c. in a list",
        "A) B) C) D)",
    ],
)
def test_prose_and_empty_markers_are_not_options(question: str) -> None:
    assert mcq_options(question) == {}
    assert detect_task(question) == "clinical"


def test_options_without_a_stem_are_read_and_flagged() -> None:
    parsed = parse_mcq("A) Allopurinol B) Ibuprofen C) Prednisone D) Colchicine")
    assert parsed.options == GOUT_OPTIONS
    assert parsed.stem == "" and not parsed.has_stem
    assert not parse_mcq("Options:\nA) Allopurinol\nB) Ibuprofen\nC) Prednisone").has_stem


def test_the_last_a_sequence_wins_when_a_vignette_mentions_a_letter() -> None:
    question = "A man with blood type A. has gout. Which drug lowers uric acid?\nA. Allopurinol\nB. Ibuprofen"
    parsed = parse_mcq(question)
    assert parsed.options == {"A": "Allopurinol", "B": "Ibuprofen"}
    assert parsed.stem == "A man with blood type A. has gout. Which drug lowers uric acid?"
