"""The evidence reader's training questions are disjoint from every evaluation and calibration set.

Reads the manifest shipped beside the weights (``data/reader/training_questions.jsonl.gz``, written by
``python -m evals.reader_data``) and the evaluation files in the clone (``evals/data``), and checks the split
that ``data/reader/CARD.md`` states: no evaluation question, question text, gold snippet or MedQuAD focus
of an evaluation question is among the training questions.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from evals.reader_data import MANIFEST, normalise_question
from tests.conftest import jsonl_rows

REPO = Path(__file__).resolve().parent.parent
EVAL_DATA = REPO / "evals" / "data"
MEDQUAD = REPO / "data" / "corpus" / "medquad_answered.jsonl.gz"


@pytest.fixture(scope="module")
def training() -> list[dict[str, Any]]:
    return list(jsonl_rows(MANIFEST))


@pytest.fixture(scope="module")
def medquad_focus() -> dict[str, str]:
    return {row["id"]: row["focus"].lower() for row in jsonl_rows(MEDQUAD)}


def _eval_questions() -> dict[str, list[dict[str, Any]]]:
    names = (
        "bioasq_dev",
        "bioasq_test",
        "bioasq_ci",
        "medquad_consumer",
        "pubmedqa_dev",
        "sufficiency",
    )
    return {name: list(jsonl_rows(EVAL_DATA / f"{name}.jsonl")) for name in names}


def test_manifest_holds_each_training_source(training: list[dict[str, Any]]) -> None:
    sources = {row["source"] for row in training}
    assert sources == {"bioasq", "bioasq-sentence", "medquad", "pubmedqa"}
    assert len(training) > 3000


def test_no_evaluation_question_text_is_trained_on(training: list[dict[str, Any]]) -> None:
    trained = {normalise_question(row["question"]) for row in training}
    for name, rows in _eval_questions().items():
        overlap = trained & {normalise_question(row["question"]) for row in rows}
        assert not overlap, f"{name}: {sorted(overlap)[:3]}"


def test_no_bioasq_evaluation_question_or_gold_snippet_is_trained_on(training: list[dict[str, Any]]) -> None:
    sets = _eval_questions()
    eval_ids = {row["id"] for name in ("bioasq_dev", "bioasq_test", "bioasq_ci") for row in sets[name]}
    eval_ids |= {row["id"].removeprefix("bioasq-") for row in sets["sufficiency"]}
    eval_snippets = {
        snippet
        for name in ("bioasq_dev", "bioasq_test", "bioasq_ci")
        for row in sets[name]
        for snippet in row["gold_snippet_ids"]
    }
    bioasq = [row for row in training if row["source"] in ("bioasq", "bioasq-sentence")]
    assert {row["source"] for row in bioasq} == {"bioasq", "bioasq-sentence"}
    assert not {row["qid"] for row in bioasq} & eval_ids
    assert not {s for row in bioasq for s in row["gold_snippet_ids"]} & eval_snippets


def test_no_medquad_focus_of_an_evaluation_question_is_trained_on(
    training: list[dict[str, Any]], medquad_focus: dict[str, str]
) -> None:
    sets = _eval_questions()
    eval_foci = {
        medquad_focus[g] for row in sets["medquad_consumer"] for g in row["gold_ids"] if g in medquad_focus
    }
    eval_foci |= {
        medquad_focus[row["id"][3:]] for row in sets["sufficiency"] if row["id"][3:] in medquad_focus
    }
    assert len(eval_foci) > 50
    trained = [row for row in training if row["source"] == "medquad"]
    assert trained
    assert not {row["focus"].lower() for row in trained} & eval_foci
    assert not {row["qid"] for row in trained} & {
        g for row in sets["medquad_consumer"] for g in row["gold_ids"]
    }


def test_no_pubmedqa_evaluation_abstract_is_trained_on(training: list[dict[str, Any]]) -> None:
    eval_pmids = {str(row["id"]) for row in _eval_questions()["pubmedqa_dev"]}
    trained = {row["qid"] for row in training if row["source"] == "pubmedqa"}
    assert trained and not trained & eval_pmids
