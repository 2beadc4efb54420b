"""``evidence_rank`` and its scoring helpers on the real slice KB and the real embedding model."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
from pydantic import ValidationError

from graphs.kb import KnowledgeBase
from tools.evidence_rank import (
    DEFAULT_METHODS,
    EvidenceRankRequest,
    EvidenceRankResult,
    Feature,
    RankedEvidence,
    evidence_rank,
    evidence_rank_tool,
)
from tools.evidence_scoring import DUPLICATE_COSINE, LABEL_BOOST, SEARCH_BLEND
from tools.idep_features import offline_features
from tools.ranking import (
    MMR_W_BASE,
    MMR_W_STEP,
    fragment_scores,
    fragments,
    idep_scores,
    minmax,
    mmr_order,
    near_duplicates,
    spans_overlap_heavily,
)

GOUT = "DOID:13189"


def rank(kb: KnowledgeBase, question: str, **options: object) -> EvidenceRankResult:
    return evidence_rank(kb, EvidenceRankRequest(question=question, **options))


def topic_evidence(kb: KnowledgeBase, *topic_ids: str) -> list[str]:
    topics = kb.store.get_topics(list(topic_ids))
    return [e for t in topic_ids for e in topics[t].evidence_ids]


# ----- the formulas, by hand -----


def test_idep_scores_equal_eq9_on_a_hand_example() -> None:
    evidence = np.array([[1.0, 0.0], [0.6, 0.8]])
    features = np.array([[1.0, 0.0], [0.0, 1.0]])
    usefulness = np.array([10.0, 2.0])
    # e1: cos = (1, 0) -> 10·e/(e+1) + 2·1/(e+1); e2: cos = (0.6, 0.8)
    expected_1 = (10 * math.e + 2) / (math.e + 1)
    expected_2 = (10 * math.exp(0.6) + 2 * math.exp(0.8)) / (math.exp(0.6) + math.exp(0.8))
    assert idep_scores(evidence, features, usefulness) == pytest.approx([expected_1, expected_2], abs=1e-12)
    assert idep_scores(evidence, features, np.array([7.0, 7.0])) == pytest.approx([7.0, 7.0])  # equal u: flat


def test_tool_idep_score_equals_eq9_computed_by_hand(slice_kb: KnowledgeBase) -> None:
    candidates = topic_evidence(slice_kb, f"T:{GOUT}|treatment")[:3]
    features = [
        Feature(text="medicines that lower uric acid", usefulness=9),
        Feature(text="pain in the big toe", usefulness=3),
        Feature(text="kidney stones", usefulness=0),
    ]
    result = rank(
        slice_kb,
        "How is gout treated?",
        candidate_ids=candidates,
        vector_k=0,
        methods=["idep"],
        features=features,
        labels_boost=[],
    )
    vectors = slice_kb.vectors.get_vectors("evidence", candidates)
    feature_vectors = slice_kb.embedder.embed([f.text for f in features])
    for item in result.evidence:
        cosines = [float(np.dot(vectors[item.id], f)) for f in feature_vectors]
        weights = [math.exp(c) for c in cosines]
        by_hand = sum(f.usefulness * w for f, w in zip(features, weights, strict=True)) / sum(weights)
        assert item.scores.idep == pytest.approx(by_hand, abs=1e-5)
    assert [f.origin for f in result.features] == ["llm", "llm", "llm"]
    assert len(result.evidence) == 3


def test_minmax_and_fragments() -> None:
    assert minmax(np.array([2.0, 4.0, 6.0])) == pytest.approx([0.0, 0.5, 1.0])
    assert minmax(np.array([3.0, 3.0])) == pytest.approx([0.0, 0.0])
    words = " ".join(f"w{i}" for i in range(20))
    chunks = fragments("The " + words + " of the")  # stop words go first
    assert chunks[0].split() == [f"w{i}" for i in range(10)]
    assert chunks[1].split()[0] == "w6"  # window 10, overlap 4 -> step 6
    assert chunks[-1].split()[-1] == "w19" and len(chunks[-1].split()) == 10  # the tail is a full window
    assert fragments("the of and") == []
    matrix = np.array([[0.9, 0.2], [0.8, 0.5], [0.1, 0.4]])  # 3 candidates x 2 fragments
    assert fragment_scores(matrix) == pytest.approx([1.0, 1.0, 0.9])  # each fragment's best scores 1


def test_spans_overlap_heavily_and_near_duplicates() -> None:
    assert spans_overlap_heavily((0, 100), (10, 110))
    assert not spans_overlap_heavily((0, 100), (90, 300))  # a one-sentence chunk overlap is not a repeat
    assert not spans_overlap_heavily((0, 100), (100, 200))
    places = [("d1", 0, 100), ("d1", 10, 110), ("d1", 90, 300), ("d2", 0, 50), ("d3", 0, 50)]
    vectors = np.array([[1.0, 0.0], [0.0, 1.0], [0.6, 0.8], [0.8, 0.6], [0.8, 0.6]])
    kept, dropped = near_duplicates([0, 1, 2, 3, 4], places, vectors, 0.97)
    assert kept == [0, 2, 3]
    assert dropped == [(1, 0, "same document, overlapping span"), (4, 3, "cosine > 0.97")]


# ----- MMR -----


def test_mmr_drops_a_near_duplicate_below_a_different_passage(slice_kb: KnowledgeBase) -> None:
    passages = [
        "Allopurinol lowers the level of uric acid in the blood of people with gout and prevents attacks.",
        "Allopurinol, taken every day, lowers uric acid in the blood and so prevents new gout attacks.",
        "Colchicine or NSAIDs such as ibuprofen relieve the pain and swelling of an acute gout attack.",
        "Drinking plenty of water and avoiding alcohol can reduce how often gout flares.",
    ]
    vectors = slice_kb.embedder.embed(passages)
    assert 0.9 < float(vectors[0] @ vectors[1]) < DUPLICATE_COSINE  # near-identical, kept by deduplication
    relevance = np.array([1.0, 0.96, 0.93, 0.90])  # without MMR: 0, 1, 2, 3
    order, penalties = mmr_order(relevance, vectors, 4, ["a", "b", "c", "d"])
    assert order[0] == 0 and order.index(1) > order.index(2)  # the near-duplicate drops below passage 2
    assert penalties[order.index(1)] > penalties[order.index(2)]


def test_tool_mmr_penalty_follows_kg_rank_formula(slice_kb: KnowledgeBase) -> None:
    result = rank(slice_kb, "Which medicines treat gout attacks?", methods=["cosine", "mmr"], top_k=8)
    items = result.evidence
    vectors = slice_kb.vectors.get_vectors("evidence", [e.id for e in items])
    for n, item in enumerate(items):
        if n == 0:
            assert item.scores.mmr_penalty == 0.0
            continue
        mean_sim = np.mean([float(vectors[item.id] @ vectors[e.id]) for e in items[:n]])
        expected = (MMR_W_BASE + MMR_W_STEP * n) * mean_sim
        assert item.scores.mmr_penalty == pytest.approx(expected, abs=1e-5)
        assert item.scores.final == pytest.approx(item.scores.relevance - expected, abs=1e-5)


# ----- fragment granularity -----

LONG_GOUT_STORY = (
    "My father has had repeated gout attacks in his big toe, ankle and knee for many years. His uric acid "
    "level stays high despite diet changes and less alcohol, he takes allopurinol every day and colchicine "
    "or NSAIDs during painful flares, and his doctor now talks about probenecid or febuxostat to lower the "
    "uric acid further and about tophi forming in his joints. "
)


def test_fragments_surface_evidence_for_the_second_aspect(slice_kb: KnowledgeBase) -> None:
    question = LONG_GOUT_STORY + "His brother was just diagnosed with celiac disease; how is that tested?"

    def celiac_rank(methods: list[str]) -> int:
        result = rank(slice_kb, question, methods=methods, vector_k=80, top_k=80, labels_boost=[])
        titles = [e.title.lower() for e in result.evidence]
        return next(i for i, t in enumerate(titles) if "celiac" in t)

    whole_query, by_fragment = celiac_rank(["cosine"]), celiac_rank(["fragment"])
    assert whole_query >= 5  # one query vector: the long gout story wins the top
    assert by_fragment < 5  # its own fragment brings the celiac evidence up
    result = rank(slice_kb, question, methods=["fragment"], vector_k=80, top_k=5, labels_boost=[])
    celiac = next(e for e in result.evidence if "celiac" in e.title.lower())
    assert celiac.scores.best_fragment is not None
    assert "celiac" in result.fragments[celiac.scores.best_fragment]  # matched by a fragment about celiac


# ----- hybrid, labels, budget, duplicates -----


def dense_scores(evidence: list[RankedEvidence]) -> np.ndarray:
    """The dense score evidence_rank ranks by: the base cosine blended with the search encoder's."""
    cosine = np.array([e.scores.cosine for e in evidence])
    search = np.array([e.scores.search for e in evidence], dtype=float)
    assert not np.isnan(search).any()  # the slice KB has the search encoder's vectors
    return (1 - SEARCH_BLEND) * minmax(cosine) + SEARCH_BLEND * minmax(search)


def test_hybrid_weight_tilts_between_semantic_and_graph(slice_kb: KnowledgeBase) -> None:
    candidates = topic_evidence(slice_kb, f"T:{GOUT}|treatment", f"T:{GOUT}|causes")[:6]
    graph = {c: float(i) for i, c in enumerate(candidates)}
    common = dict(candidate_ids=candidates, vector_k=0, graph_scores=graph, top_k=10, labels_boost=[])
    for weight in (0.0, 0.2, 1.0):
        result = rank(
            slice_kb, "What lowers uric acid?", methods=["cosine", "hybrid"], hybrid_weight=weight, **common
        )
        dense = dense_scores(result.evidence)
        graph_values = np.array([graph[e.id] for e in result.evidence])
        expected = (1 - weight) * minmax(dense) + weight * minmax(graph_values)
        assert [e.scores.hybrid for e in result.evidence] == pytest.approx(list(expected), abs=1e-5)
        assert result.parameters["hybrid_weight"] == weight
    by_graph = rank(
        slice_kb, "What lowers uric acid?", methods=["cosine", "hybrid"], hybrid_weight=1.0, **common
    )
    assert [e.id for e in by_graph.evidence] == candidates[::-1]  # weight 1: the graph score alone orders


def test_hybrid_is_the_mean_of_min_max_rescaled_scores(slice_kb: KnowledgeBase) -> None:
    candidates = topic_evidence(slice_kb, f"T:{GOUT}|treatment", f"T:{GOUT}|causes")[:6]
    graph = {candidates[0]: 0.5, candidates[1]: 2.0, candidates[2]: 1.0, candidates[3]: 4.0}  # others: 0
    result = rank(
        slice_kb,
        "What lowers uric acid?",
        candidate_ids=candidates,
        vector_k=0,
        graph_scores=graph,
        methods=["cosine", "hybrid"],
        top_k=10,
        labels_boost=[],
    )
    assert len(result.evidence) == len(candidates)
    graph_values = np.array([graph.get(e.id, 0.0) for e in result.evidence])
    expected = (minmax(dense_scores(result.evidence)) + minmax(graph_values)) / 2
    for item, value, raw in zip(result.evidence, expected, graph_values, strict=True):
        assert item.scores.graph == raw
        assert item.scores.hybrid == pytest.approx(value, abs=1e-5)
        assert item.scores.final == pytest.approx(value, abs=1e-5)
    assert [e.scores.final for e in result.evidence] == sorted(
        (e.scores.final for e in result.evidence), reverse=True
    )
    without_graph = rank(
        slice_kb, "What lowers uric acid?", candidate_ids=candidates, vector_k=0, methods=["hybrid"]
    )
    assert any("graph_scores" in w for w in without_graph.warnings)


def test_asked_label_is_boosted(slice_kb: KnowledgeBase) -> None:
    result = rank(slice_kb, "What are the treatments for gout?", top_k=30)
    assert result.parameters["labels_boost"] == ["treatment"]  # not "overview" for "what are"
    for item in result.evidence:
        assert item.scores.label_boost == (LABEL_BOOST if item.label == "treatment" else 0.0)
    assert result.evidence[0].label == "treatment"
    plain = rank(slice_kb, "What are the treatments for gout?", top_k=30, labels_boost=[])
    assert all(e.scores.label_boost == 0.0 for e in plain.evidence)


def test_word_budget_is_respected(slice_kb: KnowledgeBase) -> None:
    small = rank(slice_kb, "How is gout diagnosed and treated?", top_k=50, word_budget=200)
    assert 0 < small.total_words <= 200
    assert small.total_words == sum(e.words for e in small.evidence)
    assert all(e.words == len(e.text.split()) for e in small.evidence)
    large = rank(slice_kb, "How is gout diagnosed and treated?", top_k=50, word_budget=8000)
    assert large.total_words > small.total_words and len(large.evidence) > len(small.evidence)


def test_near_identical_evidence_is_deduplicated(slice_kb: KnowledgeBase) -> None:
    result = rank(
        slice_kb, "Which genetic blood tests help diagnose celiac disease?", vector_k=100, top_k=100
    )
    assert result.duplicates
    returned = {e.id for e in result.evidence}
    for duplicate in result.duplicates:
        vectors = slice_kb.vectors.get_vectors("evidence", [duplicate.id, duplicate.duplicate_of])
        same_span = duplicate.reason.startswith("same document")
        assert same_span or float(vectors[duplicate.id] @ vectors[duplicate.duplicate_of]) > DUPLICATE_COSINE
        assert duplicate.id not in returned and duplicate.duplicate_of in returned


# ----- inputs, defaults, offline features -----


def test_unknown_and_missing_candidates_are_reported(slice_kb: KnowledgeBase) -> None:
    known = topic_evidence(slice_kb, f"T:{GOUT}|treatment")[0]
    result = rank(slice_kb, "gout", candidate_ids=["E:doesnotexist", known, known], vector_k=0)
    assert result.unknown_ids == ["E:doesnotexist"]
    assert [e.id for e in result.evidence] == [known] and result.evidence[0].origin == ["candidate"]
    assert any("unknown" in w for w in result.warnings)
    empty = rank(slice_kb, "gout", vector_k=0)
    assert empty.evidence == [] and "no candidate evidence" in empty.warnings


def test_default_methods_and_breakdown(slice_kb: KnowledgeBase) -> None:
    result = rank(
        slice_kb, "Which medicines lower uric acid in gout?", hypothesis="Allopurinol and febuxostat."
    )
    assert result.parameters["methods"] == list(DEFAULT_METHODS) == ["cosine", "fragment", "bm25", "question"]
    first = result.evidence[0].scores
    assert first.fragment is not None and first.idep is None and first.mmr_penalty is None
    assert not result.features and result.parameters["features_from"] is None
    assert any("febuxostat" in f.lower() for f in result.fragments)  # Q ⊕ HO is fragmented
    assert len({e.id for e in result.evidence}) == len(result.evidence)


def test_llm_features_bring_idep_into_the_default_methods(slice_kb: KnowledgeBase) -> None:
    features = [Feature(text="urate-lowering therapy", usefulness=10), Feature(text="diet", usefulness=2)]
    with_features = rank(slice_kb, "Which medicines lower uric acid in gout?", features=features)
    assert with_features.parameters["methods"] == ["cosine", "fragment", "bm25", "question", "idep"]
    assert with_features.parameters["features_from"] == "llm"
    assert with_features.evidence[0].scores.idep is not None
    named = rank(slice_kb, "Which medicines lower uric acid in gout?", features=features, methods=["cosine"])
    assert named.parameters["methods"] == ["cosine"]  # an explicit choice is respected
    assert named.evidence[0].scores.idep is None


def test_offline_features_weight_specific_asked_and_negated(slice_kb: KnowledgeBase) -> None:
    features = offline_features(
        slice_kb, "How is gout treated when there is no fever?", "", [], ["treatment"]
    )
    by_text = {f.text.lower(): f for f in features}
    assert by_text["fever"].usefulness == 0.0  # negated in the question
    assert 0.0 < by_text["gout"].usefulness < 10.0  # specificity from how many evidence units mention it
    assert by_text["gout treatment"].usefulness == 10.0 and by_text["gout treatment"].origin == "label"
    assert any(f.origin == "fragment" and f.usefulness == 5.0 for f in features)


def test_deterministic(slice_kb: KnowledgeBase) -> None:
    first = rank(slice_kb, "How is sickle cell disease treated? No fever.", top_k=10)
    assert (
        first.model_dump()
        == rank(slice_kb, "How is sickle cell disease treated? No fever.", top_k=10).model_dump()
    )


def test_request_validation() -> None:
    with pytest.raises(ValidationError):
        EvidenceRankRequest(question="")
    with pytest.raises(ValidationError):
        EvidenceRankRequest(question="q", methods=["bm42"])
    with pytest.raises(ValidationError):
        EvidenceRankRequest(question="q", features=[{"text": "x", "usefulness": 11}])


def test_langchain_wrapper(slice_kb: KnowledgeBase) -> None:
    tool = evidence_rank_tool(slice_kb)
    assert tool.name == "evidence_rank"
    schema = tool.args_schema.model_json_schema()  # type: ignore[union-attr]
    assert {"question", "candidate_ids", "graph_scores", "features", "methods", "word_budget"} <= set(
        schema["properties"]
    )
    reply = tool.invoke({"question": "How is gout treated?", "top_k": 3, "methods": ["cosine", "mmr"]})
    result = EvidenceRankResult.model_validate(json.loads(reply))
    assert len(result.evidence) == 3 and result.parameters["methods"] == ["cosine", "mmr"]
