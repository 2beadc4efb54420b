"""The shipped evaluation slices and question sets (evals/data) and their loaders, against the real data."""

from __future__ import annotations

import gzip
import json
import re
from pathlib import Path

import pytest

from evals.datasets.answers import load_long_form, load_mcq
from evals.datasets.make_slices import CI_POOL, DEV_POOL, TEST_POOL, normalized_question
from evals.datasets.registry import DATA, DATASETS, SLICE, get_dataset
from graphs.model.settings import Settings
from tests.fixtures.make_shared_slices import snippet_digest

REPO = Path(__file__).resolve().parents[1]
SHARED = REPO / "tests" / "fixtures" / "shared"
"""Slices of ../shared/data shipped for the tests (tests/fixtures/make_shared_slices.py; README there)."""
MEDQUAD = REPO / "data" / "corpus" / "medquad_answered.jsonl.gz"
"""Shipped with the project: the same rows as ../shared/data/corpus/medquad_answered.jsonl."""
CORE_EXCLUDED = {"GARD", "GHR"}
TEMPLATES = re.compile(
    r"^(what (is|are) \(are\)|what are the (symptoms|treatments) (of|for)|what causes"
    r"|how to (diagnose|prevent)"
    r"|who is at risk for|is .* inherited \?)",
    re.IGNORECASE,
)


def _rows(path: Path) -> list[dict[str, object]]:
    with (
        gzip.open(path, "rt", encoding="utf-8")
        if path.suffix == ".gz"
        else path.open(encoding="utf-8") as lines
    ):
        return [json.loads(line) for line in lines if line.strip()]


@pytest.fixture(scope="module")
def medquad() -> dict[str, dict[str, object]]:
    return {str(r["id"]): r for r in _rows(MEDQUAD)}


@pytest.mark.parametrize(
    ("name", "questions", "pool"),
    [("bioasq-dev", 100, DEV_POOL), ("bioasq-ci", 15, CI_POOL), ("bioasq-test", 100, TEST_POOL)],
)
def test_bioasq_slices_point_into_their_pool(name: str, questions: int, pool: int) -> None:
    dataset = get_dataset(name).load(None)
    corpus = _rows(DATA / f"{name.replace('-', '_')}_corpus.jsonl")
    assert len(dataset.questions) == questions
    assert len(corpus) == pool
    ids = {f"doc:{row['id']}" for row in corpus}
    for question in dataset.questions:
        assert question.gold_documents and set(question.gold_documents) <= ids
        for document in question.gold_documents:
            assert dataset.group(document).isdigit()  # the snippet's PMID


def test_bioasq_slice_text_is_the_shared_pool_text() -> None:
    lines = (SHARED / "bioasq_snippet_digests.tsv").read_text(encoding="utf-8").splitlines()
    shared = dict(line.split("\t") for line in lines)
    for corpus in ("bioasq_ci_corpus.jsonl", "bioasq_test_corpus.jsonl"):
        for row in _rows(DATA / corpus):
            assert snippet_digest(str(row["text"]), str(row["pmid"])) == shared[str(row["id"])]


def test_dev_and_ci_questions_are_disjoint() -> None:
    dev = {q.id for q in get_dataset("bioasq-dev").load(None).questions}
    ci = {q.id for q in get_dataset("bioasq-ci").load(None).questions}
    assert not dev & ci


def _gold_snippets(question: dict[str, object]) -> set[str]:
    gold = question["gold_snippet_ids"]
    assert isinstance(gold, list)
    return {str(snippet) for snippet in gold}


def test_held_out_test_questions_share_nothing_with_dev_or_ci() -> None:
    """bioasq-test confirms what was tuned on dev, so no question, question text or gold snippet recurs."""
    test = _rows(DATA / "bioasq_test.jsonl")
    seen = _rows(DATA / "bioasq_dev.jsonl") + _rows(DATA / "bioasq_ci.jsonl")
    assert len(test) == 100
    assert not {q["id"] for q in test} & {q["id"] for q in seen}
    texts = {normalized_question(str(q["question"])) for q in test}
    assert not texts & {normalized_question(str(q["question"])) for q in seen}
    assert not set().union(*map(_gold_snippets, test)) & set().union(*map(_gold_snippets, seen))
    pool = {str(row["id"]) for row in _rows(DATA / "bioasq_test_corpus.jsonl")}
    for question in test:
        assert _gold_snippets(question) & pool, question["id"]
    description = get_dataset("bioasq-test").load(None).description
    assert "held out: never used to tune" in description


def test_pubmedqa_gold_is_the_questions_own_abstract() -> None:
    dataset = get_dataset("pubmedqa").load(None)
    assert len(dataset.questions) == 100
    source = {str(r["id"]): r for r in _rows(DATA / "pubmedqa_dev.jsonl")}
    for question in dataset.questions:
        assert {dataset.group(d) for d in question.gold_documents} == {source[question.id]["pmid"]}


def test_consumer_questions_are_checked_against_medquad(medquad: dict[str, dict[str, object]]) -> None:
    rows = _rows(DATA / "medquad_consumer.jsonl")
    assert len(rows) >= 60
    assert len({r["id"] for r in rows}) == len(rows)
    for row in rows:
        assert not TEMPLATES.match(str(row["question"])), row["question"]
        gold = row["gold_ids"]
        assert isinstance(gold, list) and gold
        assert all(g in medquad for g in gold), row["id"]
        assert any(medquad[g]["source"] not in CORE_EXCLUDED for g in gold), row["id"]  # answerable on core
        hints = row["gold_passages"]
        assert isinstance(hints, dict)
        for doc, hint in hints.items():
            assert doc in gold and hint in str(medquad[doc]["answer"]), (row["id"], doc)


def test_pooled_judgments_judge_every_pooled_pair_once() -> None:
    """evals/medquad_judged.py: every pooled pair is judged once, with a known verdict, for its own question
    (whether a pair is hand gold is decided by the scorer, which pools only what the hand gold missed)."""
    questions = {r["id"]: r for r in _rows(DATA / "medquad_consumer.jsonl")}
    pool = {r["pair"]: r for r in _rows(DATA / "medquad_consumer_pool.jsonl")}
    judgments = _rows(DATA / "medquad_consumer_judgments.jsonl")
    assert pool and sorted(str(j["pair"]) for j in judgments) == sorted(pool)
    assert {j["verdict"] for j in judgments} <= {"yes", "partial", "no"}
    for row in pool.values():
        question = questions[str(row["question_id"])]
        assert row["question"] == question["question"]
        assert str(row["text"]).strip() and str(row["evidence_id"]).startswith("E:")


def test_ci_consumer_questions_are_answerable_in_the_test_slice() -> None:
    slice_ids = {str(r["id"]) for r in _rows(SLICE / "medquad.jsonl")}
    dataset = get_dataset("medquad-consumer-ci").load(None)
    assert 15 <= len(dataset.questions) <= 20
    for question in dataset.questions:
        assert any(d.removeprefix("medquad:") in slice_ids for d in question.gold_documents), question.id
    full = get_dataset("medquad-consumer").load(None)
    assert {q.id for q in dataset.questions} < {q.id for q in full.questions}


def test_every_dataset_has_a_loader_and_a_kb_plan() -> None:
    assert set(DATASETS) == {
        "bioasq-dev",
        "bioasq-test",
        "bioasq-full",
        "bioasq-dev-full",
        "bioasq-ci",
        "pubmedqa",
        "medquad-consumer",
        "medquad-consumer-ci",
    }
    assert DATASETS["medquad-consumer"].recipe is None  # runs on the default KB
    # The dev questions on the held-out set's full pool: tuning for it without reading its questions.
    assert DATASETS["bioasq-dev-full"].recipe is DATASETS["bioasq-full"].recipe
    assert "held out" not in DATASETS["bioasq-dev-full"].load(2).description
    recipe = DATASETS["bioasq-ci"].recipe
    assert recipe is not None
    assert all(path.exists() for path in recipe(Settings()).files())


def test_answer_set_loaders() -> None:
    eval_dir = SHARED / "eval"
    for name in ("medqa", "medmcqa", "mmlu-medical"):
        items = load_mcq(name, eval_dir, limit=20)
        assert len(items) == 20
        assert all(set(item.gold) <= set(item.options) and len(item.options) >= 4 for item in items)
    medication = load_long_form("medicationqa", eval_dir)
    assert 0 < len(medication) < 40  # of the 40 rows shipped, the withheld (copyright) answers are skipped
    assert all(item.reference.strip() for item in medication)
    assert len(load_long_form("expertqa", eval_dir, limit=10)) == 10
    with pytest.raises(ValueError):
        load_mcq("nope", eval_dir)


def test_the_causes_questions_are_the_topics_with_a_risk_page_and_no_cause_page() -> None:
    """evals/causes_questions.py: chronic lymphocytic leukemia (risk page only) is asked, gout (a "What
    causes" page) and hereditary hemochromatosis (a "genetic changes" page) are not."""
    from evals.causes_questions import risk_only_topics, topic_words

    topics = risk_only_topics()
    assert "Chronic Lymphocytic Leukemia" in topics and len(topics) == 124
    assert not {"Gout", "Hemochromatosis", "hereditary hemochromatosis"} & set(topics)
    words = topic_words("Oral Cavity and Oropharyngeal Cancer")
    assert words.search("the most common cause of oral cavity cancer") and not words.search("the lung")


def test_the_definition_questions_are_topics_the_default_kb_holds() -> None:
    """evals/definition_questions.py asks only about topics of the core profile's sources (no GARD or GHR
    page: "What is Bartter syndrome?" has no page in the default KB)."""
    from evals.definition_questions import topic_openings

    topics = topic_openings()
    assert "Gastroparesis" in topics and "Bartter syndrome" not in topics
    assert all(openings for openings in topics.values())
