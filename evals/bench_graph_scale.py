"""How the graph tools' algorithms scale: synthetic graphs from 10k to 10M+ edges.

    python -m evals.bench_graph_scale --sizes 1e4 1e5 1e6 1e7 --plot /tmp/graph_scale.png

For each size E it generates, seeded, (1) an entity×topic hypergraph with E weighted edges and (2) a typed,
directed relation graph with E edges, both with power-law (Zipf-like) degrees on every side, as CSR arrays
directly (no SQLite, no strings). It then times the *core* functions the two tools run
(graphs/algorithms/views.py re-exports them): ``random_walks`` + ``visit_frequency`` (hypergraph_walk,
random_walk mode), ``push_ppr`` (ppr mode), and ``ChainSearch.chains_between`` + ``best_candidates`` over all
anchor pairs (reasoning_chain, chains mode) — ``--queries`` queries per seed, ``--seeds`` seeds, p50/p90 over
all of them — plus, in the same run, the whole-graph power iteration (``exact_ppr``) for the push/power
ratio. What is *not* timed: id↔string mapping, SQLite record lookups (names, evidence ids) and pydantic
models, which depend on the result size, not the graph size. ``--kb`` adds an end-to-end timing of both
tools on a real KB build.

Query model: walk seeds are 3 entities drawn ∝ degree (linked question entities are usually well-documented
ones, and hubs are the hard case); chain anchors are one node drawn ∝ degree plus the ends of 2- and 3-step
random walks from it (question entities are related), k = 3, degree cap 200, 5 chains per pair.
"""

from __future__ import annotations

import argparse
import resource
import statistics
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from pathlib import Path

import numpy as np
import scipy.sparse as sp

from evals.bench_common import percentile
from graphs.algorithms.paths import CSRTypedRows
from graphs.algorithms.ppr import CSRRows, bipartite_csr, sorted_unique
from graphs.algorithms.views import (
    ChainSearch,
    best_candidates,
    exact_ppr,
    push_ppr,
    random_walks,
    visit_frequency,
)

WALK_TARGET_MS = 100.0
CHAIN_TARGET_MS = 300.0
ZIPF_EXPONENT = 0.9
RELATION_TYPES = 24


def zipf_weights(n: int, rng: np.random.Generator, exponent: float = ZIPF_EXPONENT) -> np.ndarray:
    """Probabilities ∝ rank^-exponent over a random permutation of ``n`` nodes (power-law degrees)."""
    p = (np.arange(1, n + 1, dtype=np.float64)) ** -exponent
    p /= p.sum()
    return p[rng.permutation(n)]


def unique_pairs(
    n_rows: int, n_cols: int, edges: int, p_rows: np.ndarray, p_cols: np.ndarray, rng: np.random.Generator
) -> np.ndarray:
    """``edges`` distinct keys ``row * n_cols + col``, sorted; endpoints drawn from p_rows and p_cols."""
    keys = np.zeros(0, dtype=np.int64)
    while len(keys) < edges:
        need = int((edges - len(keys)) * 1.2) + 16
        rows = rng.choice(n_rows, size=need, p=p_rows)
        cols = rng.choice(n_cols, size=need, p=p_cols)
        keys = sorted_unique(np.concatenate([keys, rows.astype(np.int64) * n_cols + cols]))
    if len(keys) > edges:
        keys = np.sort(rng.choice(keys, size=edges, replace=False))
    return keys


def csr_from_sorted(
    rows: np.ndarray, cols: np.ndarray, data: np.ndarray, shape: tuple[int, int]
) -> sp.csr_matrix:
    """CSR from entries already sorted by (row, col): indptr by counting, no scipy conversion."""
    indptr = np.zeros(shape[0] + 1, dtype=np.int64)
    np.cumsum(np.bincount(rows, minlength=shape[0]), out=indptr[1:])
    index_dtype = np.int32 if max(shape) < 2**31 else np.int64
    return sp.csr_matrix((data, cols.astype(index_dtype), indptr), shape=shape)


@dataclass
class SyntheticGraphs:
    bipartite: sp.csr_matrix
    n_entities: int
    entity_degree: np.ndarray
    out_csr: sp.csr_matrix
    in_csr: sp.csr_matrix
    edge_type: np.ndarray
    seconds: float

    @property
    def nbytes(self) -> int:
        total = 0
        for m in (self.bipartite, self.out_csr, self.in_csr):
            total += m.data.nbytes + m.indices.nbytes + m.indptr.nbytes
        return total + self.edge_type.nbytes


def generate(edges: int, seed: int) -> SyntheticGraphs:
    """Both synthetic graphs, ``edges`` edges each (EbmKG ratios: ~46 topics per entity, 27 per topic)."""
    started = time.perf_counter()
    rng = np.random.default_rng(seed)
    n_e, n_t = max(50, edges // 40), max(50, edges // 25)
    keys = unique_pairs(n_e, n_t, edges, zipf_weights(n_e, rng), zipf_weights(n_t, rng), rng)
    weights = np.round(rng.uniform(0.02, 1.0, len(keys)), 6)
    et = csr_from_sorted(keys // n_t, keys % n_t, weights, (n_e, n_t))
    del keys
    bipartite = bipartite_csr(et)
    entity_degree = np.diff(et.indptr)
    del et

    n = max(50, edges // 5)
    keys = unique_pairs(n, n, edges, zipf_weights(n, rng), zipf_weights(n, rng), rng)
    heads, tails = keys // n, keys % n
    del keys
    edge_ids = np.arange(len(heads), dtype=np.int64)
    out_csr = csr_from_sorted(heads, tails, edge_ids, (n, n))
    order = np.lexsort((edge_ids, heads, tails))
    in_csr = csr_from_sorted(tails[order], heads[order], edge_ids[order], (n, n))
    edge_type = rng.choice(RELATION_TYPES, size=len(heads), p=zipf_weights(RELATION_TYPES, rng)).astype(
        np.int32
    )
    return SyntheticGraphs(
        bipartite, n_e, entity_degree, out_csr, in_csr, edge_type, time.perf_counter() - started
    )


def timed(fn: Callable[[], object]) -> float:
    t = time.perf_counter()
    fn()
    return (time.perf_counter() - t) * 1000.0


def chain_anchors(g: SyntheticGraphs, rng: np.random.Generator) -> np.ndarray:
    """A node ∝ degree and the ends of 2- and 3-step undirected random walks from it."""
    degree = np.diff(g.out_csr.indptr) + np.diff(g.in_csr.indptr)
    start = int(rng.choice(len(degree), p=degree / degree.sum()))
    anchors = [start]
    for steps in (2, 3):
        node = start
        for _ in range(steps):
            out_lo, out_hi = g.out_csr.indptr[node], g.out_csr.indptr[node + 1]
            in_lo, in_hi = g.in_csr.indptr[node], g.in_csr.indptr[node + 1]
            nbrs = np.concatenate([g.out_csr.indices[out_lo:out_hi], g.in_csr.indices[in_lo:in_hi]])
            node = int(rng.choice(nbrs))
        anchors.append(node)
    return sorted_unique(np.array(anchors, dtype=np.int64))


def chain_query(
    rows: CSRTypedRows, anchors: np.ndarray, k: int = 3, cap: int = 200, per_pair: int = 5
) -> int:
    """What reasoning_chain runs per query (minus string ids): every pair, all types, best candidates."""
    search = ChainSearch(rows, anchors, degree_cap=cap)
    kept = 0
    for a in range(len(anchors)):
        for b in range(a + 1, len(anchors)):
            kept += len(best_candidates(search.chains_between(int(anchors[a]), int(anchors[b]), k), per_pair))
    return kept


def peak_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0


@dataclass
class QueryTimes:
    walk_ms: float
    push_ms: float
    chain_ms: float
    chains: int
    power_ms: float | None


def run_query(
    g: SyntheticGraphs,
    walk_rows: CSRRows,
    typed: CSRTypedRows,
    rng: np.random.Generator,
    query: int,
    epsilon: float,
    with_power: bool,
) -> QueryTimes:
    """One query of each kind on one graph (seeds and anchors drawn from ``rng``)."""
    seeds = rng.choice(g.n_entities, size=3, replace=False, p=g.entity_degree / g.entity_degree.sum())
    walk_rng = np.random.default_rng(query)
    walk_ms = timed(lambda: visit_frequency(random_walks(walk_rows, seeds, 4, 128, walk_rng)))
    push_ms = timed(lambda: push_ppr(walk_rows, seeds, restart=0.2, epsilon=epsilon))
    anchors = chain_anchors(g, rng)
    box: list[int] = []
    chain_ms = timed(lambda: box.append(chain_query(typed, anchors)))
    power_ms = timed(lambda: exact_ppr(g.bipartite, seeds, restart=0.2, tol=1e-9)) if with_power else None
    return QueryTimes(walk_ms, push_ms, chain_ms, box[0], power_ms)


def bench_size(edges: int, seeds: int, queries: int, epsilon: float, power_runs: int) -> dict[str, float]:
    """p50/p90 over ``seeds`` graphs × ``queries`` queries of one size, plus generation time and memory."""
    times: list[QueryTimes] = []
    gen_s: list[float] = []
    nbytes = 0
    for seed in range(seeds):
        g = generate(edges, seed)
        gen_s.append(g.seconds)
        nbytes = max(nbytes, g.nbytes)
        walk_rows = CSRRows(g.bipartite)
        walk_rows.sample(np.array([0]), np.array([0.5]))  # prefix sums and degrees: load-time work, once
        walk_rows.weighted_degree(np.array([0]))
        typed = CSRTypedRows(g.out_csr, g.in_csr, g.edge_type, limit_per_node=5000)
        rng = np.random.default_rng(1000 + seed)
        times.extend(run_query(g, walk_rows, typed, rng, q, epsilon, q < power_runs) for q in range(queries))
        del g, walk_rows, typed
    power = [t.power_ms for t in times if t.power_ms is not None]
    return {
        "edges": edges,
        "gen_s": statistics.median(gen_s),
        "walk_p50": percentile([t.walk_ms for t in times], 50),
        "walk_p90": percentile([t.walk_ms for t in times], 90),
        "push_p50": percentile([t.push_ms for t in times], 50),
        "push_p90": percentile([t.push_ms for t in times], 90),
        "chain_p50": percentile([t.chain_ms for t in times], 50),
        "chain_p90": percentile([t.chain_ms for t in times], 90),
        "chains_per_query": statistics.mean(t.chains for t in times),
        "power_p50": percentile(power, 50),
        "graph_mb": nbytes / 2**20,
        "rss_mb": peak_rss_mb(),
        "n_queries": len(times),
    }


def markdown(rows: list[dict[str, float]]) -> str:
    head = (
        "| edges (each graph) | gen s | walk p50 / p90 ms | push-PPR p50 / p90 ms | power-iteration PPR ms "
        "| push/power | chains p50 / p90 ms | chains/query | graph MB | peak RSS MB | queries |\n"
        "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
    )
    lines = [head]
    for r in rows:
        lines.append(
            f"| {int(r['edges']):,} | {r['gen_s']:.1f} | {r['walk_p50']:.2f} / {r['walk_p90']:.2f} "
            f"| {r['push_p50']:.1f} / {r['push_p90']:.1f} | {r['power_p50']:.1f} "
            f"| {r['push_p50'] / r['power_p50']:.4f} | {r['chain_p50']:.1f} / {r['chain_p90']:.1f} "
            f"| {r['chains_per_query']:.1f} | {r['graph_mb']:.0f} | {r['rss_mb']:.0f} "
            f"| {int(r['n_queries'])} |"
        )
    return "\n".join(lines)


def verdict(rows: list[dict[str, float]]) -> str:
    big = [r for r in rows if r["edges"] >= 10_000_000]
    if not big:
        return "Targets need a size >= 10M edges (add --sizes 1e7)."
    r = big[-1]
    walk_ok = r["walk_p50"] <= WALK_TARGET_MS and r["push_p50"] <= WALK_TARGET_MS
    chain_ok = r["chain_p50"] <= CHAIN_TARGET_MS
    return (
        f"At {int(r['edges']):,} edges: walk p50 {r['walk_p50']:.1f} ms (random walk) / "
        f"{r['push_p50']:.1f} ms (push-PPR) vs target {WALK_TARGET_MS:.0f} ms: "
        f"{'MET' if walk_ok else 'NOT MET'}; chains p50 "
        f"{r['chain_p50']:.1f} ms vs target {CHAIN_TARGET_MS:.0f} ms: {'MET' if chain_ok else 'NOT MET'}."
    )


def plot(rows: list[dict[str, float]], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    x = [r["edges"] for r in rows]
    fig, ax = plt.subplots(figsize=(7, 4.5))
    for key, label in (
        ("walk_p50", "random walk (α=4, β=128, 3 seeds)"),
        ("push_p50", "push-PPR"),
        ("power_p50", "power-iteration PPR (whole graph)"),
        ("chain_p50", "reasoning chains (k=3, 3 anchors)"),
    ):
        ax.plot(x, [r[key] for r in rows], marker="o", label=label)
    ax.axhline(WALK_TARGET_MS, color="grey", ls=":", lw=1)
    ax.axhline(CHAIN_TARGET_MS, color="grey", ls="--", lw=1)
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("edges per graph")
    ax.set_ylabel("p50 latency (ms)")
    ax.set_title("EviGraph graph algorithms vs graph size")
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=120)


def bench_kb(kb_root: Path, repeats: int) -> str:
    """End-to-end tool latency on a real KB (ids, SQLite lookups and pydantic included)."""
    from graphs.disk.layout import VECTORS_DIR, KBCorrupt, current_build, read_manifest
    from graphs.kb import KnowledgeBase
    from graphs.stores.embedded import EmbeddedGraphStore
    from graphs.vectors.vector_index import MatrixVectorIndex
    from tools.hypergraph_walk import HypergraphWalkRequest, hypergraph_walk
    from tools.reasoning_chain import ReasoningChainRequest, reasoning_chain

    try:
        kb = KnowledgeBase.open(kb_root)
    except KBCorrupt:  # a graph-only build (no vectors): these two tools only read the graph store
        build = current_build(kb_root)
        kb = KnowledgeBase(
            build_dir=build,
            manifest=read_manifest(build),
            store=EmbeddedGraphStore(build),
            vectors=MatrixVectorIndex(build / VECTORS_DIR),
        )
    store = kb.store
    names = ["type 2 diabetes mellitus", "hypertension", "asthma", "breast cancer", "Parkinson's disease",
             "metformin", "rheumatoid arthritis", "migraine"]  # fmt: skip
    ids = [e.id for n in names for e in store.find_entities(n, limit=1)]
    rng = np.random.default_rng(0)
    cases = [sorted(rng.choice(ids, size=3, replace=False).tolist()) for _ in range(repeats)]
    hypergraph_walk(kb, HypergraphWalkRequest(entity_ids=ids[:2]))  # warm caches (CSR views)
    reasoning_chain(kb, ReasoningChainRequest(entity_ids=ids[:2]))

    def walk(c: list[str], mode: str) -> object:
        return hypergraph_walk(kb, HypergraphWalkRequest(entity_ids=c, mode=mode))

    def chains(c: list[str], mode: str) -> object:
        return reasoning_chain(kb, ReasoningChainRequest(entity_ids=c, mode=mode))

    rows = []
    for label, fn, mode in (
        ("hypergraph_walk", walk, "random_walk"),
        ("hypergraph_walk", walk, "ppr"),
        ("reasoning_chain", chains, "chains"),
        ("reasoning_chain", chains, "shortest_path"),
    ):
        ms = [timed(partial(fn, c, mode)) for c in cases]
        rows.append(f"| {label} {mode} | {percentile(ms, 50):.1f} | {percentile(ms, 90):.1f} |")
    counts = store.counts()
    kb.close()
    return (
        f"\nEnd-to-end on {kb_root} ({counts['entities']:,} entities, {counts['relations']:,} relations, "
        f"{counts['topic_edges']:,} topic edges), {repeats} queries of 3 entities from {len(ids)}:\n\n"
        "| tool | p50 ms | p90 ms |\n|---|---:|---:|\n" + "\n".join(rows)
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0] if __doc__ else None)
    parser.add_argument("--sizes", nargs="+", type=float, default=[1e4, 1e5, 1e6, 1e7])
    parser.add_argument("--seeds", type=int, default=3, help="graphs generated per size")
    parser.add_argument("--queries", type=int, default=20, help="queries per graph")
    parser.add_argument("--epsilon", type=float, default=3e-5, help="push-PPR residual threshold")
    parser.add_argument("--power-runs", type=int, default=2, help="power iterations timed per graph")
    parser.add_argument("--plot", type=Path, default=None, help="write a log-log PNG here")
    parser.add_argument("--kb", type=Path, default=None, help="also time both tools end-to-end on this KB")
    args = parser.parse_args(argv)
    rows = []
    for size in sorted(int(s) for s in args.sizes):
        rows.append(bench_size(size, args.seeds, args.queries, args.epsilon, args.power_runs))
        sys.stderr.write(f"done {size:,} edges\n")
    out = [markdown(rows), "", verdict(rows)]
    if args.kb is not None:
        out.append(bench_kb(args.kb, 30))
    sys.stdout.write("\n".join(out) + "\n")
    if args.plot is not None:
        plot(rows, args.plot)
        sys.stdout.write(f"\nplot: {args.plot}\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
