"""Evaluation metrics (evals/metrics) on small hand-computed examples."""

from __future__ import annotations

import math

import numpy as np
import pytest

from evals.metrics.answers import (
    advantage_score,
    exact_match,
    key_point_coverage,
    lcs_length,
    partial_correct,
    rate,
    rouge_l,
)
from evals.metrics.retrieval import (
    distinct_prefix,
    ndcg_at_k,
    precision_at_k,
    ranking_metrics,
    recall_at_k,
    reciprocal_rank,
    success_at_k,
)
from evals.metrics.spread import cluster_assignments, cluster_count, spread_at_k

RANKED = ["a", "b", "a", "c", "d"]  # "a" retrieved twice (two paragraphs of one document)
GOLD = {"a", "d", "e"}


def test_recall_counts_each_gold_unit_once() -> None:
    assert recall_at_k(RANKED, GOLD, 1) == pytest.approx(1 / 3)
    assert recall_at_k(RANKED, GOLD, 3) == pytest.approx(1 / 3)
    assert recall_at_k(RANKED, GOLD, 5) == pytest.approx(2 / 3)
    assert recall_at_k([], GOLD, 5) == 0.0
    with pytest.raises(ValueError):
        recall_at_k(RANKED, set(), 5)


def test_precision_is_over_distinct_units_retrieved() -> None:
    assert distinct_prefix(RANKED, 3) == ["a", "b"]
    assert precision_at_k(RANKED, GOLD, 1) == 1.0
    assert precision_at_k(RANKED, GOLD, 3) == pytest.approx(1 / 2)  # a, b
    assert precision_at_k(RANKED, GOLD, 5) == pytest.approx(2 / 4)  # a, b, c, d
    assert precision_at_k([], GOLD, 5) == 0.0


def test_success_and_reciprocal_rank() -> None:
    assert success_at_k(RANKED, GOLD, 1) == 1.0
    assert success_at_k(["b", "c"], GOLD, 2) == 0.0
    assert reciprocal_rank(RANKED, GOLD) == 1.0
    assert reciprocal_rank(["b", "b", "c", "d"], GOLD) == pytest.approx(1 / 3)  # distinct order b, c, d
    assert reciprocal_rank(["b"], GOLD) == 0.0


def test_ndcg_by_hand() -> None:
    # gains at positions 1 (a) and 5 (d); the repeated "a" at 3 earns nothing; ideal = 3 gold in 3 slots
    dcg = 1.0 + 1.0 / math.log2(6)
    ideal = 1.0 + 1.0 / math.log2(3) + 1.0 / math.log2(4)
    assert ndcg_at_k(RANKED, GOLD, 5) == pytest.approx(dcg / ideal)
    assert ndcg_at_k(RANKED, GOLD, 5) == pytest.approx(0.650821, abs=1e-6)
    assert ndcg_at_k(["a", "d", "e"], GOLD, 3) == pytest.approx(1.0)
    assert ndcg_at_k(["a"], {"a"}, 10) == pytest.approx(1.0)  # ideal over min(K, |gold|)


def test_ranking_metrics_keys() -> None:
    row = ranking_metrics(RANKED, GOLD, [1, 5])
    assert set(row) == {
        "mrr",
        *(f"{m}@{k}" for m in ("recall", "precision", "success", "ndcg") for k in (1, 5)),
    }
    assert row["recall@5"] == pytest.approx(2 / 3)


def test_cluster_spread() -> None:
    cluster_of = {"e1": 0, "e2": 0, "e3": 1, "e4": 2}
    assert spread_at_k(["e1", "e2", "e3", "unknown", "e4"], cluster_of, 2) == 1
    assert spread_at_k(["e1", "e2", "e3", "unknown", "e4"], cluster_of, 4) == 2
    assert spread_at_k(["e1", "e2", "e3", "unknown", "e4"], cluster_of, 5) == 3
    assert cluster_count(50) == 2
    assert cluster_count(300) == 6
    assert cluster_count(3000) == 60
    assert cluster_count(40_000) == 200


def test_kmeans_separates_two_blobs_reproducibly() -> None:
    rng = np.random.default_rng(0)
    left = rng.normal(0.0, 0.05, size=(20, 4)) + np.array([1, 0, 0, 0])
    right = rng.normal(0.0, 0.05, size=(20, 4)) + np.array([0, 1, 0, 0])
    labels = cluster_assignments(np.vstack([left, right]), 2, seed=2)
    assert len(set(labels[:20])) == 1 and len(set(labels[20:])) == 1
    assert labels[0] != labels[20]
    assert (cluster_assignments(np.vstack([left, right]), 2, seed=2) == labels).all()


def test_exact_match_and_partial_correct() -> None:
    gold = {"A", "C"}
    assert exact_match({"A", "C"}, gold) and partial_correct({"A", "C"}, gold)
    assert not exact_match({"A"}, gold) and partial_correct({"A"}, gold)
    assert not exact_match({"A", "B"}, gold) and not partial_correct({"A", "B"}, gold)
    assert not exact_match(set(), gold) and not partial_correct(set(), gold)
    assert rate([True, False, True, True]) == 0.75


def test_rouge_l_by_hand() -> None:
    assert lcs_length(["a", "b", "c", "d"], ["a", "c", "e"]) == 2
    same = rouge_l("The cat sat on the mat.", "the cat lay on the mat")
    assert (same.precision, same.recall, same.f1) == pytest.approx((5 / 6, 5 / 6, 5 / 6))
    partial = rouge_l("a b c d", "a c e")
    assert partial.precision == pytest.approx(0.5)
    assert partial.recall == pytest.approx(2 / 3)
    assert partial.f1 == pytest.approx(2 * 0.5 * (2 / 3) / (0.5 + 2 / 3))
    assert rouge_l("", "a b").f1 == 0.0


def test_key_point_coverage_eq_11() -> None:
    # question 1: 3 key points, the second contradicted; question 2: 1 key point, covered
    assert key_point_coverage([[False, True, False], [False]]) == pytest.approx(3 / 4)
    with pytest.raises(ValueError):
        key_point_coverage([[]])


def test_advantage_score_eq_12_13() -> None:
    result = advantage_score(["win", "win", "tie", "loss"], ["win", "loss", "loss", "tie"])
    assert result.recall_ratio == pytest.approx(0.5 / 0.75)
    assert result.precision_ratio == pytest.approx(0.25 / 0.75)
    assert result.score == pytest.approx(4 * (2 / 3) * (1 / 3) / (2 / 3 + 1 / 3) - 1)  # -1/9
    even = advantage_score(["win", "loss"], ["win", "loss"])
    assert even.score == pytest.approx(0.0)
    with pytest.raises(ValueError):
        advantage_score(["draw"], ["win"])
