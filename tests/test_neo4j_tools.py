"""The four retrieval tools give the same answers whether the graph lives in the embedded store or in Neo4j.

test_neo4j_store.py proves every ``GraphStore`` method agrees between the two stores; this module proves
the consequence the agent relies on: the same KB build behind either store gives the same *tool outputs*
on real queries. For hypergraph_walk and reasoning_chain the embedded KB takes the tools' CSR fast path and
the Neo4j KB the batched ``GraphStore`` path, so this also checks the two algorithm paths against each
other over a real network store; ner_link and evidence_rank call the store directly on both.

The slice KB is loaded into the real Neo4j by the ``loaded`` fixture of test_neo4j_store.py (imported, not
copied). Results are compared as whole ``model_dump()`` dicts: nothing is excluded, because nothing in the
results may legitimately differ. ``fast_path`` is a keyword of the tool functions, not a request field, so
it is not echoed in ``parameters``; the walk's ``stats`` (walks, steps, PPR rounds, pushes, edges touched,
residual) are counts of the algorithm's own work on the same graph, not timings, so they must agree too.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from graphs.kb import KnowledgeBase
from graphs.neo4j.store import Neo4jGraphStore
from graphs.stores.embedded import EmbeddedGraphStore
from tests.neo4j_fixture import neo4j_uri  # noqa: F401
from tests.test_neo4j_store import build_dir, loaded  # noqa: F401
from tools.evidence_rank import EvidenceRankRequest, evidence_rank
from tools.hypergraph_walk import HypergraphWalkRequest, hypergraph_walk
from tools.ner_link import NerLinkRequest, ner_link
from tools.reasoning_chain import ReasoningChainRequest, reasoning_chain

pytestmark = pytest.mark.neo4j

PAIRS = json.loads((Path(__file__).parent / "fixtures" / "slice" / "connected_pairs.json").read_text())[
    "pairs"
]
ASTHMA = "DOID:2841"
TYPE_2_DIABETES = "DOID:9352"
ENTITY_SETS: list[list[str]] = [
    *([p["source"], p["target"]] for p in PAIRS),
    [ASTHMA],
    [TYPE_2_DIABETES],
    ["DOID:9352", "DOID:10763", "DOID:1485"],  # three anchors: every pair of them, round-robin
    [ASTHMA, "DOID:0000000"],  # an unknown id is reported the same way by both stores
]
SET_IDS = ["+".join(s) for s in ENTITY_SETS]
MIXED_ONLY = {"DOID:10763+DOID:1485", "DOID:10652+DOID:6000"}
"""Pairs whose only connection within 3 hops changes direction twice (e.g. drug -treats-> hypertension,
drug -binds_gene-> gene <-associated_gene- cystic fibrosis): not a HyKGE chain type, so ``chains`` mode
finds nothing for them while ``shortest_path`` (edges in either direction) does."""
QUESTIONS = [
    "What is the first-line medicine for type 2 diabetes?",
    "Does asthma run in families?",
    "How is Parkinson's disease treated, and is it related to Alzheimer's disease?",
    "A 60-year-old man with hypertension and gout has no chest pain. What are the causes of gout?",
]


@pytest.fixture(scope="module")
def kb_embedded(slice_kb_root: Path) -> Iterator[KnowledgeBase]:
    kb = KnowledgeBase.open(slice_kb_root)
    assert isinstance(kb.store, EmbeddedGraphStore)
    yield kb
    kb.close()


@pytest.fixture(scope="module")
def kb_neo4j(
    neo4j_uri: str,  # noqa: F811
    slice_kb_root: Path,
    loaded: dict[str, Any],  # noqa: F811
) -> Iterator[KnowledgeBase]:
    """The same build with its graph in Neo4j (``loaded`` has just bulk-loaded the slice KB there)."""
    assert loaded["complete"] is True
    kb = KnowledgeBase.open(slice_kb_root, store=Neo4jGraphStore(neo4j_uri))
    yield kb
    kb.close()


def test_both_kbs_are_the_same_build(kb_embedded: KnowledgeBase, kb_neo4j: KnowledgeBase) -> None:
    assert isinstance(kb_neo4j.store, Neo4jGraphStore)
    assert kb_neo4j.store.kb_version == kb_embedded.version == kb_neo4j.version
    assert kb_neo4j.store.counts() == kb_embedded.store.counts()


@pytest.mark.parametrize("mode", ["random_walk", "ppr"])
@pytest.mark.parametrize("entity_ids", ENTITY_SETS, ids=SET_IDS)
def test_hypergraph_walk_equal(
    kb_embedded: KnowledgeBase, kb_neo4j: KnowledgeBase, entity_ids: list[str], mode: str
) -> None:
    request = HypergraphWalkRequest.model_validate({"entity_ids": entity_ids, "mode": mode, "seed": 11})
    embedded = hypergraph_walk(kb_embedded, request)
    assert embedded.topics and embedded.entities_reached
    assert hypergraph_walk(kb_neo4j, request).model_dump() == embedded.model_dump()


def test_hypergraph_walk_with_label_filter_equal(kb_embedded: KnowledgeBase, kb_neo4j: KnowledgeBase) -> None:
    request = HypergraphWalkRequest(
        entity_ids=[ASTHMA, "DOID:8893"], mode="random_walk", labels=["treatment"], beta=64, seed=3
    )
    embedded = hypergraph_walk(kb_embedded, request)
    assert embedded.topics and {t.label for t in embedded.topics} == {"treatment"}
    assert hypergraph_walk(kb_neo4j, request).model_dump() == embedded.model_dump()


@pytest.mark.parametrize("mode", ["chains", "shortest_path"])
@pytest.mark.parametrize("entity_ids", ENTITY_SETS, ids=SET_IDS)
def test_reasoning_chain_equal(
    kb_embedded: KnowledgeBase, kb_neo4j: KnowledgeBase, entity_ids: list[str], mode: str
) -> None:
    request = ReasoningChainRequest.model_validate({"entity_ids": entity_ids, "mode": mode})
    embedded = reasoning_chain(kb_embedded, request)
    assert bool(embedded.chains) == (mode == "shortest_path" or "+".join(entity_ids) not in MIXED_ONLY)
    if mode == "shortest_path" and len(embedded.anchors) > 1:
        assert embedded.evidence
    assert reasoning_chain(kb_neo4j, request).model_dump() == embedded.model_dump()


def test_reasoning_chain_with_relation_filter_and_low_degree_cap_equal(
    kb_embedded: KnowledgeBase, kb_neo4j: KnowledgeBase
) -> None:
    request = ReasoningChainRequest(
        entity_ids=["DOID:14330", "DOID:12858", "DOID:10652"], degree_cap=20, max_edges_per_node=50
    )
    embedded = reasoning_chain(kb_embedded, request)
    assert embedded.chains and embedded.skipped_hubs
    assert reasoning_chain(kb_neo4j, request).model_dump() == embedded.model_dump()
    one_hop = ReasoningChainRequest(entity_ids=["DOID:7148"], relation_types=["treats", "palliates"])
    embedded = reasoning_chain(kb_embedded, one_hop)
    assert embedded.chains
    assert reasoning_chain(kb_neo4j, one_hop).model_dump() == embedded.model_dump()


@pytest.mark.parametrize("question", QUESTIONS)
def test_ner_link_equal(kb_embedded: KnowledgeBase, kb_neo4j: KnowledgeBase, question: str) -> None:
    request = NerLinkRequest(texts=[question], llm_terms=["NIDDM", "wheezing in children"])
    embedded = ner_link(kb_embedded, request)
    assert embedded.entities
    assert ner_link(kb_neo4j, request).model_dump() == embedded.model_dump()


def test_ner_link_examples_link_their_diseases(kb_neo4j: KnowledgeBase) -> None:
    """Guards against comparing two equally poor answers: the named diseases are linked by dictionary.

    The first question names "type 2 diabetes", which the dictionary links through the short form of
    "type 2 diabetes mellitus"; the LLM term "NIDDM" must reach the same entity.
    """
    expected = {
        QUESTIONS[1]: {ASTHMA},
        QUESTIONS[2]: {"DOID:14330", "DOID:10652"},
        QUESTIONS[3]: {"DOID:10763", "DOID:13189"},
    }
    for question, ids in expected.items():
        linked = ner_link(kb_neo4j, NerLinkRequest(texts=[question]))
        assert {e.id for e in linked.entities if e.method == "dictionary"} == ids, question
    niddm = ner_link(kb_neo4j, NerLinkRequest(texts=[QUESTIONS[0]], llm_terms=["NIDDM"]))
    linked = {e.id: e for e in niddm.entities}
    assert TYPE_2_DIABETES in linked
    assert {"dictionary", "llm_term"} <= set(linked[TYPE_2_DIABETES].methods)


@pytest.mark.parametrize("question", QUESTIONS)
def test_evidence_rank_on_walk_candidates_equal(
    kb_embedded: KnowledgeBase, kb_neo4j: KnowledgeBase, question: str
) -> None:
    """The agent's pipeline on each store: link, walk from the links, rank the walk's evidence."""
    outputs: list[dict[str, Any]] = []
    for kb in (kb_embedded, kb_neo4j):
        linked = ner_link(kb, NerLinkRequest(texts=[question]))
        entity_ids = [e.id for e in linked.entities]
        walk = hypergraph_walk(kb, HypergraphWalkRequest(entity_ids=entity_ids, mode="ppr"))
        candidates = [e for t in walk.topics for e in t.evidence_ids]
        graph_scores = {e: t.score for t in walk.topics for e in t.evidence_ids}
        ranked = evidence_rank(
            kb,
            EvidenceRankRequest(
                question=question,
                candidate_ids=candidates,
                graph_scores=graph_scores,
                entity_ids=entity_ids,
                methods=["cosine", "fragment", "idep", "hybrid", "mmr"],
            ),
        )
        assert candidates and ranked.evidence
        assert any("candidate" in r.origin for r in ranked.evidence)
        outputs.append(
            {"linked": linked.model_dump(), "walk": walk.model_dump(), "ranked": ranked.model_dump()}
        )
    assert outputs[1] == outputs[0]
