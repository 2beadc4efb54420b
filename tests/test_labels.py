"""Which evidence label a question asks about: cues match whole words or marked stems, never inside words."""

from __future__ import annotations

import pytest

from graphs.model.labels import labels_asked, specific_labels_asked


@pytest.mark.parametrize(
    ("question", "labels"),
    [
        ("What is testicular cancer?", ["overview"]),  # "test" inside "testicular" asks for no diagnosis
        ("What is generalized anxiety disorder?", ["overview"]),  # "gene" inside "generalized"
        ("Is it significant?", []),  # "sign" inside "significant"
        ("Which tests confirm celiac disease?", ["diagnosis"]),
        ("How is it diagnosed?", ["diagnosis"]),  # a stem cue goes on
        ("How are gout flares treated?", ["treatment"]),
        ("Are there therapies for ALS?", ["treatment"]),
        ("What are the signs of a stroke?", ["symptoms", "overview"]),  # an inflected cue
        ("What causes gout?", ["causes"]),
        ("Does it run in families?", ["inheritance"]),
        ("my dad has gout, what can he take for the pain?", ["treatment"]),  # lay wording of treatment
        ("Is there anything to relieve the itching?", ["treatment"]),
        ("How do I get rid of warts?", ["treatment"]),
        ("Can I take a bath with a cast on?", []),  # "take" alone is no treatment cue
        ("Are there clinical trials for Fabry disease?", ["research"]),
    ],
)
def test_cues_match_words_not_pieces_of_words(question: str, labels: list[str]) -> None:
    assert labels_asked(question) == labels


def test_what_is_only_opens_a_question_that_asks_something_specific() -> None:
    question = "What is the first-line medicine for type 2 diabetes?"
    assert labels_asked(question) == ["treatment", "overview"]
    assert specific_labels_asked(question) == ["treatment"]
    assert specific_labels_asked("What is gout?") == ["overview"]


def test_every_labelled_wording_is_read_as_its_aspect() -> None:
    """The labelled wordings of evals/data/aspect_wordings.jsonl (issue 22): lay treatment wording, a
    differential read as diagnosis and never as causes, mechanism of action, interactions, and the aspects
    that worked before; evals/reports/aspect_cues.md is the same measurement."""
    from evals.aspect_cues import load_wordings, read_correctly

    rows = load_wordings()
    assert len(rows) >= 50 and {"diagnosis", "mechanism", "interactions", "treatment"} <= {
        r["asked"] for r in rows
    }
    misread = [(r["question"], specific_labels_asked(r["question"])) for r in rows if not read_correctly(r)]
    assert not misread, misread


@pytest.mark.parametrize(
    "question",
    [
        "A 58-year-old man has swollen ankles and orthopnoea. What could cause this?",
        "What might be causing her headaches?",
    ],
)
def test_a_differential_asks_for_a_diagnosis_not_for_the_genes_of_a_disease(question: str) -> None:
    assert specific_labels_asked(question) == ["diagnosis"]
    assert specific_labels_asked("What causes gout?") == ["causes"]  # a named disease's causes stay causes
