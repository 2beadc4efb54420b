"""Pseudo-relevance feedback for the search encoder's query: move it towards its own first hits.

Why: a question names its subject in a few words ("What is the mode of administration of AZD8601?"); the
passages that answer it share a vocabulary the question lacks (the trial, the construct, the tissue). The
first few nearest passages under the search encoder are mostly on the subject, so their mean vector says
what "on the subject" looks like in the pool, and the query moved towards it finds more such passages
(Rocchio's feedback, in the embedding space; e.g. Li et al. 2023, "Pseudo relevance feedback with deep
language models and dense retrievers"). Only the search encoder's query moves: the base vectors also serve
the question index, entity linking and key sentences, which were calibrated on the plain question.

Chosen on the dev sets by ``python -m evals.tune_feedback`` (evals/reports/query_feedback.md; objective: mean
of (recall@10 + success@1) / 2 over bioasq-dev, bioasq-dev-full, medquad-consumer and pubmedqa): 5 passages,
weight 0.5 — recall@10 bioasq-dev-full 0.811 → 0.815, medquad-consumer 0.730 → 0.737, success@1
medquad-consumer 0.667 → 0.708 and pubmedqa 0.970 → 0.990, bioasq-dev level. It costs one more
nearest-neighbour search of the search collection (a matrix product) per ranking.
"""

from __future__ import annotations

import numpy as np

from graphs.kb import KnowledgeBase
from graphs.vectors.search_encoder import SEARCH_COLLECTION

FEEDBACK_DOCS = 5
"""Nearest passages whose mean vector the query moves towards (0 turns feedback off)."""
FEEDBACK_WEIGHT = 0.5
"""How far: the query (unit length) plus this times their mean vector, normalised again."""


def with_feedback(kb: KnowledgeBase, query: np.ndarray) -> np.ndarray:
    """The search encoder's ``query`` moved towards its ``FEEDBACK_DOCS`` nearest passages (unit length);
    ``query`` itself when feedback is off or the collection is empty."""
    if FEEDBACK_DOCS <= 0 or FEEDBACK_WEIGHT <= 0:
        return query
    ids = [i for i, _ in kb.vectors.search(SEARCH_COLLECTION, query, FEEDBACK_DOCS)]
    stored = kb.vectors.get_vectors(SEARCH_COLLECTION, ids)
    if not stored:
        return query
    centroid = np.mean([stored[i] for i in ids if i in stored], axis=0)
    moved = np.asarray(query, dtype=np.float64) + FEEDBACK_WEIGHT * centroid
    return (moved / np.linalg.norm(moved)).astype(np.asarray(query).dtype)
