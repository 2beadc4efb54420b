"""The claim checker's training questions are disjoint from every evaluation, calibration and benchmark set.

Reads the manifest shipped beside the weights (``data/claims/training_questions.jsonl.gz``, written by
``python -m evals.claim_data``), the evaluation files in the clone (``evals/data``) and the PubMedQA file
of ``../shared/data`` (its whole official test split feeds the calibration and benchmark claims), and checks
the split that ``data/claims/CARD.md`` states.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from evals.claim_data import MANIFEST
from evals.claim_sets import claim_set
from evals.reader_data import normalise_question
from graphs.model.settings import load_settings
from tests.conftest import jsonl_rows

REPO = Path(__file__).resolve().parent.parent
EVAL_DATA = REPO / "evals" / "data"
EVAL_FILES = ("bioasq_dev", "bioasq_test", "bioasq_ci", "medquad_consumer", "pubmedqa_dev", "sufficiency")


@pytest.fixture(scope="module")
def training() -> list[dict[str, Any]]:
    return list(jsonl_rows(MANIFEST))


@pytest.fixture(scope="module")
def claim_sets() -> dict[str, list[dict[str, Any]]]:
    settings = load_settings()
    return {part: claim_set(settings, part)[0] for part in ("calibration", "benchmark")}


def test_manifest_holds_each_training_source(training: list[dict[str, Any]]) -> None:
    sources = ("bioasq-yesno", "pubmedqa-decision", "medquad-mutation")
    counts = {source: sum(r["source"] == source for r in training) for source in sources}
    assert {r["source"] for r in training} == set(sources)
    assert counts["bioasq-yesno"] > 300 and counts["pubmedqa-decision"] > 400, counts
    assert counts["medquad-mutation"] > 2000, counts


def test_no_medquad_focus_of_an_evaluation_or_the_hand_written_claims_is_trained_on(
    training: list[dict[str, Any]],
) -> None:
    focus_of = {
        row["id"]: row["focus"].lower()
        for row in jsonl_rows(REPO / "data" / "corpus" / "medquad_answered.jsonl.gz")
    }
    evaluated = {
        focus_of[g]
        for row in jsonl_rows(EVAL_DATA / "medquad_consumer.jsonl")
        for g in row["gold_ids"]
        if g in focus_of
    }
    sufficiency = jsonl_rows(EVAL_DATA / "sufficiency.jsonl")
    evaluated |= {focus_of[row["id"][3:]] for row in sufficiency if row["id"][3:] in focus_of}
    claims = [
        *jsonl_rows(EVAL_DATA / "reply_claims.jsonl"),
        *jsonl_rows(EVAL_DATA / "reply_claims_calibration.jsonl"),
    ]
    hand = {focus_of[e["document_id"]] for row in claims for e in row["evidence"]}
    assert len(hand) >= 20 and len(evaluated) >= 30
    trained = {row["focus"].lower() for row in training if row["source"] == "medquad-mutation"}
    assert trained and not trained & (evaluated | hand), sorted(trained & (evaluated | hand))[:5]


def test_no_evaluation_question_text_is_trained_on(training: list[dict[str, Any]]) -> None:
    trained = {normalise_question(row["question"]) for row in training}
    for name in EVAL_FILES:
        overlap = trained & {
            normalise_question(row["question"]) for row in jsonl_rows(EVAL_DATA / f"{name}.jsonl")
        }
        assert not overlap, f"{name}: {sorted(overlap)[:3]}"


def test_no_bioasq_evaluation_question_or_gold_snippet_is_trained_on(training: list[dict[str, Any]]) -> None:
    evaluation = [
        row
        for name in ("bioasq_dev", "bioasq_test", "bioasq_ci")
        for row in jsonl_rows(EVAL_DATA / f"{name}.jsonl")
    ]
    eval_ids = {row["id"] for row in evaluation}
    eval_ids |= {row["id"].removeprefix("bioasq-") for row in jsonl_rows(EVAL_DATA / "sufficiency.jsonl")}
    eval_snippets = {snippet for row in evaluation for snippet in row["gold_snippet_ids"]}
    bioasq = [row for row in training if row["source"] == "bioasq-yesno"]
    assert not {row["qid"] for row in bioasq} & eval_ids
    assert not {s for row in bioasq for s in row["gold_snippet_ids"]} & eval_snippets


def test_no_pubmedqa_test_split_question_is_trained_on(training: list[dict[str, Any]]) -> None:
    pqal = load_settings().shared_data_dir / "eval" / "pubmedqa_pqal.jsonl"
    test_split = {str(row["pubid"]) for row in jsonl_rows(pqal) if row.get("official_split") == "test"}
    assert len(test_split) == 500
    trained = {row["qid"] for row in training if row["source"] == "pubmedqa-decision"}
    assert len(trained) > 400 and not trained & test_split


def test_calibration_and_benchmark_claims_share_nothing_with_training_or_each_other(
    training: list[dict[str, Any]], claim_sets: dict[str, list[dict[str, Any]]]
) -> None:
    trained = {normalise_question(row["question"]) for row in training}
    calibration, benchmark = claim_sets["calibration"], claim_sets["benchmark"]
    assert len(calibration) > 100 and len(benchmark) > 150
    for part in (calibration, benchmark):
        asked = {normalise_question(item["question"]) for item in part if item["question"]}
        assert not asked & trained
    assert not {i["id"] for i in calibration} & {i["id"] for i in benchmark}
    held_out = {f"pubmedqa-{row['id']}" for row in jsonl_rows(EVAL_DATA / "pubmedqa_dev.jsonl")}
    assert not held_out & {i["id"] for i in calibration}, "pubmedqa_dev is an evaluation set: benchmark only"
    assert sum(i["source"] == "hand-written" for i in benchmark) == 30
    assert not any(i["source"] == "hand-written" for i in calibration)
