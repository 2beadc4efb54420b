"""``reasoning_chain`` on the tiny hand-built KB (exact chain sets, evidence ranks) and the real slice KB."""

from __future__ import annotations

import itertools
import json
from pathlib import Path
from typing import Any

import pytest

from graphs.kb import KnowledgeBase
from tests.test_algorithms import tiny_kb  # noqa: F401 - session fixture shared with the algorithm tests
from tools.reasoning_chain import (
    ReasoningChainRequest,
    ReasoningChainResult,
    chain_id,
    reasoning_chain,
    reasoning_chain_tool,
)

SLICE = Path(__file__).parent / "fixtures" / "slice"
PAIRS = json.loads((SLICE / "connected_pairs.json").read_text())["pairs"]
Edges = frozenset[tuple[str, str, str]]


def run(kb: KnowledgeBase, **kwargs: Any) -> ReasoningChainResult:
    return reasoning_chain(kb, ReasoningChainRequest(**kwargs))


def triples(
    result: ReasoningChainResult, chain_type: str | None = None
) -> set[frozenset[tuple[str, str, str]]]:
    """Each chain as the set of its (head, relation, tail) edges: comparable with hand-written sets."""
    return {
        frozenset((r.head, r.relation, r.tail) for r in c.relations)
        for c in result.chains
        if chain_type is None or c.chain_type == chain_type
    }


def edges(*items: tuple[str, str, str]) -> Edges:
    return frozenset(items)


A_TREATS_B = ("X:A", "treats", "X:B")
B_GENE_G = ("X:B", "associated_gene", "X:G")
C_GENE_G = ("X:C", "associated_gene", "X:G")
A_RESEMBLES_E = ("X:A", "resembles", "X:E")
E_ISA_C = ("X:E", "is_a", "X:C")
A_GENE_H = ("X:A", "associated_gene", "X:H")
C_GENE_H = ("X:C", "associated_gene", "X:H")
D_TREATS_A = ("X:D", "treats", "X:A")
D_TREATS_C = ("X:D", "treats", "X:C")


def test_the_three_chain_types_exactly(tiny_kb: KnowledgeBase) -> None:  # noqa: F811
    result = run(tiny_kb, entity_ids=["X:A", "X:C"], max_chains_per_pair=20)
    assert triples(result, "path") == {edges(A_RESEMBLES_E, E_ISA_C)}
    assert triples(result, "co_ancestor") == {
        edges(A_GENE_H, C_GENE_H),
        edges(A_TREATS_B, B_GENE_G, C_GENE_G),
    }
    assert triples(result, "co_occurrence") == {edges(D_TREATS_A, D_TREATS_C)}
    assert result.pairs[0].chains_found == 4 and result.pairs[0].shortest_length == 2
    texts = {c.text for c in result.chains}
    assert "alphazine -resembles-> epsilonase -is_a-> gammacyte" in texts
    assert "alphazine <-treats- deltamab -treats-> gammacyte" in texts
    assert "alphazine -treats-> betaoma -associated_gene-> geneloxin <-associated_gene- gammacyte" in texts
    ordered = [(c.length, c.hub_penalty) for c in result.chains]
    assert ordered == sorted(ordered)  # shorter first, then less hub-like


def test_k_and_chain_types_restrict_the_search(tiny_kb: KnowledgeBase) -> None:  # noqa: F811
    two_hops = run(tiny_kb, entity_ids=["X:A", "X:C"], k=2, chain_types=["co_ancestor"])
    assert triples(two_hops) == {edges(A_GENE_H, C_GENE_H)}
    assert run(tiny_kb, entity_ids=["X:A", "X:C"], k=1).chains == []


def test_hub_control_skips_high_degree_intermediates(tiny_kb: KnowledgeBase) -> None:  # noqa: F811
    result = run(tiny_kb, entity_ids=["X:A", "X:C"], degree_cap=5, max_chains_per_pair=20)
    assert edges(A_GENE_H, C_GENE_H) not in triples(result)
    assert len(triples(result)) == 3
    assert result.skipped_hubs == ["X:H"]
    assert any("hub" in w for w in result.warnings)
    with_hub_as_anchor = run(tiny_kb, entity_ids=["X:A", "X:H"], degree_cap=2, k=1)
    assert triples(with_hub_as_anchor) == {edges(A_GENE_H)}


def test_chain_ids_are_stable_hashes_of_relation_ids(tiny_kb: KnowledgeBase) -> None:  # noqa: F811
    forward = run(tiny_kb, entity_ids=["X:A", "X:C"], max_chains_per_pair=20)
    backward = run(tiny_kb, entity_ids=["X:C", "X:A", "X:C"], max_chains_per_pair=20)
    assert [c.model_dump() for c in forward.chains] == [c.model_dump() for c in backward.chains]
    for c in forward.chains:
        assert c.chain_id == chain_id(c.relation_ids) and c.chain_id.startswith("C:")
        assert c.relation_ids == [r.relation_id for r in c.relations]
        assert c.nodes[0].id != c.nodes[-1].id
        assert c.head_description and c.tail_description
    path = next(c for c in forward.chains if c.chain_type == "path")
    assert [n.id for n in path.nodes] == ["X:A", "X:E", "X:C"]  # a path reads head to tail


def test_single_anchor_returns_its_one_hop_relations(tiny_kb: KnowledgeBase) -> None:  # noqa: F811
    result = run(tiny_kb, entity_ids=["X:A"])
    expected = {A_TREATS_B, A_RESEMBLES_E, A_GENE_H, D_TREATS_A, ("X:S", "treats", "X:A")}
    assert triples(result) == {edges(t) for t in expected}
    assert {c.chain_type for c in result.chains} == {"one_hop"}
    # round-robin over relation types: the first three chains cover three different types
    assert {c.relations[0].relation for c in result.chains[:3]} == {"associated_gene", "resembles", "treats"}
    capped = run(tiny_kb, entity_ids=["X:A"], max_chains=2)
    assert len(capped.chains) == 2 and any("5 one-hop" in w for w in capped.warnings)
    treats_only = run(tiny_kb, entity_ids=["X:A"], relation_types=["treats"])
    assert triples(treats_only) == {edges(A_TREATS_B), edges(D_TREATS_A), edges(("X:S", "treats", "X:A"))}


def test_relation_type_filter_is_validated(tiny_kb: KnowledgeBase) -> None:  # noqa: F811
    result = run(tiny_kb, entity_ids=["X:A", "X:C"], relation_types=["treats", "cures"])
    assert triples(result) == {edges(D_TREATS_A, D_TREATS_C)}
    assert any("cures" in w and "treats" in w for w in result.warnings)
    nothing = run(tiny_kb, entity_ids=["X:A", "X:C"], relation_types=["cures"])
    assert nothing.chains == [] and any("no valid relation type" in w for w in nothing.warnings)


def test_unknown_isolated_and_self_looped_entities(tiny_kb: KnowledgeBase) -> None:  # noqa: F811
    result = run(tiny_kb, entity_ids=["X:A", "X:I", "NOPE:1"])
    assert result.unknown_ids == ["NOPE:1"] and result.anchors == ["X:A", "X:I"]
    assert result.chains == [] and result.pairs[0].chains_found == 0
    assert any("NOPE:1" in w for w in result.warnings) and any("X:A–X:I" in w for w in result.warnings)
    assert run(tiny_kb, entity_ids=["NOPE:1"]).warnings[-1] == "no known anchor entity: nothing to connect"
    looped = run(tiny_kb, entity_ids=["X:S", "X:A"])
    assert triples(looped) == {edges(("X:S", "treats", "X:A"))}


def test_shortest_path_with_evidence_ranked_by_algorithm_1(tiny_kb: KnowledgeBase) -> None:  # noqa: F811
    result = run(tiny_kb, entity_ids=["X:A", "X:C"], mode="shortest_path")
    assert [c.text for c in result.chains] == ["alphazine -resembles-> epsilonase -is_a-> gammacyte"]
    assert result.chains[0].chain_type == "shortest_path" and result.chains[0].pattern == "path"
    docs = tiny_kb.store.get_evidence([e.evidence_id for e in result.evidence])
    ranked = sorted(((docs[e.evidence_id].document_id, e.rank) for e in result.evidence), key=lambda x: x[1])
    assert [r for _, r in ranked] == [e.rank for e in result.evidence]  # returned in rank order
    ranked.sort(key=lambda x: (x[1], x[0]))  # within a rank, order is by evidence id (a hash)
    # round 1: edge A–E takes the front {d1 (2020, 2 path entities), d2 (2015, 3)}, not d5 (2000, 2);
    # edge E–C takes d4; node A takes d6 (mentions A only); node E has nothing left; node C takes d3
    # (2021 dominates the undated d7, d8). Round 2: edge A–E takes d5; node C takes d7 — d7 and d8 are
    # the same front point (no date, coverage 1), so one per round, in rank order. Round 3: d8.
    assert ranked == [
        ("doc:d1", 1),
        ("doc:d2", 1),
        ("doc:d4", 2),
        ("doc:d6", 3),
        ("doc:d3", 4),
        ("doc:d5", 5),
        ("doc:d7", 6),
        ("doc:d8", 7),
    ]
    by_doc = {docs[e.evidence_id].document_id: e for e in result.evidence}
    assert (
        by_doc["doc:d2"].path_coverage == 3
        and by_doc["doc:d1"].year == 2020
        and by_doc["doc:d4"].year is None
    )
    assert by_doc["doc:d1"].element == result.chains[0].relation_ids[0]
    assert by_doc["doc:d3"].element == "X:C"
    assert len(run(tiny_kb, entity_ids=["X:A", "X:C"], mode="shortest_path", max_evidence=2).evidence) == 2


def _pattern_of(source: str, path: list[list[str]]) -> tuple[str, list[bool]]:
    forward, node = [], source
    for head, _, tail in path:
        forward.append(head == node)
        node = tail if head == node else head
    flips = sum(a != b for a, b in itertools.pairwise(forward))
    kind = {0: "path", 1: "co_ancestor" if forward[0] else "co_occurrence"}.get(flips, "mixed")
    return kind, forward


@pytest.mark.parametrize("pair", PAIRS, ids=[f"{p['source_name']}-{p['target_name']}" for p in PAIRS])
def test_real_connected_pairs_are_found(slice_kb: KnowledgeBase, pair: dict[str, Any]) -> None:
    for path in (pair["path"], pair["multi_hop_path"]):
        kind, _ = _pattern_of(pair["source"], path)
        expected = edges(*(tuple(t) for t in path))
        if kind == "mixed":  # not a HyKGE chain: the shortest (undirected) path must reach it
            result = run(slice_kb, entity_ids=[pair["source"], pair["target"]], mode="shortest_path")
            assert result.chains and result.chains[0].length <= len(path)
            assert result.chains[0].pattern == "mixed" or result.chains[0].length < len(path)
            continue
        result = run(
            slice_kb,
            entity_ids=[pair["target"], pair["source"]],
            relation_types=sorted({t[1] for t in path}),
            chain_types=[kind],
            max_chains_per_pair=20,
            degree_cap=100_000,
        )
        assert expected in triples(result, kind), (kind, path)


def test_embedded_fast_path_equals_store_interface(slice_kb: KnowledgeBase) -> None:
    cases = [
        {"entity_ids": ["DOID:9352", "DOID:10763", "DOID:1485"]},
        {"entity_ids": ["DOID:9352", "DOID:10763", "DOID:1485"], "mode": "shortest_path"},
        {"entity_ids": ["DOID:14330", "DOID:12858", "DOID:10652"], "degree_cap": 20, "k": 3},
        {"entity_ids": ["DOID:7148"], "relation_types": ["treats", "palliates"]},
    ]
    for case in cases:
        request = ReasoningChainRequest(**case)  # type: ignore[arg-type]
        fast = reasoning_chain(slice_kb, request)
        slow = reasoning_chain(slice_kb, request, fast_path=False)
        assert fast.model_dump() == slow.model_dump()
        assert fast.chains


def test_langchain_tool_returns_json(slice_kb: KnowledgeBase) -> None:
    tool = reasoning_chain_tool(slice_kb)
    assert tool.name == "reasoning_chain"
    fields = set(tool.args)
    assert {"entity_ids", "mode", "k", "chain_types", "relation_types", "max_chains", "degree_cap"} <= fields
    out = json.loads(tool.invoke({"entity_ids": ["DOID:9352", "DOID:10763"], "max_chains": 3}))
    assert len(out["chains"]) == 3 and out["chains"][0]["chain_id"].startswith("C:")
    assert tool.args["k"]["maximum"] == 4 and tool.args["degree_cap"]["default"] == 200
    unknown = json.loads(tool.invoke({"entity_ids": ["NOPE:1"]}))
    assert unknown["unknown_ids"] == ["NOPE:1"] and unknown["chains"] == []
