"""Every retrieval system and the gold resolution on the real test-slice KB (tests/conftest.py)."""

from __future__ import annotations

import pytest

from evals.adapters import TWIN_SEPARATOR, as_slots, with_twins
from evals.baselines.base import EvidencePool
from evals.baselines.bm25 import BM25Index, tokenize
from evals.baselines.registry import SYSTEMS, expand, make_system
from evals.datasets.registry import get_dataset
from evals.scoring import first_ids, resolve_gold, slot_metrics, units
from graphs.kb import KnowledgeBase
from tools.evidence_rank import Duplicate

QUESTION = "my dad was just told he has gout, what can he take for the pain?"


@pytest.fixture(scope="module")
def pool(slice_kb: KnowledgeBase) -> EvidencePool:
    return EvidencePool(slice_kb)


def test_pool_enumerates_every_evidence_unit(slice_kb: KnowledgeBase, pool: EvidencePool) -> None:
    assert len(pool.ids) == slice_kb.store.counts()["evidence"] == len(set(pool.ids))
    assert len(pool.texts) == len(pool.ids) and pool.vectors.shape == (len(pool.ids), slice_kb.embedder.dim)
    assert sum(len(v) for v in pool.by_document.values()) == len(pool.ids)


@pytest.mark.parametrize("name", SYSTEMS)
def test_system_returns_known_ids_deterministically(
    name: str, slice_kb: KnowledgeBase, pool: EvidencePool
) -> None:
    system = make_system(name, slice_kb, pool)
    first = system.retrieve(QUESTION, 10)
    assert len(first) <= 10 and len(set(first)) == len(first)
    assert {i for entry in first for i in entry.split(TWIN_SEPARATOR)} <= set(pool.records)
    assert system.retrieve(QUESTION, 10) == first


def test_text_and_graph_systems_find_the_gout_treatment(slice_kb: KnowledgeBase, pool: EvidencePool) -> None:
    gold_documents = {"medquad:NIHSeniorHealth_0000028-4", "medquad:NIHSeniorHealth_0000028-15"}
    for name in ("vector", "evigraph"):
        found = make_system(name, slice_kb, pool).retrieve(QUESTION, 10)
        ids = [i for entry in found for i in entry.split(TWIN_SEPARATOR)]  # a kept passage and its twins
        assert {pool.records[i].document_id for i in ids} & gold_documents, name


def test_bm25_index_ranks_by_score_then_id() -> None:
    index = BM25Index(["x", "y", "z"], ["gout pain relief", "gout gout pain", "unrelated text"])
    hits = index.search("Gout pain?", 5)
    assert [i for i, _ in hits] == ["y", "x"]  # "z" shares no token: not returned
    assert tokenize("What is the GOUT's cause?") == ["gout", "s", "cause"]


def test_expand_system_lists() -> None:
    assert expand("all") == list(SYSTEMS)
    assert "evigraph" not in expand("baselines") and "bm25" in expand("baselines")
    assert expand("vector,bm25,vector") == ["vector", "bm25"]
    with pytest.raises(ValueError):
        expand("bm25,unknown")


def test_gold_resolution_uses_the_hinted_paragraph(pool: EvidencePool) -> None:
    dataset = get_dataset("medquad-consumer-ci").load(None)
    by_id = {q.id: q for q in dataset.questions}
    gold = resolve_gold(dataset, pool, by_id["mqc-001"])
    assert gold is not None and gold.hint_misses == 0
    assert gold.documents == {"medquad:NIHSeniorHealth_0000028-4", "medquad:NIHSeniorHealth_0000028-15"}
    hinted = [pool.records[p] for p in gold.passages]
    assert all("gout" in e.text.lower() for e in hinted)
    every_unit = {u for d in gold.documents for u in pool.by_document[d]}
    assert gold.passages <= every_unit
    # mqc-002 names GARD/GHR and NHLBI pairs; only those in the slice KB count
    hemo = resolve_gold(dataset, pool, by_id["mqc-002"])
    assert hemo is not None and "medquad:NHLBI_0000067-3" not in hemo.documents
    first = sorted(gold.passages)[0]
    assert units(dataset, pool, [first], "document") == [pool.records[first].document_id]
    assert units(dataset, pool, [first], "passage") == [first]


def test_twins_are_credited_right_after_the_passage_they_repeat() -> None:
    ranked = [("E:a", 0.9), ("E:b", 0.8), ("E:c", 0.5)]
    duplicates = [
        Duplicate(id="E:b2", duplicate_of="E:b", reason="cosine > 0.97"),
        Duplicate(id="E:a2", duplicate_of="E:a", reason="same document, overlapping span"),
        Duplicate(id="E:z2", duplicate_of="E:z", reason="cosine > 0.97"),  # its passage was cut: not credited
    ]
    assert with_twins(ranked, duplicates) == [
        ("E:a", 0.9),
        ("E:a2", 0.9),
        ("E:b", 0.8),
        ("E:b2", 0.8),
        ("E:c", 0.5),
    ]
    assert with_twins(ranked, []) == ranked


def test_twins_fold_into_one_slot_and_cost_no_top_k_place(
    slice_kb: KnowledgeBase, pool: EvidencePool
) -> None:
    """Issue 11: a folded twin is scored in its kept passage's slot, so the top K holds K passages."""
    credited = make_system("evigraph", slice_kb, pool).retrieve(QUESTION, 30)
    strict = make_system("evigraph-strict-ids", slice_kb, pool).retrieve(QUESTION, 30)
    assert first_ids(credited) == strict and len(strict) == 30


def test_slot_metrics_credit_every_twin_in_one_position(pool: EvidencePool) -> None:
    dataset = get_dataset("bioasq-ci").load(1)
    ranked = [
        x
        for x, _ in as_slots(
            [("E:a", 0.9), ("E:b", 0.8)], [Duplicate(id="E:a2", duplicate_of="E:a", reason="r")]
        )
    ]
    assert ranked == ["E:a\tE:a2", "E:b"]
    plain = slot_metrics(dataset, pool, ["E:a", "E:a2", "E:b"], "passage", {"E:a2", "E:b"}, [2])
    slots = slot_metrics(dataset, pool, ranked, "passage", {"E:a2", "E:b"}, [1, 2])
    assert plain["recall@2"] == 0.5  # the twin took a place: E:b fell out of the top 2
    assert slots["recall@2"] == 1.0 and slots["recall@1"] == 0.5 and slots["success@1"] == 1.0
    assert slots["mrr"] == 1.0
