"""Ranking metrics over a system's ranked list mapped to scored units (seed 002 §4; standard IR).

Conventions, chosen so that every level is scored the same way:

* ``ranked`` is the list of *units* of the retrieved evidence, in rank order, one entry per retrieved
  evidence unit — so it may repeat a unit (two paragraphs of one document). ``K`` counts evidence units
  retrieved, i.e. what a reader is handed, never "distinct documents".
* A unit is retrieved at K when any of the first K entries is that unit (seed 002: "a document is
  considered retrieved if at least one of its text chunks is retrieved").
* recall@K = |gold ∩ retrieved@K| / |gold|; precision@K = |gold ∩ retrieved@K| / |retrieved@K| (distinct
  units retrieved, seed 002 counts retrieved documents, not chunks; 0 when nothing was retrieved);
  success@K = 1 if any gold unit is retrieved; reciprocal rank = 1 / position of the first gold unit in
  the order of first appearance (0 when none); nDCG@K with binary gains, a repeated unit earning nothing
  the second time, ideal DCG over ``min(K, |gold|)`` gold units.
"""

from __future__ import annotations

import math
from collections.abc import Collection, Sequence


def distinct_prefix(ranked: Sequence[str], k: int) -> list[str]:
    """Distinct units among the first ``k`` entries, in order of first appearance."""
    return list(dict.fromkeys(ranked[:k]))


def recall_at_k(ranked: Sequence[str], gold: Collection[str], k: int) -> float:
    if not gold:
        raise ValueError("recall is undefined without gold units")
    return len(set(ranked[:k]) & set(gold)) / len(set(gold))


def precision_at_k(ranked: Sequence[str], gold: Collection[str], k: int) -> float:
    retrieved = distinct_prefix(ranked, k)
    if not retrieved:
        return 0.0
    return len(set(retrieved) & set(gold)) / len(retrieved)


def success_at_k(ranked: Sequence[str], gold: Collection[str], k: int) -> float:
    return 1.0 if set(ranked[:k]) & set(gold) else 0.0


def reciprocal_rank(ranked: Sequence[str], gold: Collection[str]) -> float:
    wanted = set(gold)
    for position, unit in enumerate(dict.fromkeys(ranked), start=1):
        if unit in wanted:
            return 1.0 / position
    return 0.0


def ndcg_at_k(ranked: Sequence[str], gold: Collection[str], k: int) -> float:
    wanted = set(gold)
    if not wanted:
        raise ValueError("nDCG is undefined without gold units")
    seen: set[str] = set()
    dcg = 0.0
    for position, unit in enumerate(ranked[:k], start=1):
        if unit in wanted and unit not in seen:
            dcg += 1.0 / math.log2(position + 1)
        seen.add(unit)
    ideal = sum(1.0 / math.log2(position + 1) for position in range(1, min(k, len(wanted)) + 1))
    return dcg / ideal


def ranking_metrics(ranked: Sequence[str], gold: Collection[str], ks: Sequence[int]) -> dict[str, float]:
    """Every metric for one question at every K: keys like ``recall@10``, plus ``mrr``."""
    out: dict[str, float] = {"mrr": reciprocal_rank(ranked, gold)}
    for k in ks:
        out[f"recall@{k}"] = recall_at_k(ranked, gold, k)
        out[f"precision@{k}"] = precision_at_k(ranked, gold, k)
        out[f"success@{k}"] = success_at_k(ranked, gold, k)
        out[f"ndcg@{k}"] = ndcg_at_k(ranked, gold, k)
    return out
