"""BM25 on the *full* BioASQ snippet pool, straight from shared/data (no KB): the PROVENANCE §4 check.

Why: the retrieval reports run on a 3,000-snippet dev pool (embedding the whole pool is too slow on a
laptop), which is easier than the 20,585-snippet pool. Running plain BM25 on the full pool reproduces the
published reference (success@10 ≈ 0.91, snippet recall@10 ≈ 0.63 over 7b–11b) and, for the dev questions,
says how much easier the dev pool is.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from evals.baselines.bm25 import BM25Index
from evals.metrics.retrieval import ranking_metrics

REFERENCE_KS = (1, 10, 100)


def full_pool_bm25(
    shared_data: Path, question_ids: Sequence[str] | None = None, ks: Sequence[int] = REFERENCE_KS
) -> dict[str, float]:
    """Mean success@K and snippet recall@K of BM25 over all pooled snippets (raw snippet text)."""
    snippets = [json.loads(line) for line in (shared_data / "corpus" / "bioasq_snippets.jsonl").open()]
    index = BM25Index([s["id"] for s in snippets], [s["text"] for s in snippets])
    wanted = set(question_ids) if question_ids is not None else None
    rows: list[dict[str, float]] = []
    for line in (shared_data / "eval" / "bioasq_taskb_golden_7b_10b.jsonl").open():
        question = json.loads(line)
        if wanted is not None and question["id"] not in wanted:
            continue
        ranked = [i for i, _ in index.search(question["question"], max(ks))]
        rows.append(ranking_metrics(ranked, set(question["gold_snippet_ids"]), ks))
    summary = {key: float(np.mean([r[key] for r in rows])) for key in rows[0]} if rows else {}
    summary["questions"] = float(len(rows))
    summary["pool"] = float(len(snippets))
    return summary
