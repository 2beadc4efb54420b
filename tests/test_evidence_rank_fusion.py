"""evidence_rank's BM25 / question-index candidates and query-dependent fusion, on the real slice KB, plus
bad input: stop words only, punctuation, a 50,000-character question, other scripts."""

from __future__ import annotations

import pytest

from graphs.kb import KnowledgeBase
from tools.evidence_rank import EvidenceRankRequest, EvidenceRankResult, evidence_rank
from tools.fusion import (
    LEXICAL_BASE,
    LEXICAL_MAX,
    LEXICAL_SLOPE,
    LEXICAL_WHEN_QUESTIONS,
    MIN_FRAGMENTS,
    QUESTION_WEIGHT,
    QueryFeatures,
    fusion_weights,
)


def rank(kb: KnowledgeBase, question: str, **options: object) -> EvidenceRankResult:
    return evidence_rank(kb, EvidenceRankRequest(question=question, **options))


def test_weights_grow_with_rarity_and_vanish_without_words() -> None:
    def weights(
        rarity: float, tokens: int = 5, fragments: int = 1, questions: bool = False
    ) -> tuple[float, ...]:
        w = fusion_weights(QueryFeatures(rarity, tokens, 0, fragments, questions))
        return w.lexical, w.question, float(w.use_fragments)

    assert (
        weights(0.0)[0] == LEXICAL_BASE == weights(0.5)[0] < weights(0.8)[0] < weights(1.0)[0] <= LEXICAL_MAX
    )
    assert weights(1.0)[0] == pytest.approx(LEXICAL_BASE + LEXICAL_SLOPE)
    assert weights(0.9, questions=True)[0] == pytest.approx(weights(0.9)[0] * LEXICAL_WHEN_QUESTIONS)
    assert weights(0.3, questions=True)[1] == QUESTION_WEIGHT and weights(0.3)[1] == 0.0
    assert weights(0.9, tokens=0)[:2] == (0.0, 0.0)
    assert weights(0.5, fragments=0)[2] == 0.0 and weights(0.5, fragments=MIN_FRAGMENTS)[2] == 1.0


def test_a_differential_is_not_scored_by_the_question_index_and_keeps_its_lexical_weight() -> None:
    """A page's question names its subject; a differential's subject is unknown, so the index only matched
    the named findings' pages ("What are the treatments for Cough?" for a child's barking cough and stridor:
    evals/reports/differential_retrieval.md)."""
    plain = fusion_weights(QueryFeatures(0.6, 12, 2, 2, True, True))
    differential = fusion_weights(QueryFeatures(0.6, 12, 2, 2, True, True, differential=True))
    assert plain.question_dense > 0.0
    assert differential.question == differential.question_dense == 0.0
    assert differential.lexical == plain.lexical and differential.use_fragments == plain.use_fragments


def test_bm25_and_question_candidates_join_and_are_scored(slice_kb: KnowledgeBase) -> None:
    result = rank(slice_kb, "What is (are) Breast Cancer ?", top_k=10)
    origins = {o for e in result.evidence for o in e.origin}
    assert {"lexical", "question"} <= origins
    top = result.evidence[0]
    assert top.scores.bm25 is not None and top.scores.question is not None and top.scores.question > 0
    assert "breast" in top.title.lower()
    fusion = result.parameters["fusion"]  # the query matches a KB question: BM25 weight scaled down
    assert fusion["lexical_weight"] <= LEXICAL_MAX * LEXICAL_WHEN_QUESTIONS
    assert fusion["question_weight"] == QUESTION_WEIGHT


def test_without_lexical_parts_the_rank_is_the_semantic_one(slice_kb: KnowledgeBase) -> None:
    off = rank(
        slice_kb, "gout pain medicine", lexical_k=0, question_k=0, lexical_weight=0.0, question_weight=0.0
    )
    assert all(set(e.origin) <= {"candidate", "vector"} for e in off.evidence)
    relevance = [e.scores.relevance for e in off.evidence]
    assert relevance == sorted(relevance, reverse=True)


def test_a_rare_literal_token_is_found_by_bm25(slice_kb: KnowledgeBase) -> None:
    # a word that occurs in few passages of the slice: BM25 ranks a passage holding it first
    hits = slice_kb.lexical.search("radium-223", 3)
    assert hits
    result = rank(slice_kb, "radium-223", top_k=5)
    assert hits[0][0] in {e.id for e in result.evidence}
    assert result.parameters["fusion"]["rarity"] > 0.5
    assert result.parameters["fusion"]["lexical_weight"] > LEXICAL_BASE  # no KB question matched: BM25 counts


@pytest.mark.parametrize("question", ["the of and what is", "?!?! ... ;;", "¿¿ —— !!"])
def test_stop_words_or_punctuation_only_say_so(slice_kb: KnowledgeBase, question: str) -> None:
    result = rank(slice_kb, question, top_k=3)
    assert any("no searchable words" in w for w in result.warnings)
    assert result.parameters["fusion"]["lexical_weight"] == 0.0


def test_a_50000_character_question_is_cut_with_a_warning(slice_kb: KnowledgeBase) -> None:
    result = rank(slice_kb, "gout treatment allopurinol " * 1900, top_k=3)
    assert any("truncated from" in w for w in result.warnings) and result.evidence


def test_non_ascii_scripts_rank_without_error(slice_kb: KnowledgeBase) -> None:
    result = rank(slice_kb, "痛风怎么治疗？ подагра лечение", top_k=3)
    assert len(result.evidence) == 3  # dense candidates still answer; BM25 simply finds no shared token
    assert not any("no searchable words" in w for w in result.warnings)
