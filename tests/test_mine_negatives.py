"""The search encoder's mined negatives (evals/mine_negatives.py) never use evaluation data, and training
prefers them only when asked (evals/train_retriever.py ``--mined``).

Real rows: the shipped BioASQ snippets and the real evaluation exclusions (evals/reader_data.py
``exclusions``); the ranking is made up so that evaluation snippets sit where a miner would take them.
"""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import pytest

from evals.mine_negatives import FROM_RANK, TO_RANK, usable_negatives
from evals.reader_data import Exclusions, exclusions
from evals.train_retriever import triplets
from graphs.model.settings import load_settings
from tests.conftest import jsonl_rows

SNIPPETS = Path(__file__).resolve().parent.parent / "data" / "corpus" / "bioasq_snippets.jsonl.gz"


@pytest.fixture(scope="module")
def excluded() -> Exclusions:
    return exclusions(load_settings())


@pytest.fixture(scope="module")
def snippets() -> list[dict[str, Any]]:
    return list(jsonl_rows(SNIPPETS))


def test_no_evaluation_snippet_or_document_is_ever_a_negative(
    excluded: Exclusions, snippets: list[dict[str, Any]]
) -> None:
    evaluation = [i for i, s in enumerate(snippets) if s["id"] in excluded.snippet_ids]
    same_document = [
        i
        for i, s in enumerate(snippets)
        if str(s["pmid"]) in excluded.pmids and s["id"] not in excluded.snippet_ids
    ]
    other = [
        i
        for i, s in enumerate(snippets)
        if s["id"] not in excluded.snippet_ids and str(s["pmid"]) not in excluded.pmids
    ]
    assert len(evaluation) > 40 and same_document and len(other) > 40
    # evaluation snippets and their documents' other snippets take the ranks a miner reads first
    ranked = other[:FROM_RANK] + evaluation[:20] + same_document[:5] + other[FROM_RANK : FROM_RANK + 40]
    chosen = usable_negatives(ranked, snippets, set(), set(), set(), excluded)
    assert chosen, "the clean snippets inside the mined ranks are used"
    assert not {snippets[i]["id"] for i in chosen} & excluded.snippet_ids
    assert not {str(snippets[i]["pmid"]) for i in chosen} & excluded.pmids
    assert set(chosen) <= set(ranked[FROM_RANK:TO_RANK])
    # the passage reranker's window starts at the very top (evals/rerank_data.py): the same exclusions hold
    top = evaluation[:20] + same_document[:5] + other[:5]
    from_top = usable_negatives(top, snippets, set(), set(), set(), excluded, window=(0, 30))
    assert [snippets[i]["id"] for i in from_top] == [snippets[i]["id"] for i in other[:5]]


def test_a_questions_own_gold_and_the_very_top_are_left_out(
    excluded: Exclusions, snippets: list[dict[str, Any]]
) -> None:
    clean = [
        i
        for i, s in enumerate(snippets)
        if s["id"] not in excluded.snippet_ids and str(s["pmid"]) not in excluded.pmids
    ][:60]
    gold, same_pmid, positive = clean[FROM_RANK], clean[FROM_RANK + 1], clean[FROM_RANK + 2]
    chosen = usable_negatives(
        clean,
        snippets,
        {snippets[gold]["id"]},
        {str(snippets[same_pmid]["pmid"])},
        {snippets[positive]["text"]},
        excluded,
    )
    assert gold not in chosen and positive not in chosen
    assert all(str(snippets[i]["pmid"]) != str(snippets[same_pmid]["pmid"]) for i in chosen)
    assert not set(chosen) & set(clean[:FROM_RANK]), "the encoder's first ranks may be unlabelled answers"
    assert not set(chosen) & set(clean[TO_RANK:])


def test_training_prefers_mined_negatives_only_when_asked(tmp_path: Path) -> None:
    pairs = tmp_path / "pairs.jsonl"
    rows = [
        {"source": "bioasq", "qid": "q1", "question": "Q1?", "passage": "gold", "label": 1, "split": "train"},
        {"source": "bioasq", "qid": "q1", "question": "Q1?", "passage": "bm25", "label": 0, "split": "train"},
        {
            "source": "bioasq",
            "qid": "q1",
            "question": "Q1?",
            "passage": "mined",
            "label": 0,
            "split": "train",
        },
        {
            "source": "bioasq",
            "qid": "q2",
            "question": "Q2?",
            "passage": "gold2",
            "label": 1,
            "split": "train",
        },
        {
            "source": "bioasq",
            "qid": "q2",
            "question": "Q2?",
            "passage": "bm25-2",
            "label": 0,
            "split": "train",
        },
        {"source": "bioasq", "qid": "q3", "question": "Q3?", "passage": "dev", "label": 1, "split": "dev"},
    ]
    rows[2]["mined"] = True
    pairs.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    with_mined = {t[2]: t[3] for _ in range(20) for t in triplets(pairs, random.Random(_), mined=True)}
    assert with_mined == {"gold": "mined", "gold2": "bm25-2"}, "a question without mined ones keeps its own"
    without = {t[3] for seed in range(20) for t in triplets(pairs, random.Random(seed)) if t[2] == "gold"}
    assert without == {"bm25", "mined"}, "without --mined every negative of the question may be drawn"
