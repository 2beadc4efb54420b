"""Gather evidence_rank's candidate pool: the caller's ids, a vector search, BM25 and the question index.

The caller's ids come from the graph tools (walk topics, mapped chain evidence, ids that only carry a graph
score); the vector search adds the ``vector_k`` evidence units closest to the query; BM25 over title +
passage adds ``lexical_k`` more; the question index adds the evidence of the documents whose question
matches the query, by words (BM25 over the titles) and by meaning (tools/question_match.py). Each candidate
keeps every origin that brought it (shown in the result), and its stored vector is read once, here.

Why a module of its own: the pool decides what is considered at all, and evidence missing from it cannot be
won back by any scoring method (tools/evidence_scoring.py), so recall problems are looked for here first.
Its rules are also not about order: caps (``MAX_CANDIDATES``), which ids are unknown (no stored vector or
no record), and how a matched document turns into evidence units.
"""

from __future__ import annotations

from typing import Literal

import numpy as np

from graphs.kb import KnowledgeBase
from graphs.model.schema import Evidence
from graphs.vectors.search_encoder import SEARCH_COLLECTION
from tools.question_match import question_matches

MAX_CANDIDATES = 1000
LEXICAL_K = 50
"""BM25 candidates per query (as many as dense ones)."""
QUESTION_K = 10
"""Documents matched by the question index; each brings its evidence units (a MedQuAD answer: ~3)."""

Origin = Literal["candidate", "vector", "lexical", "question"]


def search_candidates(
    kb: KnowledgeBase, query_text: str, question: str, query: np.ndarray, lexical_k: int, question_k: int
) -> list[tuple[str, Origin]]:
    """BM25 hits of the query text, then the evidence of documents whose question matches the question."""
    lexical = kb.lexical
    extra: list[tuple[str, Origin]] = [
        (i, "lexical") for i, _ in (lexical.search(query_text, lexical_k) if lexical_k else [])
    ]
    if question_k:  # documents whose question matches the query, by words (BM25) and by meaning
        asked_docs = [d for d, _ in lexical.question_search(question, question_k)]
        for document_id in dict.fromkeys([*asked_docs, *question_matches(kb, query, question_k)]):
            extra.extend((i, "question") for i in lexical.evidence_of_document.get(document_id, []))
    return extra


def candidate_pool(
    kb: KnowledgeBase,
    candidate_ids: list[str],
    graph_scores: dict[str, float] | None,
    vector_k: int,
    query: np.ndarray,
    extra: list[tuple[str, Origin]],
    search_query: np.ndarray | None = None,
) -> tuple[list[str], dict[str, list[Origin]], list[str], dict[str, np.ndarray], dict[str, Evidence]]:
    """Requested ids (deduplicated, in order; ids that only have a graph score too), then vector-search
    hits (by ``query`` over the base vectors, and by ``search_query`` over the search encoder's when given),
    then ``extra``; ids with no vector or no record are unknown. Also every candidate's origins, its stored
    base vector (each read once) and its record."""
    origins: dict[str, list[Origin]] = {}
    for evidence_id in [*candidate_ids, *sorted(graph_scores or {})]:
        origins.setdefault(evidence_id, ["candidate"])
    known = kb.vectors.get_vectors("evidence", list(origins)) if origins else {}
    unknown = [i for i in origins if i not in known]
    for i in unknown:
        del origins[i]
    if vector_k:  # and the search encoder's nearest when the build has its vectors (search_encoder.py)
        found = [i for i, _ in kb.vectors.search("evidence", query, vector_k)]
        if search_query is not None:
            found += [i for i, _ in kb.vectors.search(SEARCH_COLLECTION, search_query, vector_k)]
        for evidence_id in dict.fromkeys(found):
            origins.setdefault(evidence_id, []).append("vector")
    for evidence_id, origin in extra:
        if origin not in origins.setdefault(evidence_id, []):
            origins[evidence_id].append(origin)
    ids = list(origins)[:MAX_CANDIDATES]
    new = [i for i in ids if i not in known]
    vectors = {**known, **(kb.vectors.get_vectors("evidence", new) if new else {})}
    vectors = {i: vectors[i] for i in ids if i in vectors}
    records = kb.store.get_evidence([i for i in ids if i in vectors])
    unknown += [i for i in ids if i not in records and i not in unknown]
    return [i for i in ids if i in records], {i: origins[i] for i in ids}, unknown, vectors, records


def search_cosines(kb: KnowledgeBase, search_query: np.ndarray | None, ids: list[str]) -> np.ndarray | None:
    """Each candidate's cosine to ``search_query`` under the search encoder (NaN for a candidate without a
    search vector, not expected in a build that has them: the scorer gives it its base cosine), or ``None``
    without a search query."""
    if search_query is None:
        return None
    stored = kb.vectors.get_vectors(SEARCH_COLLECTION, ids)
    probe = np.asarray(search_query, dtype=np.float64)
    return np.array([float(stored[i] @ probe) if i in stored else np.nan for i in ids])
