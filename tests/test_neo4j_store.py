"""The Neo4j graph store gives exactly the embedded store's answers, on the real slice KB and a real Neo4j.

The slice KB (tests/conftest.py) is bulk-loaded into the bundled Neo4j 5.26 server (tests/neo4j_fixture.py
starts it when nothing answers), then every ``GraphStore`` method is called with the same real ids on both
stores and the results compared with ``==``. Community edition has one database, so the module clears
EviGraph's nodes first and leaves a complete load of the slice KB behind.
"""

from __future__ import annotations

import json
import socket
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from graphs.disk.layout import current_build, read_manifest
from graphs.kb import KnowledgeBase
from graphs.model.settings import Settings
from graphs.neo4j.connection import Neo4jConnection
from graphs.neo4j.loader import W_META, clear_graph, export_kb_to_neo4j, graph_counts, load_into_neo4j
from graphs.neo4j.store import Neo4jGraphStore, open_store
from graphs.stores.base import Direction, StoreError
from graphs.stores.embedded import EmbeddedGraphStore
from tests.neo4j_fixture import neo4j_uri  # noqa: F401

pytestmark = pytest.mark.neo4j

PAIRS = json.loads((Path(__file__).parent / "fixtures" / "slice" / "connected_pairs.json").read_text())[
    "pairs"
]
PAIR_IDS = sorted({p[k] for p in PAIRS for k in ("source", "target")})
PATH_IDS = sorted({n for p in PAIRS for step in p["path"] + p["multi_hop_path"] for n in (step[0], step[2])})
UNKNOWN = ["DOID:0000000", "", "R:nope", "T:nope|symptoms", "E:nope"]
NAMES = [
    "asthma",
    "type 2 diabetes mellitus",
    "Type-2  Diabetes MELLITUS",
    "NIDDM",
    "hypertension",
    "breast cancer",
    "no such disease at all",
    *sorted({p["source_name"] for p in PAIRS}),
]


@pytest.fixture(scope="module")
def build_dir(slice_kb_root: Path) -> Path:
    return current_build(slice_kb_root)


@pytest.fixture(scope="module")
def loaded(neo4j_uri: str, build_dir: Path) -> dict[str, Any]:  # noqa: F811
    conn = Neo4jConnection(neo4j_uri)
    try:
        clear_graph(conn, batch_size=2000)
    finally:
        conn.close()
    return load_into_neo4j(build_dir, neo4j_uri, batch_size=500)


@pytest.fixture(scope="module")
def neo(neo4j_uri: str, loaded: dict[str, Any]) -> Iterator[Neo4jGraphStore]:  # noqa: F811
    store = Neo4jGraphStore(neo4j_uri)
    yield store
    store.close()


@pytest.fixture(scope="module")
def emb(slice_kb: KnowledgeBase) -> EmbeddedGraphStore:
    assert isinstance(slice_kb.store, EmbeddedGraphStore)
    return slice_kb.store


@pytest.fixture(scope="module")
def hubs(emb: EmbeddedGraphStore) -> list[str]:
    """The five best-connected entities: where per-node caps actually cut."""
    degree = emb.adjacency.degrees()
    order = sorted(range(len(degree)), key=lambda i: (-int(degree[i]), str(emb.adjacency.entity_ids[i])))
    return [str(emb.adjacency.entity_ids[i]) for i in order[:5]]


def test_load_reports_every_table(loaded: dict[str, Any], emb: EmbeddedGraphStore) -> None:
    counts = emb.counts()
    assert loaded["complete"] is True
    assert loaded["rows_written"]["Entity"] == counts["entities"]
    assert loaded["rows_written"]["REL"] == counts["relations"]
    mentions = emb.grouped_counts("SELECT 'rows', COUNT(*) FROM evidence_entities")["rows"]
    assert loaded["graph_counts"]["MENTIONS"] == loaded["rows_written"]["MENTIONS"] == mentions
    assert loaded["nodes"] > 0 and loaded["relationships"] > 0


def test_counts_and_relation_types_equal(neo: Neo4jGraphStore, emb: EmbeddedGraphStore) -> None:
    assert neo.counts() == emb.counts()
    assert neo.relation_types() == emb.relation_types()
    assert len(neo.relation_types()) > 5


def test_entities_and_degrees_equal(neo: Neo4jGraphStore, emb: EmbeddedGraphStore, hubs: list[str]) -> None:
    ids = [*PATH_IDS, *hubs, *UNKNOWN, PATH_IDS[0]]
    assert neo.get_entities(ids) == emb.get_entities(ids)
    assert set(neo.get_entities(ids)) == set(PATH_IDS) | set(hubs)
    assert neo.degrees(ids) == emb.degrees(ids)
    assert neo.get_entities([]) == emb.get_entities([]) == {}


@pytest.mark.parametrize("limit", [10, 1, 0])
def test_find_entities_equal(neo: Neo4jGraphStore, emb: EmbeddedGraphStore, limit: int) -> None:
    for name in NAMES:
        assert neo.find_entities(name, limit) == emb.find_entities(name, limit), name
    assert [e.id for e in neo.find_entities("NIDDM", limit)] == (["DOID:9352"] if limit else [])


@pytest.mark.parametrize("direction", ["out", "in", "both"])
@pytest.mark.parametrize("limit", [500, 5, 1, 0, -1])
@pytest.mark.parametrize(
    "types", [None, ["treats", "resembles", "is_a"], ["is_a", "not_a_relation"], ["not_a_relation"], []]
)
def test_neighbors_equal(
    neo: Neo4jGraphStore,
    emb: EmbeddedGraphStore,
    hubs: list[str],
    direction: Direction,
    limit: int,
    types: list[str] | None,
) -> None:
    ids = [*PATH_IDS, *hubs, *UNKNOWN, hubs[0]]
    got = neo.neighbors(ids, direction, types, limit)
    assert got == emb.neighbors(ids, direction, types, limit)
    if limit > 0 and types and "is_a" in types:
        assert got


def test_per_node_cap_cuts_hubs_in_sorted_neighbour_order(
    neo: Neo4jGraphStore, emb: EmbeddedGraphStore, hubs: list[str]
) -> None:
    capped = neo.neighbors(hubs[:1], "both", None, 3)
    assert capped == emb.neighbors(hubs[:1], "both", None, 3)
    assert 3 <= len(capped) <= 6 < emb.degrees(hubs[:1])[hubs[0]]
    assert len(neo.neighbors(hubs[:1], "both", None, 10_000)) == emb.degrees(hubs[:1])[hubs[0]]


def test_unknown_relation_types_are_ignored_like_the_embedded_store(
    neo: Neo4jGraphStore, emb: EmbeddedGraphStore
) -> None:
    hostile = ["treats`]->() DETACH DELETE n //", "x' OR 1=1"]
    assert neo.neighbors(PAIR_IDS, "both", hostile) == emb.neighbors(PAIR_IDS, "both", hostile) == []
    assert neo.counts() == emb.counts()


def test_get_relations_equal(neo: Neo4jGraphStore, emb: EmbeddedGraphStore) -> None:
    rel_ids = [r.id for r in emb.neighbors(PATH_IDS, "both")]
    assert len(rel_ids) > 50
    ids = [*rel_ids, *UNKNOWN]
    assert neo.get_relations(ids) == emb.get_relations(ids)
    assert set(neo.get_relations(ids)) == set(rel_ids)


@pytest.mark.parametrize(
    ("k", "max_nodes", "degree_cap"), [(1, 5000, None), (2, 5000, None), (3, 5000, 30), (2, 40, None)]
)
def test_k_hop_equal(
    neo: Neo4jGraphStore, emb: EmbeddedGraphStore, k: int, max_nodes: int, degree_cap: int | None
) -> None:
    for pair in PAIRS[:6]:
        seeds = [pair["source"], pair["target"], "DOID:0000000"]
        got = neo.k_hop(seeds, k, max_nodes, degree_cap)
        assert got == emb.k_hop(seeds, k, max_nodes, degree_cap)
        assert pair["source"] in got.nodes
    assert emb.k_hop(PAIR_IDS, 2, 40).truncated
    assert emb.k_hop(PAIR_IDS, 3, 5000, 30).skipped_hubs


def test_hypergraph_equal(neo: Neo4jGraphStore, emb: EmbeddedGraphStore, hubs: list[str]) -> None:
    topic_ids = [str(t) for t in emb.adjacency.topic_ids.tolist()]
    entity_ids = [*PATH_IDS, *hubs, *sorted({t.split("|")[0][2:] for t in topic_ids}), *UNKNOWN]
    assert neo.entity_topics(entity_ids) == emb.entity_topics(entity_ids)
    assert neo.topic_entities([*topic_ids, *UNKNOWN]) == emb.topic_entities([*topic_ids, *UNKNOWN])
    topics = neo.get_topics([*topic_ids, *UNKNOWN])
    assert topics == emb.get_topics([*topic_ids, *UNKNOWN])
    assert len(topics) == len(topic_ids) > 100
    evidence_ids = sorted({e for t in topics.values() for e in t.evidence_ids})
    evidence = neo.get_evidence([*evidence_ids, *UNKNOWN])
    assert evidence == emb.get_evidence([*evidence_ids, *UNKNOWN])
    assert neo.evidence_entities([*evidence_ids, *UNKNOWN]) == emb.evidence_entities(
        [*evidence_ids, *UNKNOWN]
    )
    doc_ids = sorted({e.document_id for e in evidence.values()}) + UNKNOWN
    assert neo.get_documents(doc_ids) == emb.get_documents(doc_ids)
    for limit in (200, 3, 1, 0, -1):
        assert neo.entity_evidence(entity_ids, limit) == emb.entity_evidence(entity_ids, limit)
    assert neo.entity_evidence(entity_ids, 3)


def test_full_text_search_finds_entities_by_synonym(neo: Neo4jGraphStore) -> None:
    assert neo.search_entities_fulltext("NIDDM", 5)[0][0].id == "DOID:9352"
    hits = [e.id for e, _ in neo.search_entities_fulltext("insulin-dependent diabetes", 10)]
    assert "DOID:9744" in hits
    assert neo.search_entities_fulltext('"NIDDM" (*:~^', 5)[0][0].id == "DOID:9352"
    assert neo.search_entities_fulltext("?!", 5) == []


def test_reload_is_idempotent(
    neo4j_uri: str,  # noqa: F811
    slice_kb_root: Path,
    loaded: dict[str, Any],
    neo: Neo4jGraphStore,
    emb: EmbeddedGraphStore,
) -> None:
    again = export_kb_to_neo4j(slice_kb_root, Settings(neo4j_uri=neo4j_uri, neo4j_password=None))
    assert again["cleared"] == 0
    assert again["graph_counts"] == loaded["graph_counts"]
    assert neo.counts() == emb.counts()


def test_interrupted_load_is_completed_by_a_rerun_without_duplicates(
    neo4j_uri: str,  # noqa: F811
    build_dir: Path,
    loaded: dict[str, Any],
) -> None:
    conn = Neo4jConnection(neo4j_uri)
    try:
        clear_graph(conn)
        partial = load_into_neo4j(build_dir, neo4j_uri, batch_size=400, max_batches=7)
        assert partial["complete"] is False
        assert 0 < sum(partial["rows_written"].values()) < sum(loaded["rows_written"].values())
        with pytest.raises(StoreError, match="did not finish"):
            Neo4jGraphStore(neo4j_uri)
        resumed = load_into_neo4j(build_dir, neo4j_uri, batch_size=400)
        assert resumed["cleared"] == 0
        assert resumed["graph_counts"] == loaded["graph_counts"] == graph_counts(conn)
    finally:
        conn.close()


def test_graph_from_an_older_schema_is_refused_then_replaced(
    neo4j_uri: str,  # noqa: F811
    build_dir: Path,
    loaded: dict[str, Any],
) -> None:
    conn = Neo4jConnection(neo4j_uri)
    try:
        conn.write(W_META, rows=[{"key": "schema_version", "value": "0"}])
        with pytest.raises(StoreError, match=r"schema version 0 .*evigraph kb build --graph"):
            Neo4jGraphStore(neo4j_uri)
    finally:
        replaced = load_into_neo4j(build_dir, neo4j_uri, batch_size=2000)
        conn.close()
    assert replaced["cleared"] > 0
    assert replaced["graph_counts"] == loaded["graph_counts"]


def test_server_down_fails_fast_with_the_uri() -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    uri = f"bolt://127.0.0.1:{port}"
    with pytest.raises(StoreError, match=r"neo4j-server\.sh start") as caught:
        Neo4jGraphStore(uri, connection_timeout_s=1.0, retry_attempts=2)
    assert uri in str(caught.value)


def test_open_store_follows_the_backend_setting(
    neo4j_uri: str,  # noqa: F811
    slice_kb_root: Path,
    neo: Neo4jGraphStore,
) -> None:
    settings = Settings(kb_dir=slice_kb_root, graph_backend="neo4j", neo4j_uri=neo4j_uri, neo4j_password=None)
    store = open_store(settings)
    kb = KnowledgeBase.open(slice_kb_root, store=store)
    try:
        assert isinstance(store, Neo4jGraphStore)
        assert store.kb_version == kb.version == read_manifest(current_build(slice_kb_root)).version
        assert kb.store.find_entities("asthma")[0].id == "DOID:2841"
    finally:
        kb.close()
    embedded = open_store(Settings(kb_dir=slice_kb_root, graph_backend="embedded"))
    assert isinstance(embedded, EmbeddedGraphStore)
    assert embedded.counts() == neo.counts()
    embedded.close()
    with pytest.raises(StoreError, match="local build"):
        Neo4jGraphStore(neo4j_uri, expected_kb_version="another-build")
