"""Score and order evidence_rank's candidates: each method's score, their combination, duplicates, MMR.

The semantic score is the mean of the min–max-rescaled scores of the selected semantic methods (cosine,
fragment, idep), so methods on different scales (eq. 9 lives in [0, 10]) combine without one swamping the
others; a method whose score is constant over the candidates carries no order and is left out. ``hybrid``
then mixes in the rescaled graph score, the fusion weights (tools/fusion.py) mix in the rescaled BM25 and
question-index scores, and evidence with a label the question asks about gets :data:`LABEL_BOOST`. The
order is by that relevance; a near-duplicate of a better item is dropped, and ``mmr`` re-orders the rest.

Why a module of its own: this is the arithmetic of the rank, the part a new method or weight changes, and
it needs nothing of the request beyond a few numbers; the tool entry (tools/evidence_rank.py) reads the
request, gathers the pool (tools/evidence_candidates.py) and cuts the ordered list to the budget. The
single formulas (fragments, eq. 9, MMR, min–max, duplicates) live in tools/ranking.py.
"""

from __future__ import annotations

from collections.abc import Collection

import numpy as np
from pydantic import BaseModel, Field

from graphs.model.schema import Evidence
from tools.fusion import FusionWeights
from tools.idep_features import UsedFeature
from tools.ranking import fragment_matrix, fragment_scores, idep_scores, minmax, mmr_order, near_duplicates

SEMANTIC_METHODS: tuple[str, ...] = ("cosine", "fragment", "idep")
SEARCH_BLEND = 0.7
"""Share of the search encoder's rescaled cosine in the dense score (the rest: the base encoder's).

Chosen on the dev sets only (recall@10 / success@1, shipped fusion constants, 2026-11-27; bioasq-dev-full =
the bioasq-dev questions over all 20,585 snippets): base encoder alone 0.796 / 0.910, medquad-consumer
0.740 / 0.667, pubmedqa 0.870 / 0.970; blend 0.5 0.811 / 0.910, 0.728 / 0.667, 0.885 / 0.970; **0.7
0.811 / 0.910, 0.730 / 0.667, 0.883 / 0.970**; search encoder alone 0.818 / 0.910, 0.727 / 0.625,
0.881 / 0.990. The search encoder alone loses consumer questions their first passage (its MedQuAD training
questions are templates, evals/reports/retriever_finetune.md); the blend keeps it and most of the gain."""
DUPLICATE_COSINE = 0.97
LABEL_BOOST = 0.1
"""Added to the [0, 1] final score of evidence whose label the question asks about (e.g. "treatment").
MedQuAD consumer questions with the default methods, recall@1 / recall@10 / MRR: boost 0 → 0.185 / 0.697 /
0.663, 0.1 → 0.196 / 0.691 / 0.665, 0.2 → 0.191 / 0.688 / 0.645 (BioASQ snippets carry no asked label)."""


class ScoreBreakdown(BaseModel):
    """Every score that went into the rank; ``None`` where the method was not used."""

    cosine: float = Field(description="Cosine of the query to the passage under the base encoder.")
    search: float | None = Field(
        default=None,
        description="The same under the search encoder, when the build has its vectors, to the query moved "
        "towards its nearest passages (tools/query_feedback.py); blended with the base cosine into the dense "
        "score the rank used then.",
    )
    fragment: float | None = Field(
        default=None, description="1.0 = the best match of some fragment; less by the cosine gap to it."
    )
    best_fragment: int | None = Field(default=None, description="Index of the closest fragment.")
    idep: float | None = None
    graph: float | None = None
    hybrid: float | None = None
    bm25: float | None = Field(default=None, description="BM25 of the query over title + passage.")
    question: float | None = Field(
        default=None, description="BM25 of the query against the document's question."
    )
    question_match: float | None = Field(
        default=None,
        description="Cosine of the query to the document's question (dense question index); none when the "
        "document answers no written question.",
    )
    label_boost: float = 0.0
    reader: float | None = Field(
        default=None,
        description="The evidence reader's probability that the passage answers the question (the best "
        "READER_K candidates are read; tools/reader_rerank.py).",
    )
    relevance: float = Field(
        description="Mean of the min-max rescaled semantic scores (or hybrid), fused with rescaled BM25 and "
        "question scores by the query's weights, plus label_boost."
    )
    mmr_penalty: float | None = Field(default=None, description="w · mean similarity to items picked before.")
    final: float = Field(description="The score the item was ranked by: relevance − mmr_penalty.")


def score_candidates(
    matrix: np.ndarray,
    query: np.ndarray,
    frag_vecs: np.ndarray,
    feat_vecs: np.ndarray,
    features: list[UsedFeature],
    ids: list[str],
    methods: Collection[str],
    graph_scores: dict[str, float] | None,
    hybrid_weight: float,
    records: dict[str, Evidence],
    labels: list[str],
    fused: tuple[np.ndarray, np.ndarray, np.ndarray, FusionWeights],
    search: np.ndarray | None = None,
) -> list[ScoreBreakdown]:
    """Per-method raw scores, the combined semantic score, hybrid and label boost, as breakdowns.

    ``search``, the candidates' cosines under the search encoder (graphs/vectors/search_encoder.py), is
    blended into the ``cosine`` method's score (:data:`SEARCH_BLEND`) when given; a candidate without a
    search vector (NaN) uses its base cosine there. The base cosine is still reported as ``cosine`` (the
    answered model and the sufficiency rule read it, calibrated on the base encoder).
    """
    cosine = matrix @ np.asarray(query, dtype=np.float64)
    dense = cosine
    if search is not None:
        search = np.where(np.isnan(search), cosine, search)
        dense = (1.0 - SEARCH_BLEND) * minmax(cosine) + SEARCH_BLEND * minmax(search)
    raw: dict[str, np.ndarray] = {"cosine": dense}
    best_fragment: np.ndarray | None = None
    if "fragment" in methods and frag_vecs.shape[0]:
        frag_matrix = fragment_matrix(matrix, frag_vecs)
        raw["fragment"] = fragment_scores(frag_matrix)
        best_fragment = (frag_matrix - frag_matrix.max(axis=0, keepdims=True)).argmax(axis=1)
    if "idep" in methods and feat_vecs.shape[0]:
        raw["idep"] = idep_scores(matrix, feat_vecs, np.array([f.usefulness for f in features]))
    rescaled = {m: minmax(raw[m]) for m in SEMANTIC_METHODS if m in methods and m in raw}
    informative = [r for r in rescaled.values() if r.any()]  # a constant score carries no order: skip it
    semantic = np.mean(informative, axis=0) if informative else minmax(dense)
    graph: np.ndarray | None = None
    hybrid: np.ndarray | None = None
    final = semantic
    if graph_scores is not None:
        graph = np.array([float(graph_scores.get(i, 0.0)) for i in ids])
        if "hybrid" in methods and graph_scores:
            weight = hybrid_weight
            hybrid = (1.0 - weight) * minmax(semantic) + weight * minmax(graph)
            final = hybrid
    bm25, asked, asked_dense, weights = fused
    # A candidate whose document answers no written question (NaN, tools/question_match.py) is scored
    # without the dense question match, the other weights rescaled to sum to one, instead of as its worst.
    answers_a_question = ~np.isnan(asked_dense)
    question_match = np.zeros_like(asked_dense)
    question_match[answers_a_question] = minmax(asked_dense[answers_a_question])
    own_dense_weight = np.where(answers_a_question, weights.question_dense, 0.0)
    lexical_part = (
        weights.lexical * minmax(bm25) + weights.question * minmax(asked) + own_dense_weight * question_match
    )
    final = (1.0 - weights.lexical - weights.question - weights.question_dense) * final + lexical_part
    final = final / (1.0 - weights.question_dense + own_dense_weight)
    wanted = set(labels)
    boost = np.array([LABEL_BOOST if records[i].label in wanted else 0.0 for i in ids])
    final = final + boost
    out: list[ScoreBreakdown] = []
    for k in range(len(ids)):
        out.append(
            ScoreBreakdown(
                cosine=_round(cosine[k]),
                search=_round(search[k]) if search is not None else None,
                fragment=_round(raw["fragment"][k]) if "fragment" in raw else None,
                best_fragment=int(best_fragment[k]) if best_fragment is not None else None,
                idep=_round(raw["idep"][k]) if "idep" in raw else None,
                graph=_round(graph[k]) if graph is not None else None,
                hybrid=_round(hybrid[k]) if hybrid is not None else None,
                bm25=_round(bm25[k]),
                question=_round(asked[k]),
                question_match=_round(asked_dense[k]) if answers_a_question[k] else None,
                label_boost=float(boost[k]),
                relevance=_round(final[k]),
                final=_round(final[k]),
            )
        )
    return out


def order_candidates(
    breakdowns: list[ScoreBreakdown],
    ids: list[str],
    records: dict[str, Evidence],
    matrix: np.ndarray,
    methods: Collection[str],
    top_k: int,
) -> tuple[list[int], list[tuple[int, int, str]]]:
    """Candidate indices best first without near-duplicates (re-ordered by MMR when asked; its penalties
    are written into the breakdowns), and the dropped ones as ``(dropped, kept twin, reason)``."""
    final = np.array([b.relevance for b in breakdowns])

    order = sorted(range(len(ids)), key=lambda i: (-final[i], ids[i]))
    kept, twins = near_duplicates(
        order,
        [(records[i].document_id, records[i].start, records[i].end) for i in ids],
        matrix,
        DUPLICATE_COSINE,
    )
    if "mmr" in methods:
        limit = min(len(kept), 3 * top_k + 20)
        picked, penalties = mmr_order(final[kept], matrix[kept], limit, [ids[i] for i in kept])
        for position, penalty in zip(picked, penalties, strict=True):
            scores = breakdowns[kept[position]]
            scores.mmr_penalty = _round(penalty)
            scores.final = _round(scores.relevance - penalty)
        kept = [kept[p] for p in picked]
    return kept, twins


def _round(value: float) -> float:
    return round(float(value), 6)
