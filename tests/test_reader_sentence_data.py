"""The stage-3 sentence labels of the evidence reader experiment (evals/reader_sentence_data.py)."""

from __future__ import annotations

from evals.reader_sentence_data import _shown, ideal_share


def test_a_sentence_the_ideal_answer_repeats_is_read_as_answering_and_an_unused_one_is_not() -> None:
    ideal = "Yes. Mutations in the CFTR gene cause cystic fibrosis, an autosomal recessive disease."
    assert ideal_share("Mutations in the CFTR gene cause cystic fibrosis.", ideal) == 1.0
    assert ideal_share("The study enrolled 120 patients in three centres.", ideal) == 0.0
    assert 0.0 < ideal_share("CFTR mutations were found in 40 patients with cystic fibrosis.", ideal) < 0.6
    assert ideal_share("Yes.", ideal) == 0.0  # no bigram: never a positive


def test_medquad_boilerplate_is_never_a_training_sentence() -> None:
    assert not _shown(
        "If the information is available, the table below includes how often the symptom is seen."
    )
    assert not _shown("These resources address the diagnosis or management of cystic fibrosis.")
    assert not _shown("How is cystic fibrosis inherited?")
    assert _shown("A defect in the CFTR gene causes cystic fibrosis (CF).")
