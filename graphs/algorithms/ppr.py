"""Topic locating on the entity↔topic bipartite graph: seeded random walks and personalised PageRank.

EbmKG §4.1 (seed 000): from the linked entities M̂, run β walks of length ≤ α over the bipartite graph
B = ⟨T, M, W⟩ whose edge weights are eq. 6, count ``f(t)`` = the number of walks that visit topic ``t``
(eq. 8) and keep the ``n_t`` most visited topics. Personalised PageRank with M̂ as the restart set is the
deterministic limit of the same idea (ALGORITHMS.md §2.4), computed here by a *local push*
(Andersen–Chung–Lang) whose cost depends on the neighbourhood it touches, not on the size of the graph.
:func:`exact_ppr` (power iteration over the whole graph) exists only to verify the push and to measure the
gap in ``evals/bench_graph_scale.py``.

Representation, and why: entities and topics share one integer node space (entity ``i`` → ``i``, topic
``j`` → ``n_entities + j``) and the graph is stored symmetric, so one row source serves both sides and a
walk alternates entity → topic → entity by construction (the graph is bipartite). Rows come from a
:class:`WeightedRows`: :class:`CSRRows` wraps in-memory CSR arrays (the embedded store, the benchmark);
``graphs.algorithms.views.StoreBipartiteRows`` fetches rows through the ``GraphStore`` interface in batches.

Determinism across both: a step picks neighbour ``k`` of a row with probability ∝ ``w_k`` using *integer*
weight quanta (``round(w · 10⁶)``, at least 1) and one uniform draw per walker per step. Integer prefix
sums are exact whatever order the rows are concatenated in, so the CSR path and the store path pick the
same neighbour from the same draw, bit for bit.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

WEIGHT_QUANTUM = 1_000_000
"""Sampling weights are integers ``round(w · 10⁶)``; eq. 6 weights are stored with 6 decimals anyway."""

DEFAULT_RESTART = 0.2
"""PPR restart probability: the expected walk length (1 − c)/c is then 4 hops, the random walk's α."""


@dataclass(frozen=True)
class RowBlock:
    """The rows of some nodes, concatenated: row ``i`` is ``neighbours[ptr[i]:ptr[i + 1]]``."""

    ptr: np.ndarray
    neighbours: np.ndarray
    weights: np.ndarray


def quantise(weights: np.ndarray) -> np.ndarray:
    """Integer sampling weights (≥ 1 for every edge, so no edge becomes unreachable by rounding)."""
    return np.maximum(1, np.rint(np.asarray(weights, dtype=np.float64) * WEIGHT_QUANTUM)).astype(np.int64)


def sorted_unique(values: np.ndarray) -> np.ndarray:
    """Sorted distinct values by sort + mask: numpy 2.4's ``np.unique`` without extra outputs switched to
    hashing, which is ~20x slower than sorting on million-element integer arrays."""
    s = np.sort(np.asarray(values))
    if len(s) < 2:
        return s
    keep = np.empty(len(s), dtype=bool)
    keep[0] = True
    np.not_equal(s[1:], s[:-1], out=keep[1:])
    return s[keep]


def expand_ranges(starts: np.ndarray, lengths: np.ndarray) -> np.ndarray:
    """Concatenated ``arange(s, s + n)`` for each (s, n), vectorised (the gather behind every row read)."""
    lengths = np.asarray(lengths, dtype=np.int64)
    total = int(lengths.sum())
    if total == 0:
        return np.zeros(0, dtype=np.int64)
    offsets = np.zeros(len(lengths), dtype=np.int64)
    np.cumsum(lengths[:-1], out=offsets[1:])
    return np.repeat(np.asarray(starts, dtype=np.int64) - offsets, lengths) + np.arange(total, dtype=np.int64)


def row_sums(values: np.ndarray, ptr: np.ndarray) -> np.ndarray:
    """Per-row sums of a concatenated row array (0 for empty rows).

    Both row sources compute degrees with this one function, so equal rows give bit-identical sums.
    """
    out = np.zeros(len(ptr) - 1)
    nonempty = np.flatnonzero(np.diff(ptr) > 0)
    if len(nonempty):
        out[nonempty] = np.add.reduceat(values, ptr[nonempty])
    return out


class WeightedRows(ABC):
    """A symmetric weighted graph over integer nodes, read row by row (in batches)."""

    @abstractmethod
    def gather(self, nodes: np.ndarray) -> RowBlock:
        """Rows of ``nodes`` (in the given order, duplicates allowed), neighbours sorted as stored."""

    @abstractmethod
    def weighted_degree(self, nodes: np.ndarray) -> np.ndarray:
        """Sum of edge weights of each node (0 for a node without edges)."""

    def sample(self, nodes: np.ndarray, draws: np.ndarray) -> np.ndarray:
        """One neighbour per node, chosen with probability ∝ weight by ``draws`` ∈ [0, 1); -1 if none.

        Generic version: gather the distinct rows, integer prefix sums per row, binary search.
        """
        out = np.full(len(nodes), -1, dtype=np.int64)
        if len(nodes) == 0:
            return out
        uniq, inv = np.unique(nodes, return_inverse=True)
        block = self.gather(uniq)
        cum = np.cumsum(quantise(block.weights))
        lo, hi = block.ptr[inv], block.ptr[inv + 1]
        return _pick(cum, lo, hi, draws, block.neighbours, out)


def _pick(
    cum: np.ndarray,
    lo: np.ndarray,
    hi: np.ndarray,
    draws: np.ndarray,
    neighbours: np.ndarray,
    out: np.ndarray,
) -> np.ndarray:
    """Inverse-CDF sampling inside rows ``[lo, hi)`` of one inclusive integer prefix-sum array."""
    has = hi > lo
    lo, hi, u = lo[has], hi[has], draws[has]
    base = np.where(lo > 0, cum[np.maximum(lo - 1, 0)], 0)
    total = cum[hi - 1] - base
    target = base + np.floor(u * total).astype(np.int64)
    out[has] = neighbours[np.searchsorted(cum, target, side="right")]
    return out


class CSRRows(WeightedRows):
    """Rows straight from CSR arrays; sampling uses one global prefix sum (O(log E) per walker, no gather)."""

    def __init__(self, matrix: sp.csr_matrix) -> None:
        self.indptr = np.asarray(matrix.indptr, dtype=np.int64)
        self.indices = matrix.indices
        self.data = np.asarray(matrix.data, dtype=np.float64)
        self.n_nodes = int(matrix.shape[0])
        self._cum: np.ndarray | None = None
        self._wdeg: np.ndarray | None = None

    def gather(self, nodes: np.ndarray) -> RowBlock:
        lo = self.indptr[nodes]
        lengths = self.indptr[np.asarray(nodes) + 1] - lo
        idx = expand_ranges(lo, lengths)
        ptr = np.zeros(len(lengths) + 1, dtype=np.int64)
        np.cumsum(lengths, out=ptr[1:])
        return RowBlock(ptr=ptr, neighbours=self.indices[idx].astype(np.int64), weights=self.data[idx])

    def weighted_degree(self, nodes: np.ndarray) -> np.ndarray:
        if self._wdeg is None:
            self._wdeg = row_sums(self.data, self.indptr)
        return self._wdeg[nodes]

    def sample(self, nodes: np.ndarray, draws: np.ndarray) -> np.ndarray:
        if self._cum is None:
            self._cum = np.cumsum(quantise(self.data))
        out = np.full(len(nodes), -1, dtype=np.int64)
        return _pick(
            self._cum,
            self.indptr[nodes],
            self.indptr[np.asarray(nodes) + 1],
            draws,
            self.indices,
            out,
        )


def bipartite_csr(et: sp.csr_matrix, te: sp.csr_matrix | None = None) -> sp.csr_matrix:
    """The symmetric adjacency ``[[0, ET], [TE, 0]]`` of entity×topic weights, topics offset by ``n_e``.

    Built by concatenating the two CSR halves (no sort, no copy of more than the arrays themselves), so a row
    keeps the neighbour order of its source matrix: topics of an entity by topic index and vice versa.
    """
    n_e, n_t = et.shape
    if te is None:
        te = et.T.tocsr()
        te.sort_indices()
    indptr = np.concatenate([et.indptr.astype(np.int64), te.indptr[1:].astype(np.int64) + et.nnz])
    indices = np.concatenate([et.indices.astype(np.int64) + n_e, te.indices.astype(np.int64)])
    index_dtype = np.int32 if n_e + n_t < 2**31 else np.int64
    data = np.concatenate([et.data, te.data]).astype(np.float64)
    return sp.csr_matrix((data, indices.astype(index_dtype), indptr), shape=(n_e + n_t, n_e + n_t))


def random_walks(
    rows: WeightedRows, seeds: np.ndarray, steps: int, walks_per_seed: int, rng: np.random.Generator
) -> np.ndarray:
    """``RandomWalk(B, M̂, α, β)`` (eq. 7): a walks × (steps + 1) matrix of visited nodes, -1 after a dead end.

    Walks are ordered seed by seed (``walks_per_seed`` each) and advanced together, one vectorised step at a
    time; every step draws one uniform number per walk (dead walks included) so the random stream, and so
    the result, does not depend on which walks died early.
    """
    start = np.repeat(np.asarray(seeds, dtype=np.int64), walks_per_seed)
    paths = np.full((len(start), steps + 1), -1, dtype=np.int64)
    paths[:, 0] = start
    current = start
    for step in range(steps):
        draws = rng.random(len(current))
        alive = current >= 0
        nxt = np.full(len(current), -1, dtype=np.int64)
        if alive.any():
            nxt[alive] = rows.sample(current[alive], draws[alive])
        paths[:, step + 1] = nxt
        current = nxt
    return paths


def visit_frequency(paths: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``f(v) = Σ_i 𝕀(v ∈ p_i)`` (eq. 8) for every visited node: it counts once per walk that touches it."""
    walk = np.repeat(np.arange(paths.shape[0], dtype=np.int64), paths.shape[1])
    node = paths.ravel()
    keep = node >= 0
    if not keep.any():
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
    span = int(node[keep].max()) + 1
    pairs = sorted_unique(walk[keep] * span + node[keep])
    return np.unique(pairs % span, return_counts=True)


@dataclass(frozen=True)
class PushResult:
    """Approximate PPR (sparse: sorted ``nodes`` with ``mass``), the residual left, and what it cost.

    ``mass = p + c·r``: settled mass plus the share of each node's own residual that is certain to stay
    there (a walk restarted at ``u`` ends at ``u`` with probability ≥ c). Both terms are lower bounds of
    the exact PPR, so ``mass ≤ ppr`` node by node and ``‖ppr − mass‖₁ = (1 − c)·residual`` exactly.
    Adding ``c·r`` matters on graphs with hubs: residual piles up on high-degree nodes (their threshold
    ``ε·d(u)`` is high) and those are the nodes a mass ranking puts first.
    """

    nodes: np.ndarray
    mass: np.ndarray
    residual: float
    rounds: int
    pushes: int
    edges_touched: int
    converged: bool


def _merge(keys: np.ndarray, values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Sum values by key (sorted unique keys): the sparse-vector add behind every push round."""
    if len(keys) == 0:
        return keys.astype(np.int64), values.astype(np.float64)
    uniq, inv = np.unique(keys, return_inverse=True)
    return uniq, np.bincount(inv, weights=values, minlength=len(uniq))


def push_ppr(
    rows: WeightedRows,
    seeds: np.ndarray,
    restart: float = DEFAULT_RESTART,
    epsilon: float = 1e-5,
    max_edges_touched: int = 20_000_000,
) -> PushResult:
    """Personalised PageRank by forward push, restart set = ``seeds`` (uniform), residual threshold ε.

    Invariant (Andersen, Chung & Lang 2006): ``ppr(s) = p + ppr(r)``. A node ``u`` is pushed while
    ``r(u) ≥ ε · d(u)`` (``d`` = weighted degree): ``c · r(u)`` settles in ``p(u)`` and ``(1 − c) · r(u)``
    spreads to its neighbours ∝ weight. On exit every ``r(u) < ε · d(u)``, so ``|p(u) − ppr(u)| ≤ ε · d(u)``
    per node (the returned estimate ``p + c·r`` is closer still, see :class:`PushResult`), and the work is
    bounded by the touched neighbourhood (``≈ 1/(ε c)`` in weighted volume), independent of the size of
    the graph. All nodes above threshold are pushed together in each round (a valid order for the
    invariant) so a round is a few vectorised operations. A node without edges keeps its residual (the
    walk stays: a self-loop), which :func:`exact_ppr` mirrors.
    """
    seeds = sorted_unique(np.asarray(seeds, dtype=np.int64))
    r_nodes = seeds
    r_mass = np.full(len(seeds), 1.0 / max(len(seeds), 1))
    settled_nodes: list[np.ndarray] = []
    settled_mass: list[np.ndarray] = []
    rounds = pushes = touched = 0
    converged = True
    while len(r_nodes):
        degree = rows.weighted_degree(r_nodes)
        dangling = degree <= 0
        active = (r_mass >= epsilon * degree) | dangling
        if not active.any():
            break
        if touched > max_edges_touched:
            converged = False
            break
        a_nodes, a_mass, a_deg, a_dangling = (
            r_nodes[active],
            r_mass[active],
            degree[active],
            dangling[active],
        )
        settled_nodes.append(a_nodes)
        settled_mass.append(np.where(a_dangling, a_mass, restart * a_mass))
        spread = ~a_dangling
        block = rows.gather(a_nodes[spread])
        lengths = np.diff(block.ptr)
        share = np.repeat((1.0 - restart) * a_mass[spread] / a_deg[spread], lengths) * block.weights
        r_nodes, r_mass = _merge(
            np.concatenate([r_nodes[~active], block.neighbours]),
            np.concatenate([r_mass[~active], share]),
        )
        rounds += 1
        pushes += int(active.sum())
        touched += len(block.neighbours)
    nodes, mass = _merge(
        np.concatenate([*settled_nodes, r_nodes]), np.concatenate([*settled_mass, restart * r_mass])
    )
    return PushResult(
        nodes=nodes,
        mass=mass,
        residual=float(r_mass.sum()),
        rounds=rounds,
        pushes=pushes,
        edges_touched=touched,
        converged=converged,
    )


def exact_ppr(
    adjacency: sp.csr_matrix,
    seeds: np.ndarray,
    restart: float = DEFAULT_RESTART,
    tol: float = 1e-12,
    max_iter: int = 10_000,
) -> np.ndarray:
    """Reference PPR by power iteration over the whole graph: ``x = c·s + (1 − c)·Pᵀx``, ``P = D⁻¹W``.

    O(E) per iteration and O(log(1/tol)/c) iterations: the cost :func:`push_ppr` avoids. Used by tests (is
    the push right?) and the scale benchmark (how much does the push save?). Nodes without edges keep
    their mass (self-loop), as in the push.
    """
    n = adjacency.shape[0]
    degree = np.asarray(adjacency.sum(axis=1)).ravel()
    dangling = degree <= 0
    inv_degree = np.where(dangling, 0.0, 1.0 / np.where(dangling, 1.0, degree))
    transposed = adjacency.T.tocsr()
    s = np.zeros(n)
    uniq = sorted_unique(np.asarray(seeds, dtype=np.int64))
    s[uniq] = 1.0 / len(uniq)
    x = s.copy()
    for _ in range(max_iter):
        y = restart * s + (1.0 - restart) * (transposed @ (x * inv_degree) + np.where(dangling, x, 0.0))
        diff = float(np.abs(y - x).sum())
        x = y
        if diff < tol:
            break
    return x
