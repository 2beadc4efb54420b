"""The ``GraphStore`` interface: every graph read the retrieval tools make.

Why an interface: the embedded store (SQLite tables + scipy CSR adjacency) serves one machine; Neo4j serves
teams whose graph outgrows it. The tools only ever talk to this interface, so both backends must give the
same answers to the same calls (a test asserts it). All operations are *batched* (they take lists of ids)
because a round trip per node would make a Neo4j-backed walk unusably slow; results are returned in a
deterministic order (sorted by id unless stated) so that both backends agree exactly.

Graph algorithms (walks, PPR, chain search) do not live here: they run in Python over what these calls
return (graphs/algorithms/views.py), so they behave the same on both backends and need no server plugin.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Literal

from graphs.model.schema import Document, Entity, Evidence, Relation, Topic

Direction = Literal["out", "in", "both"]


@dataclass(frozen=True)
class Subgraph:
    """Nodes and typed edges around some seeds (for chain search and PageRank in Python)."""

    nodes: tuple[str, ...]
    relations: tuple[Relation, ...]
    truncated: bool = False
    skipped_hubs: tuple[str, ...] = field(default=())


class StoreError(RuntimeError):
    """A store is unreachable, corrupt or incompatible; the message says what to do."""


class GraphStore(ABC):
    """Read access to the typed knowledge graph and the entity–topic–evidence hypergraph."""

    # ----- entities -----
    @abstractmethod
    def get_entities(self, ids: Sequence[str]) -> dict[str, Entity]:
        """Entities by id; unknown ids are simply absent from the result."""

    @abstractmethod
    def find_entities(self, name: str, limit: int = 10) -> list[Entity]:
        """Entities whose normalised name or synonym equals ``name`` (exact, case-insensitive).

        Ordered by degree (descending) then id, so the most connected sense of an ambiguous name comes first.
        """

    @abstractmethod
    def degrees(self, ids: Sequence[str]) -> dict[str, int]:
        """Typed-graph degree (in + out) of each known id."""

    # ----- typed relation graph -----
    @abstractmethod
    def neighbors(
        self,
        ids: Sequence[str],
        direction: Direction = "both",
        relation_types: Sequence[str] | None = None,
        limit_per_node: int = 500,
    ) -> list[Relation]:
        """Edges incident to the given nodes, sorted by (head, relation, tail).

        ``direction="out"`` gives edges whose head is in ``ids``; ``"in"`` those whose tail is. At most
        ``limit_per_node`` edges per node and direction are returned: the first in (neighbour id, relation
        id) order, which is the order of the CSR rows.
        """

    @abstractmethod
    def get_relations(self, ids: Sequence[str]) -> dict[str, Relation]:
        """Relations by id."""

    @abstractmethod
    def relation_types(self) -> list[str]:
        """All relation types present, sorted (the schema's known set: used to validate requests)."""

    def k_hop(
        self, seeds: Sequence[str], k: int, max_nodes: int = 5000, degree_cap: int | None = None
    ) -> Subgraph:
        """Undirected breadth-first expansion up to ``k`` hops, bounded by ``max_nodes``.

        Nodes whose degree exceeds ``degree_cap`` are kept but not expanded (hub control), and reported.
        Implemented on top of :meth:`neighbors`, so every backend gets the same semantics.
        """
        frontier = sorted(set(self.get_entities(seeds)))
        seen: set[str] = set(frontier)
        relations: dict[str, Relation] = {}
        hubs: list[str] = []
        truncated = False
        for _ in range(k):
            if not frontier:
                break
            expandable = frontier
            if degree_cap is not None:
                deg = self.degrees(frontier)
                expandable = [n for n in frontier if deg.get(n, 0) <= degree_cap or n in seeds]
                hubs.extend(n for n in frontier if n not in expandable)
            next_frontier: set[str] = set()
            for rel in self.neighbors(expandable, "both"):
                for node in (rel.head, rel.tail):
                    if node not in seen:
                        if len(seen) >= max_nodes:
                            truncated = True
                            continue
                        seen.add(node)
                        next_frontier.add(node)
                if rel.head in seen and rel.tail in seen:
                    relations[rel.id] = rel
            frontier = sorted(next_frontier)
        for rel in self.neighbors(sorted(seen), "out"):
            if rel.tail in seen:
                relations.setdefault(rel.id, rel)
        return Subgraph(
            nodes=tuple(sorted(seen)),
            relations=tuple(sorted(relations.values(), key=lambda r: (r.head, r.relation, r.tail))),
            truncated=truncated,
            skipped_hubs=tuple(sorted(set(hubs))),
        )

    # ----- hypergraph -----
    @abstractmethod
    def entity_topics(self, entity_ids: Sequence[str]) -> dict[str, list[tuple[str, float]]]:
        """For each entity, its (topic id, eq. 6 weight) edges sorted by topic id."""

    @abstractmethod
    def topic_entities(self, topic_ids: Sequence[str]) -> dict[str, list[tuple[str, float]]]:
        """For each topic, its (entity id, eq. 6 weight) edges sorted by entity id."""

    @abstractmethod
    def get_topics(self, ids: Sequence[str]) -> dict[str, Topic]:
        """Topics by id, with their evidence ids."""

    @abstractmethod
    def get_evidence(self, ids: Sequence[str]) -> dict[str, Evidence]:
        """Evidence units by id."""

    @abstractmethod
    def evidence_entities(self, evidence_ids: Sequence[str]) -> dict[str, list[str]]:
        """``f(e)``: the entities mentioned in each evidence unit (keyword entity included), sorted."""

    @abstractmethod
    def entity_evidence(self, entity_ids: Sequence[str], limit_per_entity: int = 200) -> dict[str, list[str]]:
        """Inverse of ``f``: evidence ids that mention each entity, sorted by id, capped."""

    @abstractmethod
    def get_documents(self, ids: Sequence[str]) -> dict[str, Document]:
        """Documents by id."""

    @abstractmethod
    def counts(self) -> dict[str, int]:
        """Row counts: entities, relations, documents, evidence, topics, topic_edges."""

    def close(self) -> None:  # noqa: B027 - optional hook, most stores hold nothing to release
        """Release connections or file handles."""
