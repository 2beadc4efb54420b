"""``hypergraph_walk`` on the real slice KB and the tiny hand-built KB (tests/test_algorithms.py)."""

from __future__ import annotations

import gc
import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import graphs.algorithms.views as algorithms
from graphs.algorithms.ppr import bipartite_csr, exact_ppr
from graphs.kb import KnowledgeBase
from graphs.stores.embedded import EmbeddedGraphStore
from tests.test_algorithms import tiny_kb  # noqa: F401 - session fixture shared with the algorithm tests
from tools.hypergraph_walk import (
    HypergraphWalkRequest,
    HypergraphWalkResult,
    hypergraph_walk,
    hypergraph_walk_tool,
)

DIABETES_AND_HYPERTENSION = ["DOID:9352", "DOID:10763"]


def walk(kb: KnowledgeBase, **kwargs: Any) -> HypergraphWalkResult:
    return hypergraph_walk(kb, HypergraphWalkRequest(**kwargs))


def test_walk_ranks_topics_by_visit_frequency(slice_kb: KnowledgeBase) -> None:
    result = walk(slice_kb, entity_ids=DIABETES_AND_HYPERTENSION, beta=64)
    assert len(result.topics) == 10 and result.stats["walks"] == 128  # β walks per start entity
    counts = [t.visit_count for t in result.topics]
    assert counts == sorted(counts, reverse=True)  # type: ignore[type-var]
    for t in result.topics:
        assert t.score == pytest.approx(t.visit_count / 128)  # type: ignore[operator]
        assert t.ppr_mass is None and t.topic_id == f"T:{t.entity_id}|{t.label}"
    # the start entities' own topics carry weight 1 (keyword entity), so one of them is always reached
    assert {t.entity_id for t in result.topics} & set(DIABETES_AND_HYPERTENSION)


def test_walk_is_reproducible_by_seed(slice_kb: KnowledgeBase) -> None:
    first = walk(slice_kb, entity_ids=DIABETES_AND_HYPERTENSION, seed=11)
    again = walk(slice_kb, entity_ids=DIABETES_AND_HYPERTENSION, seed=11)
    other = walk(slice_kb, entity_ids=DIABETES_AND_HYPERTENSION, seed=12)
    assert first.model_dump() == again.model_dump()

    def visits(r: HypergraphWalkResult) -> list[tuple[str, int | None]]:
        return [(t.topic_id, t.visit_count) for t in r.topics] + [
            (e.entity_id, e.visit_count) for e in r.entities_reached
        ]

    assert visits(first) != visits(other)


def test_topics_carry_their_evidence_ids(slice_kb: KnowledgeBase) -> None:
    result = walk(slice_kb, entity_ids=DIABETES_AND_HYPERTENSION, max_evidence_per_topic=3)
    records = slice_kb.store.get_topics([t.topic_id for t in result.topics])
    for t in result.topics:
        assert t.evidence_count == len(records[t.topic_id].evidence_ids)
        assert t.evidence_ids == list(records[t.topic_id].evidence_ids[:3])
    assert any(t.evidence_count > 3 for t in result.topics)


def test_reached_entities_exclude_the_start_entities(slice_kb: KnowledgeBase) -> None:
    result = walk(slice_kb, entity_ids=DIABETES_AND_HYPERTENSION, n_entities=15)
    ids = [e.entity_id for e in result.entities_reached]
    assert len(ids) == 15 and not set(ids) & set(DIABETES_AND_HYPERTENSION)
    scores = [e.score for e in result.entities_reached]
    assert scores == sorted(scores, reverse=True)
    assert all(e.name for e in result.entities_reached)


def test_label_filter_keeps_only_those_labels(slice_kb: KnowledgeBase) -> None:
    result = walk(slice_kb, entity_ids=DIABETES_AND_HYPERTENSION, labels=["Treatment"], n_t=5)
    assert result.topics and {t.label for t in result.topics} == {"treatment"}
    none = walk(slice_kb, entity_ids=DIABETES_AND_HYPERTENSION, labels=["astrology"])
    assert none.topics == [] and any("astrology" in w for w in none.warnings)


def test_ppr_mode_matches_exact_pagerank(slice_kb: KnowledgeBase) -> None:
    result = walk(slice_kb, entity_ids=DIABETES_AND_HYPERTENSION, mode="ppr", epsilon=1e-8, n_t=20)
    assert isinstance(slice_kb.store, EmbeddedGraphStore)
    adj = slice_kb.store.adjacency
    index = adj.entity_index()
    exact = exact_ppr(
        bipartite_csr(adj.et_csr, adj.te_csr), np.array([index[i] for i in DIABETES_AND_HYPERTENSION])
    )
    n_e = len(adj.entity_ids)
    by_topic = {str(t): exact[n_e + j] for j, t in enumerate(adj.topic_ids.tolist())}
    for t in result.topics:
        assert t.ppr_mass == pytest.approx(by_topic[t.topic_id], abs=1e-6)
        assert t.visit_count is None
    best = sorted(by_topic, key=lambda t: -by_topic[t])[:5]
    assert [t.topic_id for t in result.topics[:5]] == best
    assert result.stats["converged"] is True and float(result.stats["residual"]) < 1e-3


def test_embedded_fast_path_equals_store_interface(slice_kb: KnowledgeBase) -> None:
    cases: list[dict[str, Any]] = [
        {"entity_ids": DIABETES_AND_HYPERTENSION},
        {"entity_ids": ["DOID:1485", "DOID:14330", "DOID:10652"], "alpha": 6, "beta": 32, "seed": 5},
        {"entity_ids": DIABETES_AND_HYPERTENSION, "mode": "ppr"},
        {"entity_ids": ["DOID:2841", "DOID:8893"], "mode": "ppr", "labels": ["treatment"], "n_t": 3},
    ]
    for case in cases:
        request = HypergraphWalkRequest(**case)
        fast = hypergraph_walk(slice_kb, request)
        slow = hypergraph_walk(slice_kb, request, fast_path=False)
        assert fast.topics and fast.model_dump() == slow.model_dump()


def test_tiny_kb_topics_and_exact_pagerank(tiny_kb: KnowledgeBase) -> None:  # noqa: F811
    result = walk(tiny_kb, entity_ids=["X:A"], beta=200)
    # A's topics are A|treatment (its own documents) and B|treatment (d6 mentions alphazine), weight 1 each
    assert {t.topic_id for t in result.topics[:2]} == {"T:X:A|treatment", "T:X:B|treatment"}
    assert sum(t.visit_count or 0 for t in result.topics[:2]) >= 200
    treatment = walk(tiny_kb, entity_ids=["X:A"], labels=["treatment"])
    assert {t.topic_id for t in treatment.topics} == {"T:X:A|treatment", "T:X:B|treatment"}
    for fast_path in (True, False):
        ppr = hypergraph_walk(
            tiny_kb,
            HypergraphWalkRequest(entity_ids=["X:A", "X:C"], mode="ppr", epsilon=1e-9),
            fast_path=fast_path,
        )
        assert isinstance(tiny_kb.store, EmbeddedGraphStore)
        adj = tiny_kb.store.adjacency
        index = adj.entity_index()
        exact = exact_ppr(bipartite_csr(adj.et_csr, adj.te_csr), np.array([index["X:A"], index["X:C"]]))
        topics = {str(t): j + len(adj.entity_ids) for j, t in enumerate(adj.topic_ids.tolist())}
        assert {t.topic_id for t in ppr.topics} == set(topics)
        for t in ppr.topics:
            assert t.ppr_mass == pytest.approx(exact[topics[t.topic_id]], abs=1e-7)


def test_unknown_and_isolated_ids_are_reported(tiny_kb: KnowledgeBase) -> None:  # noqa: F811
    result = walk(tiny_kb, entity_ids=["X:A", "X:I", "NOPE:1"])
    assert result.unknown_ids == ["NOPE:1"] and result.isolated_ids == ["X:I"]
    assert result.start_entities == ["X:A", "X:I"] and result.topics
    assert any("NOPE:1" in w for w in result.warnings) and any("X:I" in w for w in result.warnings)
    alone = walk(tiny_kb, entity_ids=["X:I"], mode="ppr")
    assert alone.topics == [] and alone.entities_reached == []
    assert any("nothing to walk from" in w for w in alone.warnings)
    nobody = walk(tiny_kb, entity_ids=["NOPE:1", "NOPE:2"])
    assert nobody.unknown_ids == ["NOPE:1", "NOPE:2"] and nobody.topics == []


def test_request_ranges_are_validated() -> None:
    with pytest.raises(ValueError):
        HypergraphWalkRequest(entity_ids=[])
    with pytest.raises(ValueError):
        HypergraphWalkRequest(entity_ids=["X:A"], alpha=0)
    with pytest.raises(ValueError):
        HypergraphWalkRequest(entity_ids=["X:A"] * 51)
    assert HypergraphWalkRequest(entity_ids=["X:A"]).alpha == 4


def test_langchain_tool_returns_json(slice_kb: KnowledgeBase) -> None:
    tool = hypergraph_walk_tool(slice_kb)
    assert tool.name == "hypergraph_walk"
    assert {"entity_ids", "mode", "alpha", "beta", "n_t", "seed", "restart", "epsilon", "labels"} <= set(
        tool.args
    )
    out = json.loads(tool.invoke({"entity_ids": DIABETES_AND_HYPERTENSION, "n_t": 4, "mode": "ppr"}))
    assert len(out["topics"]) == 4 and out["parameters"]["mode"] == "ppr"
    assert all(t["evidence_ids"] for t in out["topics"])


def test_a_closed_kb_leaves_no_cached_graph_view_behind(slice_kb_root: Path) -> None:
    # Earlier tests' KBs may still be waiting for the collector; counting the whole cache raced with them
    # (CI saw one collected mid-test), so follow this KB's own entry.
    gc.collect()
    kb = KnowledgeBase.open(slice_kb_root)
    view = algorithms.bipartite_view(kb.store)
    key = id(kb.store.adjacency)  # type: ignore[attr-defined]
    assert key in algorithms._EMBEDDED and view.node_ids(np.array([0]))
    kb.close()
    del kb, view
    gc.collect()
    assert key not in algorithms._EMBEDDED  # the cache does not keep the adjacency alive
