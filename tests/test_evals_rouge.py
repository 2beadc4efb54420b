"""ROUGE-2 / ROUGE-SU4 (BioASQ phase B) on hand-counted examples: clipped n-gram and skip-bigram overlap."""

from __future__ import annotations

import pytest

from evals.answer_eval import plain
from evals.metrics.answers import exact_hit, exact_hit_lenient
from evals.metrics.rouge import rouge_2, rouge_su4


def test_rouge_2_counts_shared_bigrams() -> None:
    score = rouge_2("the cat sat on the mat", "The cat sat on a mat.")
    assert score.precision == score.recall == score.f1 == pytest.approx(0.6)  # 3 of 5 bigrams each way
    assert rouge_2("", "anything at all").f1 == 0.0


def test_rouge_su4_adds_unigrams_and_skip_bigrams_up_to_four_apart() -> None:
    score = rouge_su4("a b", "a c b")  # cand {a, b, a-b}; ref {a, c, b, a-c, a-b, c-b}
    assert score.precision == pytest.approx(1.0) and score.recall == pytest.approx(0.5)
    assert score.f1 == pytest.approx(2 / 3)
    far = "a x1 x2 x3 x4 x5 b"  # a and b are 6 apart: no a-b skip-bigram
    assert rouge_su4("a b", far).precision == pytest.approx(2 / 3)


def test_the_exact_answer_check_reads_synonyms_on_word_boundaries() -> None:
    block = plain(["- **Drugs the KG lists for gout:** Colchicine [C:1] (Hetionet)", "- NSAIDs help [E:2]"])
    assert block == "Drugs the KG lists for gout: Colchicine  (Hetionet) NSAIDs help"
    assert exact_hit(block, [["colchicine", "Colcrys"]]) and exact_hit(block, [["x"], ["nsaids"]])
    assert not exact_hit(block, [["NSAID"]])  # "NSAID" inside "NSAIDs" is not the answer's word


def test_the_lenient_answer_check_ignores_punctuation_and_spacing_only() -> None:
    assert exact_hit_lenient("a herd immunity exceeding 95% is required", [["95 %"]])
    assert not exact_hit("a herd immunity exceeding 95% is required", [["95 %"]])  # the strict one differs
    tams = [["Tumor Associated Macrophages"]]
    assert exact_hit_lenient("Tumor-associated macrophages (TAMs) promote", tams)
    assert not exact_hit_lenient("uc.4540 is", [["uc.454"]])  # still whole words
    assert not exact_hit_lenient("NSAIDs help", [["NSAID"]]) and not exact_hit_lenient("anything", [[""]])
