"""Rerank evidence_rank's best candidates with the evidence reader (a cross-encoder trained here).

Why: the fused score (cosine, fragments, BM25, question index) says a passage is *about* the question; the
reader (graphs/vectors/reader.py) reads question and passage together and says whether the passage
*answers* it. Reading is ~100× dearer than a dot product, so only the ``READER_K`` best candidates by the
fused score are read, and the reader's probability is mixed into their relevance:
``relevance' = (1 − w) · relevance + w · p``; the candidates below the cut keep ``(1 − w) · relevance``
(p = 0: unread evidence never overtakes read evidence). ``READER_K`` and ``w`` were searched on the dev sets
only (``python -m evals.tune_reader``; evals/reports/reader_dev.md): no weight beat the fused ranking, so
the reader is a named method, not a default one.

A KB whose reader is unavailable (missing or damaged weights) ranks without it and says so in the result's
warnings (KnowledgeBase.reader_warning), never silently.
"""

from __future__ import annotations

import numpy as np

from graphs.model.schema import Evidence
from graphs.vectors.reader import EvidenceReader
from tools.evidence_scoring import ScoreBreakdown

READER_K = 10
"""Candidates the reader reads (the best by fused relevance)."""
READER_WEIGHT = 0.3
"""Share of the reader's probability in the reranked relevance: the best non-zero point of the dev grid (K 10,
weight 0.3), and still below the ranking without the reader (stage-2 reader: objective 0.839 vs 0.844;
bioasq-dev unchanged, pubmedqa success@1 +0.01, medquad-consumer success@1 0.667 → 0.625;
evals/reports/reader_dev.md). So ``reader`` is not among evidence_rank's default methods; it stays available
by name."""


def rerank_with_reader(
    reader: EvidenceReader,
    question: str,
    breakdowns: list[ScoreBreakdown],
    ids: list[str],
    records: dict[str, Evidence],
    k: int | None = None,
    weight: float | None = None,
) -> int:
    """Mix the reader's probability into the relevance of the ``k`` best candidates (in place); returns how
    many passages were read. ``k`` and ``weight`` default to the module's constants at call time."""
    k = READER_K if k is None else k
    weight = READER_WEIGHT if weight is None else weight
    relevance = np.array([b.relevance for b in breakdowns])
    top = sorted(range(len(ids)), key=lambda i: (-relevance[i], ids[i]))[:k]
    probabilities = reader.probabilities(question, [records[ids[i]].text for i in top])
    read = dict(zip(top, probabilities.tolist(), strict=True))
    for i, scores in enumerate(breakdowns):
        p = read.get(i)
        scores.reader = None if p is None else round(float(p), 6)
        mixed = (1.0 - weight) * scores.relevance + weight * (p or 0.0)
        scores.relevance = round(float(mixed), 6)
        scores.final = scores.relevance
    return len(top)
