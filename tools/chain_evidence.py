"""Map evidence to reasoning_chain's shortest paths and order it with BCG Algorithm 1 (shortest_path mode).

Algorithm 1 adaptation: the path's elements are its edges (evidence mentioning both ends, preferred) then
its nodes (evidence mentioning the node); in rounds, each element in turn hands its Pareto-optimal
documents' evidence the next rank S. The objectives are recency (document year) and impact. Our documents
carry no citation counts, so impact uses a documented proxy: *path coverage*, the number of distinct path
entities the document's evidence mentions. Without dates, the front is decided by coverage alone.
Documents with equal objectives count as one front point and go one per round in rank order (see
``graphs.algorithms.paths.prioritise``); within a rank, evidence follows path order, then evidence id.

Why a module of its own: finding chains works on the graph alone, this step on the text side (which
evidence mentions which path entity, documents' years), with its own read bound
(:data:`EVIDENCE_PER_ENTITY`) and its own departures from the paper; tools/reasoning_chain.py finds the
paths and hands them here.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Protocol

from pydantic import BaseModel, Field

from graphs.algorithms.views import RelationView, prioritise
from graphs.stores.base import GraphStore

EVIDENCE_PER_ENTITY = 100
"""Evidence ids read per path entity in shortest_path mode: bounds the records Algorithm 1 must load
(every pool's documents are needed for the first round's fronts), so the mode stays in tens of ms."""


class MappedPath(Protocol):
    """What the mapping reads of a chain: its entity ids in order and the relations between them."""

    nodes: list[str]
    rels: list[RelationView]


class PathEvidence(BaseModel):
    """Evidence mapped to a shortest path (BCG): rank S from Algorithm 1 (1 = first)."""

    evidence_id: str
    document_id: str
    rank: int
    element: str = Field(description="Relation id (both ends mentioned) or entity id it was mapped to.")
    year: int | None
    path_coverage: int = Field(description="Impact proxy: path entities the document's evidence mentions.")
    snippet: str


_YEAR = re.compile(r"^\s*(\d{4})")


def _evidence_pools(
    store: GraphStore, paths: Sequence[MappedPath]
) -> tuple[list[tuple[str, list[str]]], dict[str, list[str]]]:
    """Evidence per path element, edges first: (element id, evidence ids), and ``f(e)`` of all of them.

    An edge's evidence mentions both its ends: read the evidence of the end with fewer mentions and keep
    those whose ``f(e)`` holds the other end (complete whenever that end is under the per-entity cap). An
    evidence unit goes to the first edge that claims it, then nodes get what is left.
    """
    path_nodes = list(dict.fromkeys(n for c in paths for n in c.nodes))
    mentions = store.entity_evidence(path_nodes, limit_per_entity=EVIDENCE_PER_ENTITY)
    f = store.evidence_entities(sorted({e for ids in mentions.values() for e in ids}))
    pools: list[tuple[str, list[str]]] = []
    claimed: set[str] = set()
    for c in paths:
        for rel, a, b in zip(c.rels, c.nodes[:-1], c.nodes[1:], strict=True):
            small, other = (a, b) if len(mentions.get(a, [])) <= len(mentions.get(b, [])) else (b, a)
            both = [e for e in mentions.get(small, []) if other in f.get(e, ()) and e not in claimed]
            claimed.update(both)
            pools.append((rel.id, both))
    for n in path_nodes:
        pools.append((n, [e for e in mentions.get(n, []) if e not in claimed]))
    return pools, f


def map_evidence(store: GraphStore, paths: Sequence[MappedPath], limit: int) -> list[PathEvidence]:
    """BCG Algorithm 1 over the evidence mapped to the paths' edges and nodes (see the module docstring)."""
    if not paths:
        return []
    pools, f = _evidence_pools(store, paths)
    path_nodes = set(n for c in paths for n in c.nodes)
    evidence = store.get_evidence(sorted({e for _, pool in pools for e in pool}))
    if not evidence:
        return []
    docs = store.get_documents(sorted({ev.document_id for ev in evidence.values()}))
    coverage: dict[str, set[str]] = {}
    on_path: dict[str, int] = {}
    for e, ev in evidence.items():
        mentioned = path_nodes.intersection(f.get(e, ()))
        on_path[e] = len(mentioned)
        coverage.setdefault(ev.document_id, set()).update(mentioned)
    year: dict[str, int | None] = {}
    for d, doc in docs.items():
        m = _YEAR.match(doc.date or "")
        year[d] = int(m.group(1)) if m else None
    ranked = prioritise(
        [(element, [e for e in pool if e in evidence]) for element, pool in pools],
        document_of={e: ev.document_id for e, ev in evidence.items()},
        objectives={d: (year.get(d) or -1, len(coverage.get(d, ()))) for d in coverage},
        evidence_order=on_path,
        limit=limit,
    )
    return [
        PathEvidence(
            evidence_id=e,
            document_id=evidence[e].document_id,
            rank=rank,
            element=element,
            year=year.get(evidence[e].document_id),
            path_coverage=len(coverage.get(evidence[e].document_id, ())),
            snippet=" ".join(evidence[e].text.split())[:240],
        )
        for e, element, rank in ranked
    ]
