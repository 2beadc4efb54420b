"""``evidence_rank``: order candidate evidence for a question and cut it to what a reader can use.

Candidates come from the caller (walk topics, mapped chain evidence) plus a vector search; their stored
vectors are read from the index (evidence is never re-embedded); only the query, its fragments and the
features are embedded (two encoder calls, tools/query_aspects.py). Methods, selectable and combinable:

* ``cosine`` — similarity to ``Q ⊕ HO`` (with a hypothesis this is KG-Rank's answer expansion);
* ``fragment`` — HyKGE §4.3/§A.9: ``Q ⊕ HO`` without stop words in windows of 10 words, overlap 4; every
  candidate against every fragment, each fragment taken relative to its own best candidate so that every
  aspect of a multi-part question gets its top evidence near the top (tools/ranking.fragment_scores);
* ``idep`` — EbmKG eq. 9 over features ``f_i`` with usefulness ``u_i``: from an LLM under a task's search
  condition when the caller passes them (then it joins the default methods), otherwise derived offline
  (tools/idep_features.offline_features) when named;
* ``hybrid`` — BCG: min–max rescale the graph score (walk / chains) and the semantic score, average
  (``hybrid_weight`` 0.5; another weight tilts it);
* ``mmr`` — KG-Rank: select greedily with ``rel − w · mean_sim(selected)``, ``w = 0.1 + 0.01·n``;
* ``reader`` — the evidence reader (a cross-encoder trained here, graphs/vectors/reader.py) reads the best
  fused candidates and its probability is mixed into their relevance (tools/reader_rerank.py). Named only:
  on the dev sets it did not beat the fused ranking (evals/reports/reader_dev.md).

The search encoder's query is first moved towards its own nearest passages (pseudo-relevance feedback,
tools/query_feedback.py); the base query is not. Candidates also come from BM25 over title + passage
(``lexical_k``) and from the question index: the evidence of documents whose question matches the query
(``question_k``; MedQuAD documents answer a question, graphs/text/lexical_index.py); the pool is gathered
in tools/evidence_candidates.py. The final
relevance fuses the semantic score with the min–max-rescaled BM25 and question-index scores, weighted by
query features (tools/fusion.py: the rarity of the query's rarest token, whether any question matched, the
number of fragments).

The semantic score is the mean of the min–max-rescaled scores of the selected semantic methods, so methods
on different scales combine. Near-duplicates (same document with mostly the same span, or cosine > 0.97)
keep only the better one. The ranked list is cut at ``top_k`` items and a word budget (EbmKG caps
retrieved text at 8,000 words).

This module is the tool's contract (request, result, LangChain tool) and runs the steps in order; each
step has its own module: the query's fragments, features and vectors (tools/query_aspects.py), the
candidate pool (tools/evidence_candidates.py), the scores and the order (tools/evidence_scoring.py).
"""

from __future__ import annotations

from typing import Any, Literal

import numpy as np
from langchain_core.tools import BaseTool
from pydantic import BaseModel, Field

from graphs.kb import KnowledgeBase
from graphs.model.labels import asks_for_a_differential, specific_labels_asked
from graphs.text.lexical_index import query_tokens
from tools.common import as_langchain_tool, truncate
from tools.evidence_candidates import (
    LEXICAL_K,
    MAX_CANDIDATES,
    QUESTION_K,
    Origin,
    candidate_pool,
    search_candidates,
    search_cosines,
)
from tools.evidence_scoring import (
    DUPLICATE_COSINE,
    LABEL_BOOST,
    ScoreBreakdown,
    order_candidates,
    score_candidates,
)
from tools.fusion import FusionWeights, QueryFeatures, fusion_weights
from tools.idep_features import UsedFeature
from tools.query_aspects import query_aspects, query_vectors
from tools.query_feedback import with_feedback
from tools.question_match import question_cosines
from tools.reader_rerank import rerank_with_reader

RankMethod = Literal["cosine", "fragment", "idep", "hybrid", "mmr", "bm25", "question", "reader"]
DEFAULT_METHODS: tuple[RankMethod, ...] = ("cosine", "fragment", "bm25", "question")
"""The default when the caller names no methods; ``idep`` joins it when the caller passes features (an LLM's,
EbmKG's setting). Chosen on the eval harness's dev sets with the full candidate pipeline (walk + path
evidence + 50 dense; evals/reports/retrieval_*.md, twins credited): recall@10 BioASQ dev / MedQuAD consumer
— cosine 0.786 / 0.674, cosine+fragment **0.810 / 0.691**, + mmr 0.798 / 0.672, + offline idep 0.748 / 0.639,
+ hybrid (graph weight 0.1 / 0.2 / 0.3) 0.808 / 0.669, 0.806 / 0.667, 0.789 / 0.637. Offline IDEP features
(tools/idep_features.offline_features) say which aspect a passage is about, not whether it answers, and
pull recall down; MMR trades recall for variety the near-duplicate filter already gives; graph scores from
offline links were noise against the semantic score. All stay available by name.

Issue 11 added ``bm25`` and ``question`` (fused with weights from query features, tools/fusion.py; dev-set
choice in evals/reports/fusion_dev_*.md). Naming methods explicitly leaves out the ones not named, so
``["cosine"]`` is plain cosine over the same candidates."""


class Feature(BaseModel):
    """An evidence feature and its usefulness, as EbmKG's evidence-feature prompt returns them."""

    text: str = Field(min_length=1, max_length=1000, description="An aspect the evidence should address.")
    usefulness: float = Field(ge=0.0, le=10.0, description="How useful evidence with this aspect is, 0-10.")


class EvidenceRankRequest(BaseModel):
    """Arguments of ``evidence_rank`` (also the tool's JSON schema)."""

    question: str = Field(min_length=1, description="The question (truncated to 4,000 characters).")
    hypothesis: str | None = Field(
        default=None, description="A tentative answer (HyKGE hypothesis output) used only to find evidence."
    )
    candidate_ids: list[str] = Field(
        default_factory=list,
        max_length=MAX_CANDIDATES,
        description="Evidence ids (E:...) from the topic walk or reasoning chains. May be empty: a vector "
        "search adds candidates.",
    )
    graph_scores: dict[str, float] | None = Field(
        default=None, description="Graph-based score per evidence id (walk visits, chain score), for hybrid."
    )
    features: list[Feature] | None = Field(
        default=None,
        max_length=40,
        description="Evidence features with usefulness 0-10 from an LLM under a search condition, for idep. "
        "Without them idep derives features from the question.",
    )
    entity_ids: list[str] = Field(
        default_factory=list,
        max_length=50,
        description="Entity ids linked by ner_link (offline idep features).",
    )
    methods: list[RankMethod] = Field(
        default_factory=lambda: list(DEFAULT_METHODS),
        min_length=1,
        description="Ranking methods to combine: cosine, fragment, idep, hybrid, mmr, bm25 (BM25 fused by "
        "query features), question (the question index), reader (the trained cross-encoder reranks the best "
        "candidates). Default: cosine, fragment, bm25, question, plus idep when features are given.",
    )
    hybrid_weight: float = Field(
        default=0.5,
        ge=0.0,
        le=1.0,
        description="Weight of the rescaled graph score in hybrid (1 - weight goes to the semantic score); "
        "0.5 is BCG's plain average.",
    )
    vector_k: int = Field(default=50, ge=0, le=500, description="Candidates added by vector search.")
    search_encoder: bool = Field(
        default=True,
        description="Search and score by meaning with the trained search encoder when the KB has its "
        "vectors; false uses the base encoder's evidence vectors.",
    )
    lexical_k: int | None = Field(
        default=None,
        ge=0,
        le=500,
        description="Candidates added by BM25 search; default 50, or 0 when vector_k is 0 (no search).",
    )
    question_k: int | None = Field(
        default=None,
        ge=0,
        le=100,
        description="Documents whose question (title) matches the query, their evidence added; default 10, "
        "or 0 when vector_k is 0.",
    )
    lexical_weight: float | None = Field(
        default=None,
        ge=0.0,
        le=1.0,
        description="Weight of BM25 in the fused score; default: from query features (tools/fusion.py).",
    )
    question_weight: float | None = Field(
        default=None,
        ge=0.0,
        le=1.0,
        description="Weight of the question-index score; default: tools/fusion.py. Setting it also turns "
        "the dense question match off (its weight then goes to the other scores).",
    )
    top_k: int = Field(default=20, ge=1, le=200, description="Maximum evidence units returned.")
    word_budget: int = Field(
        default=8000, ge=50, le=50_000, description="Maximum words of evidence returned."
    )
    labels_boost: list[str] | None = Field(
        default=None,
        description="Evidence labels the question asks about (treatment, symptoms, ...) to boost; default: "
        "read from the question's wording; [] for none.",
    )


class RankedEvidence(BaseModel):
    id: str
    document_id: str
    title: str
    label: str
    keyword_entity: str
    text: str
    words: int
    origin: list[Origin]
    scores: ScoreBreakdown


class Duplicate(BaseModel):
    id: str
    duplicate_of: str
    reason: str


class EvidenceRankResult(BaseModel):
    evidence: list[RankedEvidence]
    fragments: list[str]
    features: list[UsedFeature]
    duplicates: list[Duplicate]
    unknown_ids: list[str]
    total_words: int
    candidates_considered: int
    parameters: dict[str, Any]
    warnings: list[str]


def evidence_rank(kb: KnowledgeBase, request: EvidenceRankRequest) -> EvidenceRankResult:
    """Score, deduplicate, order and cut the candidates (see the module docstring)."""
    warnings: list[str] = []
    question, note = truncate(request.question)
    if note:
        warnings.append(f"question: {note}")
    hypothesis = ""
    if request.hypothesis:
        hypothesis, note = truncate(request.hypothesis)
        if note:
            warnings.append(f"hypothesis: {note}")
    methods = list(dict.fromkeys(request.methods))
    if request.features and "methods" not in request.model_fields_set and "idep" not in methods:
        methods.append("idep")
    query_text = f"{question}\n{hypothesis}".strip()
    labels = specific_labels_asked(question) if request.labels_boost is None else list(request.labels_boost)

    lexical = kb.lexical
    warnings.extend(kb.warnings)
    llm_features = [
        UsedFeature(text=f.text, usefulness=f.usefulness, origin="llm") for f in request.features or []
    ]
    frags, features, notes = query_aspects(
        kb, question, hypothesis, query_text, methods, llm_features, request.entity_ids, labels
    )
    warnings.extend(notes)
    query, frag_vecs, feat_vecs = query_vectors(kb, query_text, frags, features)

    if not query_tokens(query_text):
        warnings.append("the question has no searchable words (only stop words or punctuation): BM25 skipped")
    searching = request.vector_k > 0  # vector_k=0 means "rank only my candidates": no search of any kind
    lexical_k = request.lexical_k if request.lexical_k is not None else (LEXICAL_K if searching else 0)
    question_k = request.question_k if request.question_k is not None else (QUESTION_K if searching else 0)
    extra = search_candidates(kb, query_text, question, query, lexical_k, question_k)
    searcher = kb.searcher if request.search_encoder else None
    search_query = searcher.embed_one(query_text) if searcher is not None else None
    if search_query is not None and request.vector_k:
        search_query = with_feedback(kb, search_query)
    ids, origins, unknown, vectors, records = candidate_pool(
        kb, request.candidate_ids, request.graph_scores, request.vector_k, query, extra, search_query
    )
    if unknown:
        warnings.append(f"{len(unknown)} unknown evidence id(s) ignored")
    if not ids:
        warnings.append("no candidate evidence")
        return _result([], frags, features, [], unknown, 0, request, methods, labels, warnings)

    matrix = np.stack([vectors[i] for i in ids]).astype(np.float64)
    bm25 = lexical.scores_for(query_text, ids)
    document_of = [records[i].document_id for i in ids]
    asked = lexical.question_scores_for(question, document_of)
    asked_dense = question_cosines(kb, query, document_of)
    rarity = lexical.rarity(query_text)
    has_question_vectors = bool(np.nan_to_num(asked_dense).any())
    weights = _weights(request, rarity, query_text, len(frags), bool(asked.any()), has_question_vectors)
    if not weights.use_fragments:
        frag_vecs = frag_vecs[:0]
    breakdowns = score_candidates(
        matrix,
        query,
        frag_vecs,
        feat_vecs,
        features,
        ids,
        methods,
        request.graph_scores,
        request.hybrid_weight,
        records,
        labels,
        (bm25, asked, asked_dense, weights),
        search_cosines(kb, search_query, ids),
    )
    if "hybrid" in methods and not request.graph_scores:
        warnings.append("hybrid needs graph_scores; ranked by the semantic score alone")
    read = 0
    if "reader" in methods:
        reader = kb.reader
        if reader is not None:
            read = rerank_with_reader(reader, question, breakdowns, ids, records)
        elif kb.reader_warning and kb.reader_warning not in warnings:
            warnings.append(kb.reader_warning)
    kept, twins = order_candidates(breakdowns, ids, records, matrix, methods, request.top_k)
    duplicates = [Duplicate(id=ids[i], duplicate_of=ids[j], reason=why) for i, j, why in twins]

    documents = kb.store.get_documents(sorted({records[ids[i]].document_id for i in kept}))
    chosen: list[RankedEvidence] = []
    total = 0
    for i in kept:
        evidence = records[ids[i]]
        words = len(evidence.text.split())
        if total + words > request.word_budget:
            continue
        total += words
        document = documents.get(evidence.document_id)
        chosen.append(
            RankedEvidence(
                id=evidence.id,
                document_id=evidence.document_id,
                title=document.title if document else "",
                label=evidence.label,
                keyword_entity=evidence.keyword_entity,
                text=evidence.text,
                words=words,
                origin=origins[evidence.id],
                scores=breakdowns[i],
            )
        )
        if len(chosen) == request.top_k:
            break
    considered = len(ids)
    result = _result(
        chosen, frags, features, duplicates, unknown, considered, request, methods, labels, warnings
    )
    result.parameters.update(lexical_k=lexical_k, question_k=question_k, reader_read=read)
    result.parameters["fusion"] = {
        "lexical_weight": weights.lexical,
        "question_weight": weights.question,
        "question_match_weight": weights.question_dense,
        "fragments_used": weights.use_fragments,
        "rarity": round(rarity, 4),
    }
    return result


def _weights(
    request: EvidenceRankRequest,
    rarity: float,
    query_text: str,
    n_fragments: int,
    has_questions: bool,
    has_question_vectors: bool,
) -> FusionWeights:
    """Fusion weights from the query's features, unless the caller fixed them."""
    tokens = len(query_tokens(query_text))
    entities, differential = len(request.entity_ids), asks_for_a_differential(request.question)
    features = QueryFeatures(
        rarity, tokens, entities, n_fragments, has_questions, has_question_vectors, differential
    )
    weights = fusion_weights(features)
    lexical = weights.lexical if request.lexical_weight is None else request.lexical_weight
    question = weights.question if request.question_weight is None else request.question_weight
    asks = "question" in request.methods
    lexical = lexical if "bm25" in request.methods else 0.0
    question = question if asks else 0.0
    dense = weights.question_dense if asks and request.question_weight is None else 0.0
    dense = max(0.0, min(dense, 1.0 - lexical - question))  # a caller's lexical 1.0 leaves it no room
    return FusionWeights(lexical, question, weights.use_fragments, dense)


def _result(
    evidence: list[RankedEvidence],
    frags: list[str],
    features: list[UsedFeature],
    duplicates: list[Duplicate],
    unknown: list[str],
    considered: int,
    request: EvidenceRankRequest,
    methods: list[RankMethod],
    labels: list[str],
    warnings: list[str],
) -> EvidenceRankResult:
    return EvidenceRankResult(
        evidence=evidence,
        fragments=frags,
        features=features,
        duplicates=duplicates,
        unknown_ids=unknown,
        total_words=sum(e.words for e in evidence),
        candidates_considered=considered,
        parameters={
            "methods": methods,
            "vector_k": request.vector_k,
            "lexical_k": request.lexical_k,
            "question_k": request.question_k,
            "hybrid_weight": request.hybrid_weight if "hybrid" in methods else None,
            "top_k": request.top_k,
            "word_budget": request.word_budget,
            "labels_boost": labels,
            "label_boost": LABEL_BOOST,
            "duplicate_cosine": DUPLICATE_COSINE,
            "features_from": "llm" if request.features else ("offline" if "idep" in methods else None),
        },
        warnings=warnings,
    )


EVIDENCE_RANK_DESCRIPTION = (
    "Rank evidence passages for a question and return the best ones with their text, cut to a word "
    "budget. Give the question (and a tentative answer as hypothesis if you have one), candidate evidence "
    "ids from the graph tools (with graph_scores if they came with scores), and optionally evidence "
    "features with usefulness 0-10. Each result has a score breakdown per method and its document, for "
    "citation."
)


def evidence_rank_tool(kb: KnowledgeBase) -> BaseTool:
    """``evidence_rank`` as a LangChain tool with :class:`EvidenceRankRequest` as its argument schema."""
    return as_langchain_tool(
        kb, evidence_rank, EvidenceRankRequest, "evidence_rank", EVIDENCE_RANK_DESCRIPTION
    )
