"""The Neo4j ``GraphStore``: the same answers as the embedded store, served by a Neo4j 5 server.

Why a server backend at all: a team whose graph outgrows one machine, or who already runs Neo4j, can load
a published KB build into it (graphs/neo4j/loader.py) and point EviGraph at it. Vectors stay in the vector
index; only the records and the two graphs (typed relations, entity–topic–evidence hypergraph) move.

Graph model (written by the loader, read here)::

    (:Entity {id, name, type, synonyms, xrefs, description, sources, name_norm, names_norm, degree})
    (:Entity)-[:REL {id, relation, source, license, evidence_refs}]->(:Entity)
    (:Name {norm})-[:NAMES]->(:Entity)          exact-name lookup through a unique index
    (:Entity)-[:IN_TOPIC {weight}]->(:Topic {id, entity_id, label, description})
    (:Topic)-[:HAS_EVIDENCE]->(:Evidence {id, document_id, text, label, keyword_entity, start, end})
    (:Evidence)-[:MENTIONS]->(:Entity)           f(e)
    (:Document {id, title, source, url, date, license, focus, content_hash})
    (:Meta {key, value})                         schema_version, kb_version, relation_types, load_state

Design choices:

* One relationship type ``:REL`` with the relation type as a property, not one Neo4j type per relation:
  every query stays a fixed, parameterised string (Cypher cannot take a relationship type as a parameter,
  so typed relationships would mean splicing names into query text), and requested types are checked
  against the known set read from ``Meta`` before they are sent. Filtering on a property costs the same as
  filtering on a type here because every walk expands from already-bound nodes.
* ``:Name`` nodes for ``find_entities``: Neo4j range indexes do not index list elements, so
  ``$n IN e.names_norm`` would scan every entity; a unique ``Name.norm`` index makes it one seek.
* Ordering and caps are computed exactly as the embedded store does (per node and direction: edges sorted
  by neighbour id then relation id, cut, then all sorted by (head, relation, tail)); final sorting happens
  in Python so both stores order strings identically.
* Retries and error messages live in graphs/neo4j/connection.py (bounded exponential backoff).
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from typing import Any, LiteralString

from graphs.disk.layout import KBError, current_build, read_manifest
from graphs.model.schema import SCHEMA_VERSION, Document, Entity, Evidence, Relation, Topic
from graphs.model.settings import Settings
from graphs.neo4j.connection import Neo4jConnection
from graphs.stores.base import Direction, GraphStore, StoreError
from graphs.stores.embedded import EmbeddedGraphStore, normalise_name

LOAD_COMPLETE = "complete"
REBUILD_HINT = "Re-run `evigraph kb build --graph {uri}` to (re)load the knowledge base into Neo4j."
MAX_CYPHER_INDEX = 2**31 - 1
"""Cypher list slices take 32-bit indices; also the stand-in for SQLite's "negative LIMIT = no limit"."""


def _slice_bound(limit: int) -> int:
    """``limit`` clamped to what a Cypher slice accepts (no real node has 2**31 edges, so nothing changes)."""
    return max(-MAX_CYPHER_INDEX, min(int(limit), MAX_CYPHER_INDEX))


SCHEMA_STATEMENTS: tuple[LiteralString, ...] = (
    "CREATE CONSTRAINT entity_id IF NOT EXISTS FOR (n:Entity) REQUIRE n.id IS UNIQUE",
    "CREATE CONSTRAINT topic_id IF NOT EXISTS FOR (n:Topic) REQUIRE n.id IS UNIQUE",
    "CREATE CONSTRAINT evidence_id IF NOT EXISTS FOR (n:Evidence) REQUIRE n.id IS UNIQUE",
    "CREATE CONSTRAINT document_id IF NOT EXISTS FOR (n:Document) REQUIRE n.id IS UNIQUE",
    "CREATE CONSTRAINT name_norm IF NOT EXISTS FOR (n:Name) REQUIRE n.norm IS UNIQUE",
    "CREATE CONSTRAINT meta_key IF NOT EXISTS FOR (n:Meta) REQUIRE n.key IS UNIQUE",
    "CREATE CONSTRAINT rel_id IF NOT EXISTS FOR ()-[r:REL]-() REQUIRE r.id IS UNIQUE",
    "CREATE INDEX entity_name_norm IF NOT EXISTS FOR (n:Entity) ON (n.name_norm)",
    "CREATE FULLTEXT INDEX entity_names_fulltext IF NOT EXISTS FOR (n:Entity) ON EACH [n.name, n.synonyms]",
)

# Every multi-row read returns ONE record holding a list of rows: the Python driver spends ~50 µs building
# each Record, which made a 6k-edge neighbourhood 5x slower than the query itself.
_ENTITY_FIELDS: LiteralString = "e.id, e.name, e.type, e.synonyms, e.xrefs, e.description, e.sources"
Q_META: LiteralString = "MATCH (m:Meta) RETURN collect([m.key, m.value])"
Q_ENTITIES: LiteralString = (
    "UNWIND $ids AS id MATCH (e:Entity {id: id}) RETURN collect([" + _ENTITY_FIELDS + "])"
)
Q_FIND: LiteralString = (
    "MATCH (:Name {norm: $norm})-[:NAMES]->(e:Entity) RETURN collect([" + _ENTITY_FIELDS + ", e.degree])"
)
Q_FULLTEXT: LiteralString = (
    "CALL db.index.fulltext.queryNodes('entity_names_fulltext', $text, {limit: $limit}) "
    "YIELD node AS e, score WITH e, score ORDER BY score DESC, e.id "
    "RETURN collect([" + _ENTITY_FIELDS + ", score])"
)
Q_DEGREES: LiteralString = "UNWIND $ids AS id MATCH (e:Entity {id: id}) RETURN collect([e.id, e.degree])"
# Per node and direction: filter by type, order like the CSR rows (neighbour id, relation id), then cut.
_OUT: LiteralString = """
UNWIND $ids AS id
MATCH (n:Entity {id: id})-[r:REL]->(m)
WHERE $types IS NULL OR r.relation IN $types
WITH n, r, m ORDER BY m.id, r.id
WITH n, collect([r.id, n.id, r.relation, m.id])[..$limit] AS edges
RETURN edges"""
_IN: LiteralString = """
UNWIND $ids AS id
MATCH (n:Entity {id: id})<-[r:REL]-(m)
WHERE $types IS NULL OR r.relation IN $types
WITH n, r, m ORDER BY m.id, r.id
WITH n, collect([r.id, m.id, r.relation, n.id])[..$limit] AS edges
RETURN edges"""
_EDGES: LiteralString = " } UNWIND edges AS edge RETURN collect(edge)"
Q_OUT: LiteralString = "CALL {" + _OUT + _EDGES
Q_IN: LiteralString = "CALL {" + _IN + _EDGES
Q_BOTH: LiteralString = "CALL {" + _OUT + "\nUNION ALL" + _IN + _EDGES
Q_RELATIONS: LiteralString = (
    "UNWIND $ids AS id MATCH (h)-[r:REL {id: id}]->(t) "
    "RETURN collect([r.id, h.id, r.relation, t.id, r.source, r.license, r.evidence_refs])"
)
Q_ENTITY_TOPICS: LiteralString = (
    "UNWIND $ids AS id MATCH (e:Entity {id: id}) OPTIONAL MATCH (e)-[w:IN_TOPIC]->(t:Topic) "
    "RETURN collect([e.id, t.id, w.weight])"
)
Q_TOPIC_ENTITIES: LiteralString = (
    "UNWIND $ids AS id MATCH (t:Topic {id: id}) OPTIONAL MATCH (e:Entity)-[w:IN_TOPIC]->(t) "
    "RETURN collect([t.id, e.id, w.weight])"
)
Q_TOPICS: LiteralString = (
    "UNWIND $ids AS id MATCH (t:Topic {id: id}) OPTIONAL MATCH (t)-[:HAS_EVIDENCE]->(v:Evidence) "
    "WITH t, collect(v.id) AS evidence RETURN collect([t.id, t.entity_id, t.label, t.description, evidence])"
)
Q_EVIDENCE: LiteralString = (
    "UNWIND $ids AS id MATCH (v:Evidence {id: id}) "
    "RETURN collect([v.id, v.document_id, v.text, v.label, v.keyword_entity, v.start, v.end])"
)
Q_EVIDENCE_ENTITIES: LiteralString = (
    "UNWIND $ids AS id MATCH (v:Evidence {id: id})-[:MENTIONS]->(e:Entity) RETURN collect([v.id, e.id])"
)
Q_ENTITY_EVIDENCE: LiteralString = """
UNWIND $ids AS id
MATCH (v:Evidence)-[:MENTIONS]->(e:Entity {id: id})
WITH e, v ORDER BY v.id
WITH e, collect(v.id)[..$limit] AS evidence
RETURN collect([e.id, evidence])"""
Q_DOCUMENTS: LiteralString = (
    "UNWIND $ids AS id MATCH (d:Document {id: id}) "
    "RETURN collect([d.id, d.title, d.source, d.url, d.date, d.license, d.focus, d.content_hash])"
)
Q_COUNTS: LiteralString = (
    "RETURN COUNT { (:Entity) } AS entities, COUNT { ()-[:REL]->() } AS relations, "
    "COUNT { (:Document) } AS documents, COUNT { (:Evidence) } AS evidence, "
    "COUNT { (:Topic) } AS topics, COUNT { (:Entity)-[:IN_TOPIC]->(:Topic) } AS topic_edges"
)


def read_meta(conn: Neo4jConnection) -> dict[str, str]:
    return {str(k): str(v) for k, v in conn.rows(Q_META)}


def check_meta(meta: dict[str, str], uri: str, expected_kb_version: str | None = None) -> None:
    """Refuse a graph that is missing, half-loaded, from another schema version or another KB build."""
    hint = REBUILD_HINT.format(uri=uri)
    if "schema_version" not in meta:
        raise StoreError(f"Neo4j at {uri} holds no EviGraph knowledge base. {hint}")
    if meta["schema_version"] != str(SCHEMA_VERSION):
        raise StoreError(
            f"Neo4j at {uri} holds a knowledge base in schema version {meta['schema_version']} (from an "
            f"older EviGraph); this version reads schema {SCHEMA_VERSION}. {hint}"
        )
    if meta.get("load_state") != LOAD_COMPLETE:
        raise StoreError(f"The knowledge-base load into Neo4j at {uri} did not finish. {hint}")
    if expected_kb_version is not None and meta.get("kb_version") != expected_kb_version:
        raise StoreError(
            f"Neo4j at {uri} holds KB version {meta.get('kb_version')} but the local build (whose vectors "
            f"are used) is {expected_kb_version}. {hint}"
        )


def _strs(value: Any) -> tuple[str, ...]:
    return tuple(str(v) for v in value or ())


def _entity(r: list[Any]) -> Entity:
    return Entity.model_construct(
        id=r[0],
        name=r[1],
        type=r[2],
        synonyms=_strs(r[3]),
        xrefs=_strs(r[4]),
        description=r[5],
        sources=_strs(r[6]),
    )


def _unique(ids: Sequence[str]) -> list[str]:
    return list(dict.fromkeys(ids))


class Neo4jGraphStore(GraphStore):
    """Read access to a KB loaded into Neo4j; results equal :class:`EmbeddedGraphStore`'s exactly."""

    def __init__(
        self,
        uri: str,
        user: str | None = None,
        password: str | None = None,
        database: str = "neo4j",
        *,
        expected_kb_version: str | None = None,
        connection_timeout_s: float = 5.0,
        retry_attempts: int = 4,
    ) -> None:
        self._conn = Neo4jConnection(
            uri,
            user,
            password,
            database,
            connection_timeout_s=connection_timeout_s,
            retry_attempts=retry_attempts,
        )
        try:
            meta = read_meta(self._conn)
            check_meta(meta, uri, expected_kb_version)
        except StoreError:
            self._conn.close()
            raise
        self.kb_version = meta.get("kb_version", "")
        self._relation_types: list[str] = sorted(json.loads(meta.get("relation_types", "[]")))

    # ----- entities -----
    def get_entities(self, ids: Sequence[str]) -> dict[str, Entity]:
        if not ids:
            return {}
        return {r[0]: _entity(r) for r in self._conn.rows(Q_ENTITIES, ids=_unique(ids))}

    def find_entities(self, name: str, limit: int = 10) -> list[Entity]:
        rows = self._conn.rows(Q_FIND, norm=normalise_name(name))
        ranked = sorted(rows, key=lambda r: (-int(r[7] or 0), r[0]))
        return [_entity(r) for r in ranked][:limit]

    def search_entities_fulltext(self, text: str, limit: int = 10) -> list[tuple[Entity, float]]:
        """Entities whose name or synonyms match the words of ``text`` (Lucene full-text score, best first).

        Only word characters reach Lucene, so query syntax in user text (``AND``, ``*``, quotes) cannot
        change the query.
        """
        words = re.findall(r"\w+", text.lower())
        if not words or limit <= 0:
            return []
        rows = self._conn.rows(Q_FULLTEXT, text=" ".join(words), limit=limit)
        return [(_entity(r), float(r[7])) for r in rows]

    def degrees(self, ids: Sequence[str]) -> dict[str, int]:
        if not ids:
            return {}
        found = {str(r[0]): int(r[1] or 0) for r in self._conn.rows(Q_DEGREES, ids=_unique(ids))}
        return {i: found[i] for i in ids if i in found}

    # ----- typed graph -----
    def neighbors(
        self,
        ids: Sequence[str],
        direction: Direction = "both",
        relation_types: Sequence[str] | None = None,
        limit_per_node: int = 500,
    ) -> list[Relation]:
        types: list[str] | None = None
        if relation_types is not None:
            known = set(self._relation_types)
            types = sorted({t for t in relation_types if t in known})
            if not types:
                return []
        if not ids:
            return []
        query = {"out": Q_OUT, "in": Q_IN}.get(direction, Q_BOTH)
        rows = self._conn.rows(query, ids=_unique(ids), types=types, limit=_slice_bound(limit_per_node))
        rels = {
            r[0]: Relation.model_construct(
                id=r[0], head=r[1], relation=r[2], tail=r[3], source="", license="", evidence_refs=()
            )
            for r in rows
        }
        return sorted(rels.values(), key=lambda r: (r.head, r.relation, r.tail))

    def get_relations(self, ids: Sequence[str]) -> dict[str, Relation]:
        if not ids:
            return {}
        return {
            r[0]: Relation.model_construct(
                id=r[0],
                head=r[1],
                relation=r[2],
                tail=r[3],
                source=r[4],
                license=r[5],
                evidence_refs=_strs(r[6]),
            )
            for r in self._conn.rows(Q_RELATIONS, ids=_unique(ids))
        }

    def relation_types(self) -> list[str]:
        return list(self._relation_types)

    # ----- hypergraph -----
    def _weighted(self, query: LiteralString, ids: Sequence[str]) -> dict[str, list[tuple[str, float]]]:
        if not ids:
            return {}
        grouped: dict[str, list[tuple[str, float]]] = {}
        for key, other, weight in self._conn.rows(query, ids=_unique(ids)):
            edges = grouped.setdefault(key, [])
            if other is not None:
                edges.append((str(other), float(weight)))
        return {i: sorted(grouped[i]) for i in ids if i in grouped}

    def entity_topics(self, entity_ids: Sequence[str]) -> dict[str, list[tuple[str, float]]]:
        return self._weighted(Q_ENTITY_TOPICS, entity_ids)

    def topic_entities(self, topic_ids: Sequence[str]) -> dict[str, list[tuple[str, float]]]:
        return self._weighted(Q_TOPIC_ENTITIES, topic_ids)

    def get_topics(self, ids: Sequence[str]) -> dict[str, Topic]:
        if not ids:
            return {}
        return {
            r[0]: Topic.model_construct(
                id=r[0], entity_id=r[1], label=r[2], description=r[3], evidence_ids=tuple(sorted(r[4]))
            )
            for r in self._conn.rows(Q_TOPICS, ids=_unique(ids))
        }

    def get_evidence(self, ids: Sequence[str]) -> dict[str, Evidence]:
        if not ids:
            return {}
        keys = ("id", "document_id", "text", "label", "keyword_entity", "start", "end")
        return {
            r[0]: Evidence.model_construct(**dict(zip(keys, r, strict=True)))
            for r in self._conn.rows(Q_EVIDENCE, ids=_unique(ids))
        }

    def evidence_entities(self, evidence_ids: Sequence[str]) -> dict[str, list[str]]:
        if not evidence_ids:
            return {}
        out: dict[str, list[str]] = {}
        for ev, ent in self._conn.rows(Q_EVIDENCE_ENTITIES, ids=_unique(evidence_ids)):
            out.setdefault(ev, []).append(ent)
        return {k: sorted(v) for k, v in out.items()}

    def entity_evidence(self, entity_ids: Sequence[str], limit_per_entity: int = 200) -> dict[str, list[str]]:
        if not entity_ids:
            return {}
        cap = _slice_bound(limit_per_entity) if limit_per_entity >= 0 else MAX_CYPHER_INDEX
        rows = self._conn.rows(Q_ENTITY_EVIDENCE, ids=_unique(entity_ids), limit=cap)
        found = {str(r[0]): [str(v) for v in r[1]] for r in rows if r[1]}
        return {e: found[e] for e in dict.fromkeys(entity_ids) if e in found}

    def get_documents(self, ids: Sequence[str]) -> dict[str, Document]:
        if not ids:
            return {}
        keys = ("id", "title", "source", "url", "date", "license", "focus", "content_hash")
        return {
            r[0]: Document.model_construct(**dict(zip(keys, r, strict=True)))
            for r in self._conn.rows(Q_DOCUMENTS, ids=_unique(ids))
        }

    def counts(self) -> dict[str, int]:
        record = self._conn.read(Q_COUNTS)[0]
        return {k: int(record[k]) for k in record.keys()}  # noqa: SIM118 - Record is not a dict

    def ping(self) -> None:
        """A trivial read within the query deadline (``/readyz``); ``StoreError`` if Neo4j is down."""
        self._conn.read("RETURN 1 AS ok")

    def close(self) -> None:
        self._conn.close()


def open_store(settings: Settings) -> GraphStore:
    """The graph store ``settings.graph_backend`` asks for.

    The Neo4j store is checked against the local build's KB version when one exists, because the vectors
    (always local) and the graph must come from the same build or ids would not match.
    """
    if settings.graph_backend != "neo4j":
        return EmbeddedGraphStore(current_build(settings.kb_root))
    try:
        expected: str | None = read_manifest(current_build(settings.kb_root)).version
    except KBError:
        expected = None
    password = settings.neo4j_password.get_secret_value() if settings.neo4j_password else None
    return Neo4jGraphStore(
        settings.neo4j_uri,
        settings.neo4j_user,
        password,
        settings.neo4j_database,
        expected_kb_version=expected,
    )
