"""Run retrieval systems over a dataset on one KB and score them at passage and document level.

Gold is resolved against the KB actually used: gold documents the KB does not hold are dropped (a GHR
pair named as gold does not count against a KB built without GHR), and a question left with no gold is
skipped and counted. Passage gold for MedQuAD is the paragraph(s) of each gold document that contain its
hint, or all of its paragraphs when no hint is given or the hint straddles a chunk boundary.
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Collection, Sequence
from dataclasses import dataclass, field

import numpy as np

from evals.adapters import TWIN_SEPARATOR
from evals.baselines.base import EvidencePool, Retriever
from evals.datasets.schema import RetrievalDataset, RetrievalQuestion
from evals.metrics.retrieval import ranking_metrics
from evals.metrics.spread import cluster_assignments, cluster_count, spread_at_k

LEVELS = ("passage", "document")


@dataclass(frozen=True)
class Gold:
    passages: frozenset[str]
    documents: frozenset[str]
    hint_misses: int = 0


@dataclass
class SystemRun:
    """One system's ranked evidence per question and what it cost."""

    system: str
    description: str
    ranked: dict[str, list[str]]
    latency_ms: list[float]
    setup_s: float
    errors: dict[str, str] = field(default_factory=dict)


@dataclass
class SystemScores:
    system: str
    description: str
    means: dict[str, dict[str, float]]
    spread: dict[int, float]
    latency_p50_ms: float
    latency_mean_ms: float
    setup_s: float
    mean_returned: float
    empty_results: int
    errors: int


def resolve_gold(dataset: RetrievalDataset, pool: EvidencePool, question: RetrievalQuestion) -> Gold | None:
    present = [d for d in question.gold_documents if d in pool.by_document]
    if not present:
        return None
    documents = frozenset(dataset.group(d) for d in present)
    if dataset.passage_unit == "document":
        return Gold(frozenset(present), documents)
    passages: set[str] = set()
    misses = 0
    for document_id in present:
        units = pool.by_document[document_id]
        hint = question.passage_hints.get(document_id)
        hit = [u for u in units if hint and hint in pool.records[u].text]
        if hint and not hit:
            misses += 1
        passages.update(hit or units)
    return Gold(frozenset(passages), documents, misses)


def units(dataset: RetrievalDataset, pool: EvidencePool, ranked: Sequence[str], level: str) -> list[str]:
    """Map ranked evidence ids to the units scored at ``level`` (unknown ids map to themselves)."""
    return [_unit(dataset, pool, i, level) for i in ranked]


def slot_metrics(
    dataset: RetrievalDataset,
    pool: EvidencePool,
    ranked: Sequence[str],
    level: str,
    wanted: Collection[str],
    ks: Sequence[int],
) -> dict[str, float]:
    """:func:`ranking_metrics` where an entry may be a slot of twins (evals/adapters.py ``as_slots``).

    A slot is one position: its kept passage and the near-duplicates folded into it (the reader is shown
    that text once). At K the first K *slots* count, every member credited, so folding a twin costs no
    top-K slot and a gold twin is not lost. The reciprocal rank is 1 / the first slot holding gold. With
    no slot entries this is exactly ranking_metrics.
    """
    slots = [[_unit(dataset, pool, i, level) for i in entry.split(TWIN_SEPARATOR)] for entry in ranked]
    flat = [u for slot in slots for u in slot]
    out = ranking_metrics(flat, wanted, ks)
    if all(len(slot) == 1 for slot in slots):
        return out
    first = next((n for n, slot in enumerate(slots, start=1) if set(slot) & set(wanted)), 0)
    out["mrr"] = 1.0 / first if first else 0.0
    for k in ks:
        n = sum(len(slot) for slot in slots[:k])
        at_n = ranking_metrics(flat, wanted, [max(n, 1)])
        for name in ("recall", "precision", "success", "ndcg"):
            out[f"{name}@{k}"] = at_n[f"{name}@{max(n, 1)}"]
    return out


def first_ids(ranked: Sequence[str]) -> list[str]:
    """The kept passage of every slot (for spread: the reader sees one passage per slot)."""
    return [entry.split(TWIN_SEPARATOR)[0] for entry in ranked]


def _unit(dataset: RetrievalDataset, pool: EvidencePool, evidence_id: str, level: str) -> str:
    record = pool.records.get(evidence_id)
    if record is None:
        return evidence_id
    if level == "document":
        return dataset.group(record.document_id)
    return record.document_id if dataset.passage_unit == "document" else evidence_id


def run_system(
    system: Retriever, questions: Sequence[RetrievalQuestion], k: int, setup_s: float
) -> SystemRun:
    """Retrieve for every question, timing each call; a failing call is recorded, not fatal."""
    run = SystemRun(system.name, system.description, {}, [], setup_s)
    for question in questions:
        started = time.perf_counter()
        try:
            run.ranked[question.id] = list(system.retrieve(question.question, k))[:k]
        except Exception as exc:
            run.ranked[question.id] = []
            run.errors[question.id] = f"{type(exc).__name__}: {exc}"
        run.latency_ms.append((time.perf_counter() - started) * 1000.0)
    return run


def cluster_map(pool: EvidencePool, seed: int = 2) -> tuple[dict[str, int], int]:
    """Evidence id → k-means cluster over every evidence vector of the KB (seed 002 spread)."""
    k = cluster_count(len(pool.ids))
    if len(pool.ids) < k:
        return {}, 0
    labels = cluster_assignments(pool.vectors, k, seed=seed)
    return {evidence_id: int(label) for evidence_id, label in zip(pool.ids, labels, strict=True)}, k


def score_run(
    run: SystemRun,
    dataset: RetrievalDataset,
    pool: EvidencePool,
    golds: dict[str, Gold],
    ks: Sequence[int],
    cluster_of: dict[str, int],
) -> SystemScores:
    """Mean of every metric over the questions with gold, per level; spread@K; latency."""
    per_level: dict[str, list[dict[str, float]]] = {level: [] for level in LEVELS}
    spreads: dict[int, list[int]] = {k: [] for k in ks}
    for question_id, gold in golds.items():
        ranked = run.ranked.get(question_id, [])
        for level in LEVELS:
            wanted = gold.passages if level == "passage" else gold.documents
            per_level[level].append(slot_metrics(dataset, pool, ranked, level, wanted, ks))
        for k in ks:
            spreads[k].append(spread_at_k(first_ids(ranked), cluster_of, k))
    means = {
        level: {key: float(np.mean([row[key] for row in rows])) for key in rows[0]} if rows else {}
        for level, rows in per_level.items()
    }
    returned = [len(run.ranked.get(q, [])) for q in golds]
    return SystemScores(
        system=run.system,
        description=run.description,
        means=means,
        spread={k: float(np.mean(v)) if v else 0.0 for k, v in spreads.items()},
        latency_p50_ms=statistics.median(run.latency_ms) if run.latency_ms else 0.0,
        latency_mean_ms=statistics.fmean(run.latency_ms) if run.latency_ms else 0.0,
        setup_s=run.setup_s,
        mean_returned=float(np.mean(returned)) if returned else 0.0,
        empty_results=sum(1 for n in returned if n == 0),
        errors=len(run.errors),
    )
