"""Match a query to the questions the KB's documents answer (the dense question index,
graphs/vectors/question_index.py).

Kept apart from evidence_rank: one idea, with one failure mode worth its own docstring (ties).
"""

from __future__ import annotations

import numpy as np

from graphs.kb import KnowledgeBase
from graphs.vectors.question_index import QUESTIONS_COLLECTION

QUESTION_TWINS = 4
"""Documents searched per wanted distinct question (a question repeated by up to four sources)."""


def question_matches(kb: KnowledgeBase, query: np.ndarray, k: int) -> list[str]:
    """Documents whose question is among the ``k`` closest distinct questions to the query.

    Why distinct: MedQuAD repeats a question word for word across sources ("What is (are) Gout ?" in
    GARD, MedlinePlus and NIHSeniorHealth), and identical questions tie; cutting at ``k`` documents would keep
    an arbitrary part of a tie. All documents of a kept question come, and their passages compete on the
    semantic score.
    """
    hits = kb.vectors.search(QUESTIONS_COLLECTION, query, k * QUESTION_TWINS)
    distinct = sorted({round(score, 5) for _, score in hits}, reverse=True)[:k]
    return [doc for doc, score in hits if distinct and round(score, 5) >= distinct[-1]]


def question_cosines(kb: KnowledgeBase, query: np.ndarray, document_ids: list[str]) -> np.ndarray:
    """Cosine of the query to the question each document answers, floored at 0; NaN for a document that
    answers no written question (a PubMed abstract, an imported drug label or guideline).

    Why NaN and not 0: the fusion (tools/evidence_scoring.py) then leaves the signal out of that
    candidate's score instead of scoring it as the worst possible match. At 0, every document without a
    question lost 0.3 of the fused score on a KB where other documents have one: MedlinePlus's "Do you
    have information about X" pages ranked their own topic first for 96 of 295 "What is X?" questions
    (graphs/vectors/question_index.py), and a user's imported sources would rank under every MedQuAD page."""
    vectors = kb.vectors.get_vectors(QUESTIONS_COLLECTION, sorted(set(document_ids)))
    q = np.asarray(query, dtype=np.float64)
    cosine = {d: max(0.0, float(np.asarray(v, dtype=np.float64) @ q)) for d, v in vectors.items()}
    return np.array([cosine.get(d, np.nan) for d in document_ids], dtype=np.float64)
