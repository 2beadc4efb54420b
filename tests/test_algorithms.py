"""Graph algorithms (graphs/algorithms/{ppr,paths}.py) on hand-built arrays, a tiny real KB and the slice KB.

The tiny KB is built with the real builder from TSV/JSONL written here (real components); its graph is small
enough that every chain and every Pareto rank can be worked out by hand (see ``TINY_EDGES``).
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
import scipy.sparse as sp

from graphs.algorithms.paths import (
    ChainSearch,
    CSRTypedRows,
    best_candidates,
    concat_chains,
    pareto_front,
    prioritise,
)
from graphs.algorithms.ppr import (
    CSRRows,
    WeightedRows,
    bipartite_csr,
    exact_ppr,
    push_ppr,
    quantise,
    random_walks,
    visit_frequency,
)
from graphs.algorithms.views import bipartite_view, typed_view
from graphs.building.builder import BuildConfig, build_kb
from graphs.kb import KnowledgeBase
from graphs.stores.embedded import EmbeddedGraphStore

TINY_NODES = [
    ("X:A", "alphazine", "Compound"),
    ("X:B", "betaoma", "Disease"),
    ("X:C", "gammacyte", "Disease"),
    ("X:D", "deltamab", "Compound"),
    ("X:E", "epsilonase", "Gene"),
    ("X:G", "geneloxin", "Gene"),
    ("X:H", "hubbertine", "Gene"),
    ("X:S", "selfolate", "Compound"),
    ("X:I", "isolatum", "Disease"),
    *[(f"X:F{i}", f"fillerdrug{i}", "Compound") for i in range(1, 6)],
]
TINY_EDGES = [
    ("X:A", "treats", "X:B"),  # e1
    ("X:B", "associated_gene", "X:G"),  # e2
    ("X:C", "associated_gene", "X:G"),  # e3
    ("X:D", "treats", "X:B"),  # e4
    ("X:D", "treats", "X:C"),  # e5
    ("X:A", "resembles", "X:E"),  # e6
    ("X:E", "is_a", "X:C"),  # e7
    ("X:A", "associated_gene", "X:H"),  # e8
    ("X:C", "associated_gene", "X:H"),  # e9
    *[(f"X:F{i}", "binds_gene", "X:H") for i in range(1, 6)],  # H: degree 7, a hub when degree_cap < 7
    ("X:D", "treats", "X:A"),  # e15
    ("X:S", "interacts_with", "X:S"),  # self-loop
    ("X:S", "treats", "X:A"),
]
"""Between anchors A and C within 3 hops (worked out by hand):
path A→E→C; co-ancestor A→H←C and A→B→G←C; co-occurrence A←D→C. A→B←D→C is mixed (not a HyKGE chain)."""

TINY_DOCS = [
    {"id": "d1", "date": "2020-05-01", "focus": "alphazine", "label": "treatment",
     "text": "Alphazine is given together with epsilonase in adults."},
    {"id": "d2", "date": "2015-01-01", "focus": "alphazine", "label": "treatment",
     "text": "Alphazine acts on epsilonase, which matters in gammacyte."},
    {"id": "d3", "date": "2021-03-03", "focus": "gammacyte", "label": "symptoms",
     "text": "Gammacyte presents with fatigue and pallor."},
    {"id": "d4", "date": "", "focus": "epsilonase", "label": "overview",
     "text": "Epsilonase is raised in gammacyte."},
    {"id": "d5", "date": "2000-01-01", "focus": "alphazine", "label": "treatment",
     "text": "Older reports combined alphazine with epsilonase."},
    {"id": "d6", "date": "2019-01-01", "focus": "betaoma", "label": "treatment",
     "text": "Betaoma responds to alphazine and to deltamab."},
    {"id": "d7", "date": "", "focus": "gammacyte", "label": "causes",
     "text": "Gammacyte is usually inherited."},
    {"id": "d8", "date": "", "focus": "gammacyte", "label": "causes",
     "text": "Gammacyte can also be acquired."},
]  # fmt: skip


def triple(head: str, relation: str, tail: str) -> str:
    return f"{head} -{relation}-> {tail}"


def write_tiny_sources(directory: Path) -> BuildConfig:
    """TSV (unified KG format) and JSONL (generic documents) for the tiny KB, and its build config."""
    kg = directory / "kg"
    kg.mkdir(parents=True, exist_ok=True)
    (kg / "nodes.tsv").write_text(
        "node_id\tname\ttype\n" + "".join(f"{i}\t{n}\t{t}\n" for i, n, t in TINY_NODES),
        encoding="utf-8",
    )
    (kg / "edges.tsv").write_text(
        "source_id\trelation\ttarget_id\n" + "".join(f"{h}\t{r}\t{t}\n" for h, r, t in TINY_EDGES),
        encoding="utf-8",
    )
    docs = directory / "docs.jsonl"
    docs.write_text(
        "".join(json.dumps({**d, "title": f"Report {d['id']}", "source": "test"}) + "\n" for d in TINY_DOCS),
        encoding="utf-8",
    )
    return BuildConfig(kg_sources=[(kg, "unified")], corpus_sources=[(docs, None)], name="tiny")


_TINY: dict[str, KnowledgeBase] = {}


@pytest.fixture(scope="session")
def tiny_kb(tmp_path_factory: pytest.TempPathFactory) -> KnowledgeBase:
    """The tiny KB, built once per session even though several test modules import this fixture."""
    if "kb" not in _TINY:
        root = tmp_path_factory.mktemp("tiny-kb")
        build_kb(root / "kb", write_tiny_sources(root / "src"))
        _TINY["kb"] = KnowledgeBase.open(root / "kb")
    return _TINY["kb"]


# ----- bipartite graph: walks and PageRank -------------------------------------------------------------
def random_bipartite(seed: int, n_e: int = 300, n_t: int = 200, edges: int = 2000) -> sp.csr_matrix:
    rng = np.random.default_rng(seed)
    et = sp.csr_matrix(
        (rng.random(edges) + 0.01, (rng.integers(0, n_e, edges), rng.integers(0, n_t, edges))),
        shape=(n_e, n_t),
    )
    et.sum_duplicates()
    et.sort_indices()
    return et


def test_bipartite_csr_is_symmetric_with_topics_offset() -> None:
    et = random_bipartite(0)
    a = bipartite_csr(et)
    assert a.shape == (500, 500)
    assert abs(a - a.T).max() == 0
    assert a[:300, :300].nnz == 0 and a[300:, 300:].nnz == 0
    np.testing.assert_array_equal(a[:300, 300:].toarray(), et.toarray())


def test_push_ppr_matches_exact_ppr_on_a_random_graph() -> None:
    a = bipartite_csr(random_bipartite(1))
    seeds = np.array([0, 5, 7])
    exact = exact_ppr(a, seeds, restart=0.2)
    for eps in (1e-6, 1e-8):
        res = push_ppr(CSRRows(a), seeds, restart=0.2, epsilon=eps)
        approx = np.zeros(a.shape[0])
        approx[res.nodes] = res.mass
        l1 = np.abs(approx - exact).sum()
        assert l1 < (1e-3 if eps == 1e-6 else 1e-5)
        assert l1 == pytest.approx(0.8 * res.residual, rel=1e-6)  # error = (1 − c) × mass left in r
        assert np.all(approx <= exact + 1e-15)  # p + c·r is a lower bound, node by node
        degree = np.asarray(a.sum(axis=1)).ravel()
        assert np.all(np.abs(approx - exact) <= eps * degree + 1e-12)  # ACL per-node bound
    assert exact.sum() == pytest.approx(1.0)


def test_push_ppr_matches_exact_ppr_on_the_slice_kb(slice_kb: KnowledgeBase) -> None:
    assert isinstance(slice_kb.store, EmbeddedGraphStore)
    adj = slice_kb.store.adjacency
    a = bipartite_csr(adj.et_csr, adj.te_csr)
    index = adj.entity_index()
    seeds = np.array([index["DOID:9352"], index["DOID:10763"]])
    exact = exact_ppr(a, seeds)
    res = push_ppr(CSRRows(a), seeds, epsilon=1e-8)
    approx = np.zeros(a.shape[0])
    approx[res.nodes] = res.mass
    assert np.abs(approx - exact).sum() < 1e-3
    top_exact = np.argsort(-exact, kind="stable")[:10]
    assert set(top_exact.tolist()) <= set(res.nodes.tolist())


def test_ppr_of_an_isolated_seed_stays_on_it() -> None:
    et = sp.csr_matrix(np.array([[0.5, 1.0], [0.0, 0.0], [1.0, 0.0]]))
    a = bipartite_csr(et)
    res = push_ppr(CSRRows(a), np.array([1]), epsilon=1e-9)
    assert res.nodes.tolist() == [1] and res.mass.tolist() == [1.0]
    assert exact_ppr(a, np.array([1]))[1] == pytest.approx(1.0)
    mixed = push_ppr(CSRRows(a), np.array([0, 1]), epsilon=1e-10)
    exact = exact_ppr(a, np.array([0, 1]))
    approx = np.zeros(5)
    approx[mixed.nodes] = mixed.mass
    np.testing.assert_allclose(approx, exact, atol=1e-8)


def test_global_and_gathered_sampling_pick_the_same_neighbours() -> None:
    rows = CSRRows(bipartite_csr(random_bipartite(2)))
    rng = np.random.default_rng(3)
    nodes = rng.integers(0, 500, 5000)
    draws = rng.random(5000)
    np.testing.assert_array_equal(rows.sample(nodes, draws), WeightedRows.sample(rows, nodes, draws))


def test_sampling_follows_the_edge_weights() -> None:
    et = sp.csr_matrix(np.array([[0.1, 0.3, 0.6]]))
    rows = CSRRows(bipartite_csr(et))
    picks = rows.sample(np.zeros(100_000, dtype=np.int64), np.random.default_rng(0).random(100_000))
    freq = np.bincount(picks, minlength=4)[1:] / 100_000
    np.testing.assert_allclose(freq, [0.1, 0.3, 0.6], atol=0.01)
    assert quantise(np.array([1e-9, 0.5])).tolist() == [1, 500_000]  # tiny weights stay reachable


def test_random_walks_alternate_sides_and_stop_at_dead_ends() -> None:
    et = sp.csr_matrix(np.array([[1.0, 0.0], [0.5, 0.5], [0.0, 0.0]]))
    rows = CSRRows(bipartite_csr(et))
    paths = random_walks(rows, np.array([0, 2]), steps=4, walks_per_seed=8, rng=np.random.default_rng(0))
    assert paths.shape == (16, 5)
    walked = paths[:8]
    assert np.all(walked[:, [1, 3]] >= 3) and np.all(walked[:, [2, 4]] < 3)  # topic, entity, topic, entity
    assert np.all(paths[8:, 1:] == -1)  # entity 2 has no topic: dead end at once
    nodes, counts = visit_frequency(paths)
    assert dict(zip(nodes.tolist(), counts.tolist(), strict=True))[0] == 8  # once per walk, not per visit
    assert dict(zip(nodes.tolist(), counts.tolist(), strict=True))[2] == 8


def test_walks_are_reproducible_by_seed() -> None:
    rows = CSRRows(bipartite_csr(random_bipartite(4)))
    seeds = np.array([1, 2, 3])

    def run(seed: int) -> np.ndarray:
        return random_walks(rows, seeds, 4, 64, np.random.default_rng(seed))

    np.testing.assert_array_equal(run(7), run(7))
    assert not np.array_equal(run(7), run(8))


# ----- typed graph: chains ------------------------------------------------------------------------------
def edge_csr(rows: np.ndarray, cols: np.ndarray, n: int) -> sp.csr_matrix:
    """CSR whose data are edge numbers (as graphs/stores/adjacency.py stores them; 0 is a valid edge)."""
    edges = np.arange(len(rows))
    order = np.lexsort((edges, cols, rows))
    indptr = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(np.bincount(rows, minlength=n), out=indptr[1:])
    return sp.csr_matrix((edges[order], cols[order], indptr), shape=(n, n))


def tiny_typed() -> tuple[CSRTypedRows, dict[str, int], list[tuple[str, str, str]]]:
    """The tiny graph as CSR arrays directly (no KB): node i = TINY_NODES[i], edge e = TINY_EDGES[e]."""
    index = {n[0]: i for i, n in enumerate(TINY_NODES)}
    heads = np.array([index[h] for h, _, _ in TINY_EDGES])
    tails = np.array([index[t] for _, _, t in TINY_EDGES])
    n = len(TINY_NODES)
    out_csr, in_csr = edge_csr(heads, tails, n), edge_csr(tails, heads, n)
    types = sorted({r for _, r, _ in TINY_EDGES})
    edge_type = np.array([types.index(r) for _, r, _ in TINY_EDGES])
    return CSRTypedRows(out_csr, in_csr, edge_type), index, TINY_EDGES


def chain_set(search: ChainSearch, i: int, j: int, k: int, kind: int) -> set[tuple[int, ...]]:
    chains = search.chains_between(i, j, k)
    return {tuple(c[c >= 0].tolist()) for c, kd in zip(chains.edges, chains.kind, strict=True) if kd == kind}


def test_chain_types_found_exactly_on_hand_built_arrays() -> None:
    rows, ix, _ = tiny_typed()
    search = ChainSearch(rows, np.array([ix["X:A"], ix["X:C"]]), degree_cap=200)
    a, c = ix["X:A"], ix["X:C"]
    assert chain_set(search, a, c, 3, 0) == {(5, 6)}  # A -resembles-> E -is_a-> C
    assert chain_set(search, a, c, 3, 1) == {(7, 8), (0, 1, 2)}  # A→H←C, A→B→G←C
    assert chain_set(search, a, c, 3, 2) == {(14, 4)}  # A←D→C
    assert chain_set(search, a, c, 2, 1) == {(7, 8)}  # k = 2 drops the 3-hop chain
    # the same chains seen from C: the path is read against its edges
    assert chain_set(search, c, a, 3, 0) == {(6, 5)}


def test_hubs_are_not_used_inside_chains_unless_anchors() -> None:
    rows, ix, _ = tiny_typed()
    search = ChainSearch(rows, np.array([ix["X:A"], ix["X:C"]]), degree_cap=5)
    assert chain_set(search, ix["X:A"], ix["X:C"], 3, 1) == {(0, 1, 2)}
    assert ix["X:H"] in search.hubs_skipped
    as_anchor = ChainSearch(rows, np.array([ix["X:A"], ix["X:H"]]), degree_cap=1)
    assert chain_set(as_anchor, ix["X:A"], ix["X:H"], 1, 0) == {(7,)}  # anchors are never skipped


def test_self_loops_never_make_a_chain_repeat_a_node() -> None:
    rows, ix, _ = tiny_typed()
    s, a = ix["X:S"], ix["X:A"]
    search = ChainSearch(rows, np.array([s, a]), degree_cap=200)
    chains = search.chains_between(s, a, 3)
    assert {tuple(e[e >= 0].tolist()) for e in chains.edges} == {(16,)}
    for row in chains.nodes:
        real = row[row >= 0]
        assert len(set(real.tolist())) == len(real)


def test_shortest_paths_ignore_direction_and_keep_all_ties() -> None:
    rows, ix, _ = tiny_typed()
    search = ChainSearch(rows, np.array([ix["X:B"], ix["X:C"]]), degree_cap=200)
    found = search.shortest_between(ix["X:B"], ix["X:C"], 4)
    assert {tuple(e.tolist()) for e in found.edges} == {(1, 2), (3, 4)}  # B→G←C and B←D→C
    order = best_candidates(found, 1)
    assert found.penalty[order[0]] == pytest.approx(np.log(2))  # G has 2 edges, D has 3
    assert len(search.shortest_between(ix["X:B"], ix["X:I"], 4)) == 0


def test_best_candidates_keeps_ties_for_the_id_tie_break() -> None:
    rows, ix, _ = tiny_typed()
    search = ChainSearch(rows, np.array([ix["X:A"], ix["X:C"]]), degree_cap=200)
    chains = concat_chains([search.chains_between(ix["X:A"], ix["X:C"], 3)])
    keep = best_candidates(chains, 1)
    lengths = (chains.edges[keep] >= 0).sum(axis=1)
    assert set(lengths.tolist()) == {2} and len(keep) == 1  # A→E→C (log 2) beats A←D→C and A→H←C
    assert len(best_candidates(chains, 3)) == 3


def test_pareto_front_keeps_non_dominated_rows() -> None:
    obj = np.array([[2020, 2], [2015, 3], [2000, 2], [2020, 2], [-1, 1]])
    assert pareto_front(obj).tolist() == [True, True, False, True, False]
    assert pareto_front(np.array([3, 1, 3])).tolist() == [True, False, True]


def test_prioritise_rebalances_elements_and_splits_ties() -> None:
    pools = [("edge", ["e1", "e2", "e3"]), ("node", ["e4", "e5", "e6"])]
    document_of = {"e1": "a", "e2": "b", "e3": "c", "e4": "x", "e5": "y", "e6": "y"}
    objectives = {"a": (2020, 1), "b": (2010, 2), "c": (2000, 1), "x": (-1, 1), "y": (-1, 1)}
    ranked = prioritise(pools, document_of, objectives, {"e5": 2}, limit=10)
    # round 1: edge front {a, b} (c is dominated by a); node: x and y tie, y first (its evidence mentions
    # more path entities) and both of y's units go together; round 2: edge c, node x
    assert ranked == [
        ("e1", "edge", 1),
        ("e2", "edge", 1),
        ("e5", "node", 2),
        ("e6", "node", 2),
        ("e3", "edge", 3),
        ("e4", "node", 4),
    ]
    assert prioritise(pools, document_of, objectives, {}, limit=3) == [
        ("e1", "edge", 1),
        ("e2", "edge", 1),
        ("e4", "node", 2),
    ]


# ----- adapters: embedded CSR vs GraphStore interface ----------------------------------------------------
def test_typed_views_agree_on_rows_and_degrees(slice_kb: KnowledgeBase) -> None:
    fast = typed_view(slice_kb.store, ["treats", "is_a"], limit_per_node=3)
    slow = typed_view(slice_kb.store, ["treats", "is_a"], limit_per_node=3, fast_path=False)
    ids = ["DOID:9352", "DOID:10763", "DOID:1612", "NOPE:1"]
    fn, sn = fast.entity_nodes(ids), slow.entity_nodes(ids)
    assert sorted(fn) == sorted(sn) == ["DOID:10763", "DOID:1612", "DOID:9352"]
    for direction in ("out", "in"):
        for name in fn:
            fb = fast.rows.gather(np.array([fn[name]]), direction)
            sb = slow.rows.gather(np.array([sn[name]]), direction)
            f_rel = sorted((r.head, r.relation, r.tail) for r in fast.relations(fb.edges))
            s_rel = sorted((r.head, r.relation, r.tail) for r in slow.relations(sb.edges))
            assert f_rel == s_rel and len(f_rel) <= 3
            assert all(r[1] in ("treats", "is_a") for r in f_rel)
    deg_f = fast.rows.degree(np.array([fn["DOID:9352"]]))
    deg_s = slow.rows.degree(np.array([sn["DOID:9352"]]))
    assert deg_f.tolist() == deg_s.tolist() == [slice_kb.store.degrees(["DOID:9352"])["DOID:9352"]]


def test_bipartite_views_agree_on_rows(slice_kb: KnowledgeBase) -> None:
    fast, slow = bipartite_view(slice_kb.store), bipartite_view(slice_kb.store, fast_path=False)
    fn, sn = fast.entity_nodes(["DOID:9352"]), slow.entity_nodes(["DOID:9352"])
    fb, sb = (
        fast.rows.gather(np.array([fn["DOID:9352"]])),
        slow.rows.gather(np.array([sn["DOID:9352"]])),
    )
    assert fast.node_ids(fb.neighbours) == slow.node_ids(sb.neighbours)
    np.testing.assert_array_equal(fb.weights, sb.weights)
    assert fast.is_topic(fb.neighbours).all() and slow.is_topic(sb.neighbours).all()
    assert fast.rows.weighted_degree(np.array([fn["DOID:9352"]])).tolist() == pytest.approx(
        [sum(w for _, w in slice_kb.store.entity_topics(["DOID:9352"])["DOID:9352"])]
    )
