"""Reasoning chains and shortest paths over the typed, directed relation graph, by meet-in-the-middle.

HyKGE §4.2.2 (seed 003): between every pair of anchors ``i, j`` collect, within ``k`` hops,
* **path** ``i → … → j`` (or ``j → … → i``): every edge points the same way;
* **co-ancestor** ``i → … → x ← … ← j``: both anchors reach a common node ``x``;
* **co-occurrence** ``i ← … ← x → … → j``: a common node ``x`` reaches both.
BCG §3.2.3 (seed 002) adds the shortest (undirected) path between the question's entities.

How: every chain splits at one node into two *half-paths* that start at an anchor and follow edges in one
direction (``out``: along edges, ``in``: against them, ``both``: either). A path of length L is
``out``-half(i, ⌈L/2⌉) ⋈ ``in``-half(j, ⌊L/2⌋); a co-ancestor chain with turning point x is
``out``-half(i, a) ⋈ ``out``-half(j, b); a co-occurrence chain ``in`` ⋈ ``in``. Each chain has exactly one
such split, so nothing is found twice, and halves only go ⌈k/2⌉…k−1 deep instead of k.

Chains are *simple* (no node twice). Hub control: a node whose typed degree exceeds ``degree_cap`` is
neither expanded nor used as an intermediate node, unless it is an anchor; the other intermediates cost
``Σ log(degree)`` (the hub penalty) so that chains through specific nodes rank before chains through
general ones. Everything is vectorised over integer node/edge ids (numpy), so the same code runs on the
embedded store's CSR arrays, on a synthetic 10M-edge graph, or on rows fetched from a ``GraphStore``.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np
import scipy.sparse as sp

from graphs.algorithms.ppr import expand_ranges, sorted_unique

HalfDirection = Literal["out", "in", "both"]
ChainType = Literal["path", "co_ancestor", "co_occurrence"]
CHAIN_TYPES: tuple[ChainType, ...] = ("path", "co_ancestor", "co_occurrence")


@dataclass(frozen=True)
class EdgeBlock:
    """Edges of some nodes in one direction, concatenated: row ``i`` is ``[ptr[i], ptr[i + 1])``."""

    ptr: np.ndarray
    neighbours: np.ndarray
    edges: np.ndarray


class TypedRows(ABC):
    """Directed, typed edges around integer nodes; edge ids are integers too (relation rows)."""

    @abstractmethod
    def gather(self, nodes: np.ndarray, direction: Literal["out", "in"]) -> EdgeBlock:
        """Out- (node is head) or in-edges (node is tail) of each node, after the type filter and limit."""

    @abstractmethod
    def degree(self, nodes: np.ndarray) -> np.ndarray:
        """Full typed degree (in + out, no filter) of each node: what hub control looks at."""


class CSRTypedRows(TypedRows):
    """Rows from CSR arrays whose data are edge ids (graphs/stores/adjacency.py layout).

    The optional type filter is applied before the per-node limit, and a row keeps CSR order (neighbour,
    then edge id), which is what ``EmbeddedGraphStore.neighbors`` does: both paths see the same edges.
    """

    def __init__(
        self,
        out_csr: sp.csr_matrix,
        in_csr: sp.csr_matrix,
        edge_type: np.ndarray,
        allowed_types: np.ndarray | None = None,
        limit_per_node: int | None = None,
        degree: np.ndarray | None = None,
    ) -> None:
        self._mats = {"out": out_csr, "in": in_csr}
        self._type = edge_type
        self._allowed = allowed_types
        self._limit = limit_per_node
        self._degree = degree if degree is not None else np.diff(out_csr.indptr) + np.diff(in_csr.indptr)

    def gather(self, nodes: np.ndarray, direction: Literal["out", "in"]) -> EdgeBlock:
        m = self._mats[direction]
        nodes = np.asarray(nodes, dtype=np.int64)
        lo = m.indptr[nodes].astype(np.int64)
        lengths = m.indptr[nodes + 1].astype(np.int64) - lo
        idx = expand_ranges(lo, lengths)
        owner = np.repeat(np.arange(len(nodes), dtype=np.int64), lengths)
        if self._allowed is not None or self._limit is not None:
            keep = np.ones(len(idx), dtype=bool)
            if self._allowed is not None:
                keep &= np.isin(self._type[m.data[idx]], self._allowed)
            if self._limit is not None:
                rank = np.cumsum(keep) - 1
                first = np.zeros(len(nodes), dtype=np.int64)
                counts = np.bincount(owner[keep], minlength=len(nodes))
                np.cumsum(counts[:-1], out=first[1:])
                keep &= (rank - first[owner]) < self._limit
            idx, owner = idx[keep], owner[keep]
        ptr = np.zeros(len(nodes) + 1, dtype=np.int64)
        np.cumsum(np.bincount(owner, minlength=len(nodes)), out=ptr[1:])
        return EdgeBlock(
            ptr=ptr, neighbours=m.indices[idx].astype(np.int64), edges=m.data[idx].astype(np.int64)
        )

    def degree(self, nodes: np.ndarray) -> np.ndarray:
        return np.asarray(self._degree[np.asarray(nodes, dtype=np.int64)], dtype=np.int64)


@dataclass(frozen=True)
class HalfPaths:
    """Simple paths from one anchor: ``nodes`` (n × d+1, column 0 = anchor), ``edges`` (n × d) and
    ``forward`` (n × d: True where the edge points away from the anchor)."""

    nodes: np.ndarray
    edges: np.ndarray
    forward: np.ndarray

    @property
    def depth(self) -> int:
        return int(self.edges.shape[1])

    @classmethod
    def root(cls, anchor: int) -> HalfPaths:
        return cls(
            np.array([[anchor]], dtype=np.int64),
            np.zeros((1, 0), dtype=np.int64),
            np.zeros((1, 0), dtype=bool),
        )


@dataclass(frozen=True)
class Chains:
    """Candidate chains between two anchors, oriented from the first anchor: nodes (n × L+1), edges and
    ``forward`` (n × L: True where edge t goes from node t to node t+1), and each chain's hub penalty."""

    nodes: np.ndarray
    edges: np.ndarray
    forward: np.ndarray
    penalty: np.ndarray
    kind: np.ndarray

    def __len__(self) -> int:
        return int(self.nodes.shape[0])


class ChainSearch:
    """Half-paths cached per (anchor, direction, depth) for one query, and the joins that make chains."""

    def __init__(
        self, rows: TypedRows, anchors: np.ndarray, degree_cap: int, max_half_paths: int = 2_000_000
    ) -> None:
        self.rows = rows
        self.anchors = sorted_unique(np.asarray(anchors, dtype=np.int64))
        self.degree_cap = degree_cap
        self.max_half_paths = max_half_paths
        self.truncated = False
        self.hubs_skipped: set[int] = set()
        self._halves: dict[tuple[int, str, int], HalfPaths] = {}

    def degrees(self, nodes: np.ndarray) -> np.ndarray:
        """Typed degrees (row sources cache them; the CSR one is a plain array lookup)."""
        nodes = np.asarray(nodes, dtype=np.int64)
        return self.rows.degree(nodes) if len(nodes) else np.zeros(0, dtype=np.int64)

    def usable(self, nodes: np.ndarray) -> np.ndarray:
        """May these nodes be expanded / serve as intermediates? Anchors always; others below the cap."""
        ok = np.isin(nodes, self.anchors) | (self.degrees(nodes) <= self.degree_cap)
        if not ok.all():
            self.hubs_skipped.update(sorted_unique(np.asarray(nodes)[~ok]).tolist())
        return ok

    def half(self, anchor: int, direction: HalfDirection, depth: int) -> HalfPaths:
        key = (anchor, direction, depth)
        if key not in self._halves:
            self._halves[key] = (
                HalfPaths.root(anchor)
                if depth == 0
                else self._extend(self.half(anchor, direction, depth - 1), direction)
            )
        return self._halves[key]

    def _extend(self, h: HalfPaths, direction: HalfDirection) -> HalfPaths:
        ends = h.nodes[:, -1]
        grow = np.flatnonzero(self.usable(ends)) if h.depth > 0 else np.arange(len(ends))
        uniq, inv = np.unique(ends[grow], return_inverse=True)
        parts: list[tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]] = []
        directions: tuple[Literal["out", "in"], ...]
        if direction == "both":
            directions = ("out", "in")
        elif direction == "out":
            directions = ("out",)
        else:
            directions = ("in",)
        for d in directions:
            block = self.rows.gather(uniq, d)
            lengths = np.diff(block.ptr)[inv]
            pos = expand_ranges(block.ptr[inv], lengths)
            parent = np.repeat(grow, lengths)
            parts.append((parent, block.neighbours[pos], block.edges[pos], np.full(len(pos), d == "out")))
        parent, new_nodes, new_edges, fwd = (np.concatenate(c) for c in zip(*parts, strict=True))
        simple = ~(h.nodes[parent] == new_nodes[:, None]).any(axis=1)
        parent, new_nodes, new_edges, fwd = (
            parent[simple],
            new_nodes[simple],
            new_edges[simple],
            fwd[simple],
        )
        if len(parent) > self.max_half_paths:
            self.truncated = True
            parent, new_nodes, new_edges, fwd = (
                a[: self.max_half_paths] for a in (parent, new_nodes, new_edges, fwd)
            )
        return HalfPaths(
            nodes=np.column_stack([h.nodes[parent], new_nodes]),
            edges=np.column_stack([h.edges[parent], new_edges]),
            forward=np.column_stack([h.forward[parent], fwd]),
        )

    def join(self, left: HalfPaths, right: HalfPaths, kind: int) -> Chains:
        """Chains ``left + reversed(right)`` meeting at a shared end node, simple, hubs excluded."""
        order = np.argsort(right.nodes[:, -1], kind="stable")
        r_end = right.nodes[order, -1]
        l_end = left.nodes[:, -1]
        lo = np.searchsorted(r_end, l_end, side="left")
        hi = np.searchsorted(r_end, l_end, side="right")
        li = np.repeat(np.arange(len(l_end)), hi - lo)
        ri = order[expand_ranges(lo, hi - lo)]
        ln, rn = left.nodes[li, :-1], right.nodes[ri, :-1]
        ok = (
            ~(ln[:, :, None] == rn[:, None, :]).any(axis=(1, 2))
            if ln.size and rn.size
            else np.ones(len(li), bool)
        )
        if left.depth > 0 and right.depth > 0 and ok.any():
            meet = left.nodes[li[ok], -1]
            ok[np.flatnonzero(ok)] = self.usable(meet)
        li, ri = li[ok], ri[ok]
        nodes = np.column_stack([left.nodes[li], right.nodes[ri, :-1][:, ::-1]])
        edges = np.column_stack([left.edges[li], right.edges[ri][:, ::-1]])
        forward = np.column_stack([left.forward[li], ~right.forward[ri][:, ::-1]])
        inner = nodes[:, 1:-1]
        penalty = (
            np.log(np.maximum(self.degrees(inner.ravel()), 1)).reshape(inner.shape).sum(axis=1)
            if inner.size
            else np.zeros(len(nodes))
        )
        return Chains(nodes, edges.astype(np.int64), forward.astype(bool), penalty, np.full(len(nodes), kind))

    def chains_between(self, i: int, j: int, k: int, types: tuple[ChainType, ...] = CHAIN_TYPES) -> Chains:
        """All simple chains of the requested types between anchors i and j, of length 1…k."""
        found: list[Chains] = []
        for length in range(1, k + 1):
            a, b = (length + 1) // 2, length // 2
            if "path" in types:
                found.append(self.join(self.half(i, "out", a), self.half(j, "in", b), 0))
                found.append(self.join(self.half(i, "in", a), self.half(j, "out", b), 0))
            turns: tuple[tuple[int, ChainType, HalfDirection], ...] = (
                (1, "co_ancestor", "out"),
                (2, "co_occurrence", "in"),
            )
            for kind, t, d in turns:
                if t in types:
                    for left in range(1, length):
                        found.append(self.join(self.half(i, d, left), self.half(j, d, length - left), kind))
        return concat_chains(found)

    def shortest_between(self, i: int, j: int, max_length: int) -> Chains:
        """All shortest simple paths between i and j, edges taken in either direction (BCG), ≤ max_length."""
        for length in range(1, max_length + 1):
            a, b = (length + 1) // 2, length // 2
            found = self.join(self.half(i, "both", a), self.half(j, "both", b), 3)
            if len(found):
                return found
        return concat_chains([])


def concat_chains(parts: list[Chains]) -> Chains:
    """Chains of different lengths in one object: shorter rows are padded with -1 (nodes, edges)."""
    parts = [p for p in parts if len(p)]
    if not parts:
        empty = np.zeros((0, 1), dtype=np.int64)
        return Chains(
            empty, empty[:, :0], empty[:, :0].astype(bool), np.zeros(0), np.zeros(0, dtype=np.int64)
        )
    width = max(p.edges.shape[1] for p in parts)

    def pad(a: np.ndarray, w: int, fill: object) -> np.ndarray:
        return np.pad(a, ((0, 0), (0, w - a.shape[1])), constant_values=fill)  # type: ignore[call-overload]

    return Chains(
        nodes=np.concatenate([pad(p.nodes, width + 1, -1) for p in parts]),
        edges=np.concatenate([pad(p.edges, width, -1) for p in parts]),
        forward=np.concatenate([pad(p.forward, width, False) for p in parts]),
        penalty=np.concatenate([p.penalty for p in parts]),
        kind=np.concatenate([p.kind for p in parts]),
    )


def chain_lengths(chains: Chains) -> np.ndarray:
    return (chains.edges >= 0).sum(axis=1)


def best_candidates(chains: Chains, limit: int) -> np.ndarray:
    """Indices of chains whose (length, penalty) is within the best ``limit``, *ties included*.

    The final tie-break is the chain id (a hash of relation ids) which only the caller can compute, so
    every chain tied with the ``limit``-th best is kept for it.
    """
    if len(chains) <= limit:
        return np.lexsort((chains.penalty, chain_lengths(chains)))
    lengths = chain_lengths(chains)
    order = np.lexsort((chains.penalty, lengths))
    cut_len, cut_pen = lengths[order[limit - 1]], chains.penalty[order[limit - 1]]
    keep = (lengths < cut_len) | ((lengths == cut_len) & (chains.penalty <= cut_pen))
    return order[keep[order]]


def pareto_front(objectives: np.ndarray) -> np.ndarray:
    """Mask of rows not dominated by any other row, all objectives maximised (BCG Algorithm 1, step 6).

    ``b`` dominates ``a`` when ``b ≥ a`` everywhere and ``b > a`` somewhere; equal rows are all kept.
    O(n²) comparisons, fine for the few hundred documents mapped to one path element.
    """
    obj = np.asarray(objectives, dtype=np.float64)
    if obj.ndim == 1:
        obj = obj[:, None]
    ge = np.all(obj[None, :, :] >= obj[:, None, :], axis=2)
    gt = np.any(obj[None, :, :] > obj[:, None, :], axis=2)
    return np.asarray(~np.any(ge & gt, axis=1), dtype=bool)


def prioritise(
    pools: Sequence[tuple[str, Sequence[str]]],
    document_of: Mapping[str, str],
    objectives: Mapping[str, Sequence[float]],
    evidence_order: Mapping[str, int],
    limit: int,
) -> list[tuple[str, str, int]]:
    """BCG Algorithm 1 (Retrieval Prioritization Ranking): ``(evidence id, element, rank S)``, best first.

    ``pools`` are the path's elements in visiting order with their evidence ids. In rounds, each element in
    turn takes the evidence of its Pareto-optimal documents (``objectives`` per document, maximised), gives
    it rank S, S += 1, and removes it from every pool; until ``limit`` or every pool is empty.

    Departure, and why: documents with the *same* objective vector are one point of the front, and only the
    first in rank order (highest ``evidence_order`` of its evidence, then document id) is taken per round.
    With citations and dates (BCG's corpus) equal vectors are rare; without them (all of MedQuAD) every
    document would tie, the first element would fill ``limit`` alone, and the rebalancing across path
    elements, the point of the algorithm, would be lost.
    """
    out: list[tuple[str, str, int]] = []
    taken: set[str] = set()
    rank = 1
    progressed = True
    while len(out) < limit and progressed:
        progressed = False
        for element, pool in pools:
            remaining = [e for e in pool if e not in taken]
            if not remaining or len(out) >= limit:
                continue
            best: dict[str, int] = {}
            for e in remaining:
                d = document_of[e]
                best[d] = max(best.get(d, 0), evidence_order.get(e, 0))
            docs = sorted(best, key=lambda d: (-best[d], d))
            obj = np.array([objectives[d] for d in docs], dtype=np.float64)
            points: dict[tuple[float, ...], str] = {}
            for d, vector, ok in zip(docs, obj.tolist(), pareto_front(obj).tolist(), strict=True):
                if ok:
                    points.setdefault(tuple(vector), d)
            front = set(points.values())
            for e in remaining:
                if document_of[e] in front and len(out) < limit:
                    out.append((e, element, rank))
                    taken.add(e)
            rank += 1
            progressed = True
    return out
