"""Graph algorithms for the retrieval tools, and the adapters that feed them from a ``GraphStore``.

The algorithms themselves are pure numpy/scipy over integer node ids and live in two modules:
:mod:`graphs.algorithms.ppr` (random walks, local-push and exact personalised PageRank on the entity↔topic
graph) and :mod:`graphs.algorithms.paths` (reasoning chains, shortest paths, Pareto fronts on the typed
graph). They read rows
through two small interfaces, ``WeightedRows`` and ``TypedRows``. This module provides both interfaces
twice, with the string-id bookkeeping the tools need:

* **embedded fast path** — views over ``EmbeddedGraphStore.adjacency`` (CSR arrays already in memory;
  built once per KB and cached), so a walk or a chain search is array arithmetic with no per-node call;
* **store path** — the plain ``GraphStore`` interface (what a Neo4j store implements): rows are fetched
  in *batches* (one call per walk step / push round / BFS layer) and cached for the duration of one tool
  call, with node and edge ids mapped to local integers as they are discovered.

Both give the same answers (tests assert it): rows keep the store's neighbour order, walk sampling uses
exact integer arithmetic, and the chain ranking depends only on content (length, degrees, relation ids).
"""

from __future__ import annotations

import weakref
from abc import ABC, abstractmethod
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal, cast

import numpy as np

from graphs.algorithms.paths import (
    CHAIN_TYPES,
    Chains,
    ChainSearch,
    ChainType,
    CSRTypedRows,
    EdgeBlock,
    TypedRows,
    best_candidates,
    chain_lengths,
    pareto_front,
    prioritise,
)
from graphs.algorithms.ppr import (
    DEFAULT_RESTART,
    CSRRows,
    PushResult,
    RowBlock,
    WeightedRows,
    bipartite_csr,
    exact_ppr,
    push_ppr,
    random_walks,
    row_sums,
    sorted_unique,
    visit_frequency,
)
from graphs.model.schema import Relation
from graphs.stores.adjacency import Adjacency
from graphs.stores.base import GraphStore
from graphs.stores.embedded import EmbeddedGraphStore

__all__ = [
    "CHAIN_TYPES",
    "DEFAULT_RESTART",
    "BipartiteView",
    "ChainSearch",
    "ChainType",
    "Chains",
    "PushResult",
    "RelationView",
    "TypedView",
    "best_candidates",
    "bipartite_view",
    "chain_lengths",
    "exact_ppr",
    "pareto_front",
    "prioritise",
    "push_ppr",
    "random_walks",
    "typed_view",
    "visit_frequency",
]


# ----------------------------------------------------------------------------------------------------------
# entity ↔ topic bipartite graph
# ----------------------------------------------------------------------------------------------------------
class BipartiteView(ABC):
    """Entities and topics as one integer node space, with a ``WeightedRows`` over it."""

    rows: WeightedRows

    @abstractmethod
    def entity_nodes(self, ids: Sequence[str]) -> dict[str, int]:
        """Node of each *known* entity id (unknown ids are absent)."""

    @abstractmethod
    def node_ids(self, nodes: np.ndarray) -> list[str]:
        """Entity or topic id of each node."""

    @abstractmethod
    def is_topic(self, nodes: np.ndarray) -> np.ndarray:
        """Boolean mask: which nodes are topics."""

    def has_label(self, topic_nodes: np.ndarray, labels: set[str]) -> np.ndarray:
        """Which of these topic nodes carry one of ``labels`` (topic id = ``T:<entity>|<label>``)."""
        return np.array([i.rsplit("|", 1)[-1] in labels for i in self.node_ids(topic_nodes)], dtype=bool)


@dataclass
class _EmbeddedBipartite(BipartiteView):
    """CSR view of the embedded store's entity×topic matrix (entity i → i, topic j → n_e + j)."""

    adjacency: Adjacency
    entity_index: dict[str, int]
    rows: WeightedRows

    def entity_nodes(self, ids: Sequence[str]) -> dict[str, int]:
        return {i: self.entity_index[i] for i in ids if i in self.entity_index}

    def node_ids(self, nodes: np.ndarray) -> list[str]:
        n_e = len(self.adjacency.entity_ids)
        return [
            str(self.adjacency.entity_ids[n]) if n < n_e else str(self.adjacency.topic_ids[n - n_e])
            for n in np.asarray(nodes).tolist()
        ]

    topic_labels: np.ndarray
    """Label of every topic row, parsed once, so a label filter is one vectorised ``isin``."""

    def is_topic(self, nodes: np.ndarray) -> np.ndarray:
        return np.asarray(nodes) >= len(self.adjacency.entity_ids)

    def has_label(self, topic_nodes: np.ndarray, labels: set[str]) -> np.ndarray:
        rows = np.asarray(topic_nodes, dtype=np.int64) - len(self.adjacency.entity_ids)
        return np.isin(self.topic_labels[rows], sorted(labels))


class StoreBipartiteRows(WeightedRows, BipartiteView):
    """Rows fetched through ``GraphStore.entity_topics`` / ``topic_entities`` in batches, cached per call."""

    def __init__(self, store: GraphStore) -> None:
        self.store = store
        self.rows = self
        self._ids: list[str] = []
        self._topic: list[bool] = []
        self._index: dict[tuple[bool, str], int] = {}
        self._cache: dict[int, tuple[np.ndarray, np.ndarray]] = {}

    def _node(self, is_topic: bool, node_id: str) -> int:
        key = (is_topic, node_id)
        node = self._index.get(key)
        if node is None:
            node = self._index[key] = len(self._ids)
            self._ids.append(node_id)
            self._topic.append(is_topic)
        return node

    def entity_nodes(self, ids: Sequence[str]) -> dict[str, int]:
        known = self.store.get_entities(list(dict.fromkeys(ids)))
        return {i: self._node(False, i) for i in sorted(known)}

    def node_ids(self, nodes: np.ndarray) -> list[str]:
        return [self._ids[n] for n in np.asarray(nodes).tolist()]

    def is_topic(self, nodes: np.ndarray) -> np.ndarray:
        flags = np.array(self._topic, dtype=bool)
        return flags[np.asarray(nodes, dtype=np.int64)] if len(flags) else np.zeros(len(nodes), dtype=bool)

    def _fetch(self, nodes: np.ndarray) -> None:
        missing = [n for n in sorted_unique(nodes).tolist() if n not in self._cache]
        if not missing:
            return
        entities = [self._ids[n] for n in missing if not self._topic[n]]
        topics = [self._ids[n] for n in missing if self._topic[n]]
        fetched: dict[int, list[tuple[str, float]]] = {}
        for node_id, edges in (self.store.entity_topics(entities) if entities else {}).items():
            fetched[self._index[(False, node_id)]] = [(t, w) for t, w in edges]
        topic_rows = self.store.topic_entities(topics) if topics else {}
        for node_id, edges in topic_rows.items():
            fetched[self._index[(True, node_id)]] = list(edges)
        for n in missing:
            edges = fetched.get(n, [])
            neighbour_is_topic = not self._topic[n]
            self._cache[n] = (
                np.array([self._node(neighbour_is_topic, i) for i, _ in edges], dtype=np.int64),
                np.array([w for _, w in edges], dtype=np.float64),
            )

    def gather(self, nodes: np.ndarray) -> RowBlock:
        self._fetch(nodes)
        rows = [self._cache[n] for n in np.asarray(nodes).tolist()]
        ptr = np.zeros(len(rows) + 1, dtype=np.int64)
        np.cumsum([len(r[0]) for r in rows], out=ptr[1:])
        return RowBlock(
            ptr=ptr,
            neighbours=np.concatenate([r[0] for r in rows]) if rows else np.zeros(0, dtype=np.int64),
            weights=np.concatenate([r[1] for r in rows]) if rows else np.zeros(0),
        )

    def weighted_degree(self, nodes: np.ndarray) -> np.ndarray:
        block = self.gather(np.asarray(nodes, dtype=np.int64))
        return row_sums(block.weights, block.ptr)


_EMBEDDED: dict[int, tuple[weakref.ref[Adjacency], _EmbeddedBipartite]] = {}


def _embedded_bipartite(adjacency: Adjacency) -> _EmbeddedBipartite:
    """The CSR view of an adjacency, built once (an O(E) concatenation) and reused while it lives."""
    hit = _EMBEDDED.get(id(adjacency))
    if hit is not None and hit[0]() is adjacency:
        return hit[1]
    view = _EmbeddedBipartite(
        # A proxy, not the adjacency itself: a cached view that held its key strongly would keep every
        # adjacency ever opened alive, and the weakref below would never fire.
        adjacency=cast(Adjacency, weakref.proxy(adjacency)),
        entity_index=adjacency.entity_index(),
        rows=CSRRows(bipartite_csr(adjacency.et_csr, adjacency.te_csr)),
        topic_labels=np.array([str(t).rsplit("|", 1)[-1] for t in adjacency.topic_ids.tolist()], dtype=str),
    )
    key = id(adjacency)
    _EMBEDDED[key] = (weakref.ref(adjacency, lambda _ref: _EMBEDDED.pop(key, None)), view)
    return view


def bipartite_view(store: GraphStore, fast_path: bool = True) -> BipartiteView:
    """The embedded CSR view when available (and allowed), else batched reads through the interface."""
    if fast_path and isinstance(store, EmbeddedGraphStore):
        return _embedded_bipartite(store.adjacency)
    return StoreBipartiteRows(store)


# ----------------------------------------------------------------------------------------------------------
# typed relation graph
# ----------------------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class RelationView:
    """What a chain needs to know about one edge."""

    id: str
    head: str
    relation: str
    tail: str


class TypedView(ABC):
    """Entities as integer nodes and relations as integer edges, with a ``TypedRows`` over them."""

    rows: TypedRows

    @abstractmethod
    def entity_nodes(self, ids: Sequence[str]) -> dict[str, int]:
        """Node of each *known* entity id."""

    @abstractmethod
    def node_ids(self, nodes: np.ndarray) -> list[str]:
        """Entity id of each node."""

    @abstractmethod
    def relations(self, edges: np.ndarray) -> list[RelationView]:
        """The relation behind each edge id."""


@dataclass
class _EmbeddedTyped(TypedView):
    adjacency: Adjacency
    entity_index: dict[str, int]
    rows: TypedRows

    def entity_nodes(self, ids: Sequence[str]) -> dict[str, int]:
        return {i: self.entity_index[i] for i in ids if i in self.entity_index}

    def node_ids(self, nodes: np.ndarray) -> list[str]:
        return [str(self.adjacency.entity_ids[n]) for n in np.asarray(nodes).tolist()]

    def relations(self, edges: np.ndarray) -> list[RelationView]:
        a = self.adjacency
        return [
            RelationView(
                id=str(a.relation_ids[e]),
                head=str(a.entity_ids[a.rel_head[e]]),
                relation=str(a.relation_types[a.rel_type[e]]),
                tail=str(a.entity_ids[a.rel_tail[e]]),
            )
            for e in np.asarray(edges).tolist()
        ]


class StoreTypedRows(TypedRows, TypedView):
    """Typed rows through ``GraphStore.neighbors`` / ``degrees``: one batched call per layer, cached."""

    def __init__(self, store: GraphStore, relation_types: Sequence[str] | None, limit_per_node: int) -> None:
        self.store = store
        self.rows = self
        self._types = list(relation_types) if relation_types is not None else None
        self._limit = limit_per_node
        self._ids: list[str] = []
        self._index: dict[str, int] = {}
        self._edges: list[Relation] = []
        self._edge_index: dict[str, int] = {}
        self._rows: dict[tuple[str, int], tuple[np.ndarray, np.ndarray]] = {}
        self._degree = np.full(0, -1, dtype=np.int64)

    def _node(self, node_id: str) -> int:
        node = self._index.get(node_id)
        if node is None:
            node = self._index[node_id] = len(self._ids)
            self._ids.append(node_id)
        return node

    def _edge(self, rel: Relation) -> int:
        edge = self._edge_index.get(rel.id)
        if edge is None:
            edge = self._edge_index[rel.id] = len(self._edges)
            self._edges.append(rel)
        return edge

    def entity_nodes(self, ids: Sequence[str]) -> dict[str, int]:
        known = self.store.get_entities(list(dict.fromkeys(ids)))
        return {i: self._node(i) for i in sorted(known)}

    def node_ids(self, nodes: np.ndarray) -> list[str]:
        return [self._ids[n] for n in np.asarray(nodes).tolist()]

    def relations(self, edges: np.ndarray) -> list[RelationView]:
        return [
            RelationView(id=r.id, head=r.head, relation=r.relation, tail=r.tail)
            for r in (self._edges[e] for e in np.asarray(edges).tolist())
        ]

    def gather(self, nodes: np.ndarray, direction: Literal["out", "in"]) -> EdgeBlock:
        node_list = np.asarray(nodes, dtype=np.int64).tolist()
        missing = sorted({n for n in node_list if (direction, n) not in self._rows})
        if missing:
            grouped: dict[int, list[tuple[int, int]]] = {n: [] for n in missing}
            for rel in self.store.neighbors(
                [self._ids[n] for n in missing], direction, self._types, self._limit
            ):
                own, other = (rel.head, rel.tail) if direction == "out" else (rel.tail, rel.head)
                owner = self._index.get(own)
                if owner in grouped:
                    grouped[owner].append((self._node(other), self._edge(rel)))
            for n, pairs in grouped.items():
                self._rows[(direction, n)] = (
                    np.array([p[0] for p in pairs], dtype=np.int64),
                    np.array([p[1] for p in pairs], dtype=np.int64),
                )
        rows = [self._rows[(direction, n)] for n in node_list]
        ptr = np.zeros(len(rows) + 1, dtype=np.int64)
        np.cumsum([len(r[0]) for r in rows], out=ptr[1:])
        empty = np.zeros(0, dtype=np.int64)
        return EdgeBlock(
            ptr=ptr,
            neighbours=np.concatenate([r[0] for r in rows]) if rows else empty,
            edges=np.concatenate([r[1] for r in rows]) if rows else empty,
        )

    def degree(self, nodes: np.ndarray) -> np.ndarray:
        nodes = np.asarray(nodes, dtype=np.int64)
        if len(self._degree) < len(self._ids):
            grown = np.full(max(len(self._ids), 2 * len(self._degree)), -1, dtype=np.int64)
            grown[: len(self._degree)] = self._degree
            self._degree = grown
        unknown = sorted_unique(nodes[self._degree[nodes] < 0])
        if len(unknown):
            found = self.store.degrees([self._ids[n] for n in unknown.tolist()])
            self._degree[unknown] = [found.get(self._ids[n], 0) for n in unknown.tolist()]
        return self._degree[nodes]


_EMBEDDED_TYPED: dict[int, tuple[weakref.ref[Adjacency], dict[str, int], np.ndarray]] = {}


def typed_view(
    store: GraphStore,
    relation_types: Sequence[str] | None = None,
    limit_per_node: int = 500,
    fast_path: bool = True,
) -> TypedView:
    """The embedded CSR view when available (and allowed), else batched ``neighbors`` calls."""
    if not (fast_path and isinstance(store, EmbeddedGraphStore)):
        return StoreTypedRows(store, relation_types, limit_per_node)
    adj = store.adjacency
    hit = _EMBEDDED_TYPED.get(id(adj))
    if hit is None or hit[0]() is not adj:
        key = id(adj)
        hit = (weakref.ref(adj, lambda _r: _EMBEDDED_TYPED.pop(key, None)), adj.entity_index(), adj.degrees())
        _EMBEDDED_TYPED[key] = hit
    allowed = None
    if relation_types is not None:
        codes = {str(t): i for i, t in enumerate(adj.relation_types.tolist())}
        allowed = np.array(sorted(codes[t] for t in relation_types if t in codes), dtype=np.int64)
    rows = CSRTypedRows(adj.out_csr, adj.in_csr, adj.rel_type, allowed, limit_per_node, degree=hit[2])
    return _EmbeddedTyped(adjacency=adj, entity_index=hit[1], rows=rows)
