"""``reasoning_chain``: typed relation chains between the question's entities, ready to cite.

``mode="chains"`` (HyKGE §4.2.2, seed 003): between every pair of anchors, within ``k`` hops, the path
(``i → … → j``), co-ancestor (``i → … ← j``) and co-occurrence (``i ← … → j``) chains, found by
meet-in-the-middle over out-/in-edges (graphs/algorithms/paths.py). ``mode="shortest_path"`` (BCG §3.2.3,
seed 002): the shortest path between each pair, edges in either direction, and the evidence mapped to its
nodes and edges, prioritised by BCG Algorithm 1. A single anchor gets its one-hop typed neighbourhood
(KG-Rank-style triples).

Defaults, and why: ``k = 3`` (HyKGE: performance peaks near 3 and the number of chains explodes past it);
``degree_cap = 200`` (a node with more typed edges, e.g. a phenotype or "disease" hub, says little about
how two entities relate and would multiply the search; anchors are exempt); ``max_chains_per_pair = 5`` and
``max_chains = 30`` (HyKGE's reader keeps topK ≈ 10 chains after reranking; 30 leaves the reranker a choice
without flooding a prompt). Ranking: shorter first, then lower hub penalty ``Σ log degree`` of the
intermediate nodes, then chain id; across pairs chains are taken round-robin so every connected pair is
represented before any pair gets its second chain. Chain ids are ``C:`` + a hash of the relation ids in
chain order (paths head → tail, other chains from the anchor with the smaller id), stable across rebuilds.

The evidence of shortest_path mode is mapped to the paths and ordered by BCG Algorithm 1 in
tools/chain_evidence.py (the adaptation and its impact proxy are described there).
"""

from __future__ import annotations

import math
from itertools import combinations, pairwise
from typing import Literal

import numpy as np
from langchain_core.tools import BaseTool
from pydantic import BaseModel, Field

from graphs.algorithms.views import (
    CHAIN_TYPES,
    Chains,
    ChainSearch,
    ChainType,
    RelationView,
    TypedView,
    best_candidates,
    typed_view,
)
from graphs.kb import KnowledgeBase
from graphs.model.schema import Entity, short_hash
from tools.chain_evidence import PathEvidence, map_evidence
from tools.common import as_langchain_tool

KIND_NAMES = {0: "path", 1: "co_ancestor", 2: "co_occurrence", 3: "shortest_path"}
DESCRIPTION_CHARS = 300


class ReasoningChainRequest(BaseModel):
    """Arguments of ``reasoning_chain``."""

    entity_ids: list[str] = Field(
        min_length=1,
        max_length=20,
        description="Anchor entity ids (linked question entities), e.g. ['DRUGBANK:DB00331', 'DOID:9352']. "
        "One id returns its one-hop relations.",
    )
    mode: Literal["chains", "shortest_path"] = Field(
        default="chains",
        description="'chains': HyKGE path / co-ancestor / co-occurrence chains within k hops between every "
        "pair. 'shortest_path': the shortest path per pair plus evidence mapped to it (BCG).",
    )
    k: int = Field(default=3, ge=1, le=4, description="Maximum chain length in hops.")
    chain_types: list[ChainType] = Field(
        default_factory=lambda: list(CHAIN_TYPES), description="Chain types to search (chains mode)."
    )
    relation_types: list[str] | None = Field(
        default=None, description="Only use these relation types (e.g. ['treats', 'indicated_for'])."
    )
    max_chains_per_pair: int = Field(
        default=5, ge=1, le=20, description="Chains kept per anchor pair (shortest_path keeps the best one)."
    )
    max_chains: int = Field(default=30, ge=1, le=100, description="Chains returned in total.")
    degree_cap: int = Field(
        default=200, ge=2, le=100_000, description="Nodes with more edges are not used inside chains (hubs)."
    )
    max_edges_per_node: int = Field(
        default=5000, ge=10, le=100_000, description="Edges read per node and direction (anchors' cap)."
    )
    max_evidence: int = Field(default=20, ge=1, le=200, description="Evidence returned (shortest_path mode).")


class ChainNode(BaseModel):
    """An entity on a chain."""

    id: str
    name: str
    type: str


class ChainEdge(BaseModel):
    """A typed edge of a chain, in its stored direction (cite it by ``relation_id``)."""

    relation_id: str
    head: str
    relation: str
    tail: str


class Chain(BaseModel):
    """One reasoning chain, rendered and with everything needed to cite it."""

    chain_id: str
    chain_type: str = Field(description="path | co_ancestor | co_occurrence | shortest_path | one_hop")
    pattern: str = Field(description="Edge directions: path, co_ancestor, co_occurrence or mixed.")
    text: str = Field(description="e.g. 'Metformin -treats-> type 2 diabetes <-associated_with- X'")
    length: int
    hub_penalty: float = Field(
        description="Σ log(degree) of intermediate nodes (one_hop: of the neighbour); lower = more specific."
    )
    nodes: list[ChainNode]
    relations: list[ChainEdge]
    relation_ids: list[str]
    head_description: str
    tail_description: str


class PairSummary(BaseModel):
    """What was found between two anchors (``chains_found`` counts before the caps)."""

    source: str
    target: str
    chains_found: int
    chains_returned: int
    shortest_length: int | None


class ReasoningChainResult(BaseModel):
    """Chains (round-robin over pairs, best first), per-pair summaries, path evidence, and what was done."""

    chains: list[Chain]
    pairs: list[PairSummary]
    evidence: list[PathEvidence]
    anchors: list[str]
    unknown_ids: list[str]
    skipped_hubs: list[str] = Field(description="Hub nodes (degree > degree_cap) not used inside chains.")
    parameters: dict[str, object]
    warnings: list[str]


def chain_id(relation_ids: list[str]) -> str:
    """``C:`` + hash of the ordered relation ids: the same chain gets the same id after a rebuild."""
    return "C:" + short_hash(*relation_ids)


def _pattern(forward: list[bool]) -> str:
    flips = sum(1 for a, b in pairwise(forward) if a != b)
    if flips == 0:
        return "path"
    if flips == 1:
        return "co_ancestor" if forward[0] else "co_occurrence"
    return "mixed"


class _Candidate:
    """A chain in id space, oriented canonically (paths head → tail, others from the smaller anchor id)."""

    def __init__(
        self, nodes: list[str], rels: list[RelationView], forward: list[bool], kind: str, pen: float
    ):
        if not any(forward):  # a path read against its edges: turn it round
            nodes, rels, forward = nodes[::-1], rels[::-1], [True] * len(forward)
        self.nodes, self.rels, self.forward, self.kind, self.penalty = nodes, rels, forward, kind, pen
        self.id = chain_id([r.id for r in rels])

    @property
    def key(self) -> tuple[int, float, str]:
        return (len(self.rels), round(self.penalty, 9), self.id)


def _candidates(view: TypedView, chains: Chains, positions: np.ndarray, kind: str | None) -> list[_Candidate]:
    out: list[_Candidate] = []
    for p in positions.tolist():
        width = int((chains.edges[p] >= 0).sum())
        nodes = view.node_ids(chains.nodes[p, : width + 1])
        rels = view.relations(chains.edges[p, :width])
        kind_name = kind or KIND_NAMES[int(chains.kind[p])]
        out.append(
            _Candidate(nodes, rels, chains.forward[p, :width].tolist(), kind_name, float(chains.penalty[p]))
        )
    return out


def _description(entity: Entity | None, fallback: str) -> str:
    if entity is None:
        return fallback
    text = entity.description or f"{entity.name} ({entity.type})"
    return text[:DESCRIPTION_CHARS]


def _render(c: _Candidate, entities: dict[str, Entity]) -> Chain:
    def name(i: str) -> str:
        e = entities.get(i)
        return e.name if e else i

    text = name(c.nodes[0])
    for rel, fwd, node in zip(c.rels, c.forward, c.nodes[1:], strict=True):
        text += f" -{rel.relation}-> {name(node)}" if fwd else f" <-{rel.relation}- {name(node)}"
    return Chain(
        chain_id=c.id,
        chain_type=c.kind,
        pattern=_pattern(c.forward),
        text=text,
        length=len(c.rels),
        hub_penalty=round(c.penalty, 6),
        nodes=[
            ChainNode(id=i, name=name(i), type=entities[i].type if i in entities else "") for i in c.nodes
        ],
        relations=[
            ChainEdge(relation_id=r.id, head=r.head, relation=r.relation, tail=r.tail) for r in c.rels
        ],
        relation_ids=[r.id for r in c.rels],
        head_description=_description(entities.get(c.nodes[0]), c.nodes[0]),
        tail_description=_description(entities.get(c.nodes[-1]), c.nodes[-1]),
    )


def _one_hop(view: TypedView, search: ChainSearch, anchor: int, limit: int) -> tuple[list[_Candidate], int]:
    """All edges of a single anchor as length-1 chains, round-robin over relation types (diverse triples),
    each type's edges by neighbour degree (specific first) then chain id."""
    cands: list[_Candidate] = []
    me = view.node_ids(np.array([anchor]))[0]
    for direction in ("out", "in"):
        block = search.rows.gather(np.array([anchor]), direction)
        degs = search.degrees(block.neighbours)
        for other, edge, deg in zip(
            view.node_ids(block.neighbours), block.edges.tolist(), degs.tolist(), strict=True
        ):
            rel = view.relations(np.array([edge]))[0]
            nodes = [me, other] if direction == "out" else [other, me]
            cands.append(_Candidate(nodes, [rel], [True], "one_hop", math.log(max(deg, 1))))
    unique = {c.id: c for c in cands}
    by_type: dict[str, list[_Candidate]] = {}
    for c in sorted(unique.values(), key=lambda c: c.key):
        by_type.setdefault(c.rels[0].relation, []).append(c)
    return _round_robin([by_type[t] for t in sorted(by_type)], limit), len(unique)


def _round_robin(groups: list[list[_Candidate]], limit: int) -> list[_Candidate]:
    out: list[_Candidate] = []
    depth = 0
    while len(out) < limit and any(depth < len(g) for g in groups):
        layer = sorted((g[depth] for g in groups if depth < len(g)), key=lambda c: c.key)
        out.extend(layer[: limit - len(out)])
        depth += 1
    return out


def _empty(
    request: ReasoningChainRequest, anchors: list[str], unknown: list[str], warnings: list[str]
) -> ReasoningChainResult:
    return ReasoningChainResult(
        chains=[],
        pairs=[],
        evidence=[],
        anchors=anchors,
        unknown_ids=unknown,
        skipped_hubs=[],
        parameters=request.model_dump(),
        warnings=warnings,
    )


def reasoning_chain(
    kb: KnowledgeBase, request: ReasoningChainRequest, *, fast_path: bool = True
) -> ReasoningChainResult:
    """Chains (or shortest paths with evidence) between the anchors; see the module docstring.

    ``fast_path=False`` forces the plain ``GraphStore`` interface even on the embedded store (tests use it
    to check that both paths agree).
    """
    store = kb.store
    warnings: list[str] = []
    wanted = list(dict.fromkeys(request.entity_ids))
    relation_filter: list[str] | None = None
    if request.relation_types is not None:
        known_types = store.relation_types()
        relation_filter = [t for t in dict.fromkeys(request.relation_types) if t in known_types]
        invalid = [t for t in request.relation_types if t not in known_types]
        if invalid:
            warnings.append(
                f"unknown relation type(s) ignored: {', '.join(invalid)}; known: {', '.join(known_types)}"
            )
        if not relation_filter:
            warnings.append("no valid relation type left in the filter: no chains searched")
            return _empty(request, [], [], warnings)
    view = typed_view(store, relation_filter, request.max_edges_per_node, fast_path=fast_path)
    known = view.entity_nodes(wanted)
    unknown = [i for i in wanted if i not in known]
    if unknown:
        warnings.append(f"unknown entity id(s), ignored: {', '.join(unknown)}")
    anchors = sorted(known)
    if not anchors:
        warnings.append("no known anchor entity: nothing to connect")
        return _empty(request, anchors, unknown, warnings)
    search = ChainSearch(view.rows, np.array([known[a] for a in anchors]), request.degree_cap)

    pairs: list[PairSummary] = []
    groups: list[list[_Candidate]] = []
    if len(anchors) == 1:
        if request.mode == "shortest_path":
            warnings.append("a shortest path needs two entities: returning the anchor's one-hop relations")
        selected, found = _one_hop(view, search, known[anchors[0]], request.max_chains)
        if found > len(selected):
            warnings.append(f"{found} one-hop relations, {len(selected)} returned (max_chains)")
    else:
        per_pair = request.max_chains_per_pair if request.mode == "chains" else 1
        for a, b in combinations(anchors, 2):
            if request.mode == "chains":
                chains = search.chains_between(known[a], known[b], request.k, tuple(request.chain_types))
            else:
                chains = search.shortest_between(known[a], known[b], request.k)
            cands = sorted(
                _candidates(view, chains, best_candidates(chains, per_pair), None), key=lambda c: c.key
            )
            groups.append(cands[:per_pair])
            lengths = (chains.edges >= 0).sum(axis=1)
            pairs.append(
                PairSummary(
                    source=a,
                    target=b,
                    chains_found=len(chains),
                    chains_returned=0,
                    shortest_length=int(lengths.min()) if len(lengths) else None,
                )
            )
        selected = _round_robin(groups, request.max_chains)
        chosen = {c.id for c in selected}
        for summary, group in zip(pairs, groups, strict=True):
            summary.chains_returned = sum(1 for c in group if c.id in chosen)
        unconnected = [f"{p.source}–{p.target}" for p in pairs if p.chains_found == 0]
        if unconnected:
            warnings.append(f"no chain within {request.k} hops for: {', '.join(unconnected)}")
        if sum(len(g) for g in groups) > len(selected):
            warnings.append(f"chains capped at max_chains={request.max_chains}")
    if search.truncated:
        warnings.append("the search hit its size limit; some long chains may be missing (lower k)")
    hubs = view.node_ids(np.array(sorted(search.hubs_skipped), dtype=np.int64))
    if hubs:
        warnings.append(
            f"{len(hubs)} hub node(s) with more than {request.degree_cap} relations were not used inside "
            "chains (see skipped_hubs)"
        )
    evidence = map_evidence(store, selected, request.max_evidence) if request.mode == "shortest_path" else []
    entities = store.get_entities(sorted({n for c in selected for n in c.nodes}))
    return ReasoningChainResult(
        chains=[_render(c, entities) for c in selected],
        pairs=pairs,
        evidence=evidence,
        anchors=anchors,
        unknown_ids=unknown,
        skipped_hubs=sorted(hubs)[:50],
        parameters=request.model_dump(),
        warnings=warnings,
    )


DESCRIPTION = (
    "Find typed relation chains in the knowledge graph between the question's entity ids (from ner_link): "
    "paths (A -treats-> B), co-ancestor chains (A -> X <- B: a shared factor) and co-occurrence chains "
    "(A <- X -> B: a common cause or drug) within k hops, ranked shortest and most specific first, each "
    "with its relation ids for citation and short descriptions of its end entities. mode='shortest_path' "
    "returns the shortest connection per pair plus the evidence passages mapped to it. With a single "
    "entity id it returns that entity's direct relations (filter with relation_types, e.g. ['treats'])."
)


def reasoning_chain_tool(kb: KnowledgeBase) -> BaseTool:
    """The LangChain tool an agent calls; arguments are validated by :class:`ReasoningChainRequest`."""
    return as_langchain_tool(kb, reasoning_chain, ReasoningChainRequest, "reasoning_chain", DESCRIPTION)
