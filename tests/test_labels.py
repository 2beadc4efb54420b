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
