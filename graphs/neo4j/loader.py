"""Bulk load of a published KB build (its SQLite tables) into Neo4j, resumable and idempotent.

Why MERGE in batches: ``UNWIND $rows AS row MERGE …`` sends thousands of rows per round trip, and because
every write is a MERGE keyed by a unique id (backed by a constraint), re-running a load that stopped
halfway — killed process, lost connection — creates no duplicates; it simply completes the graph. The
``Meta`` node records the schema version and KB version first with ``load_state = loading`` and flips it to
``complete`` only at the very end, so the store refuses a half-loaded graph with a clear message. Loading a
*different* build (or schema) first clears EviGraph's nodes, so stale records of an older build never mix
with the new one.

Vectors are not loaded: they stay in the build's vector index.
"""

from __future__ import annotations

import json
import sqlite3
import time
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, LiteralString

from graphs.disk.layout import current_build, read_manifest
from graphs.disk.tables import connect
from graphs.model.schema import SCHEMA_VERSION
from graphs.model.settings import Settings
from graphs.neo4j.connection import Neo4jConnection
from graphs.neo4j.store import LOAD_COMPLETE, SCHEMA_STATEMENTS, read_meta
from graphs.stores.embedded import DB_FILE, normalise_name

Progress = Callable[[str, int, int], None]

W_ENTITIES: LiteralString = "UNWIND $rows AS row MERGE (e:Entity {id: row.id}) SET e += row"
W_NAMES: LiteralString = (
    "UNWIND $rows AS row MATCH (e:Entity {id: row.entity_id}) "
    "MERGE (n:Name {norm: row.norm}) MERGE (n)-[:NAMES]->(e)"
)
W_DOCUMENTS: LiteralString = "UNWIND $rows AS row MERGE (d:Document {id: row.id}) SET d += row"
W_EVIDENCE: LiteralString = "UNWIND $rows AS row MERGE (v:Evidence {id: row.id}) SET v += row"
W_TOPICS: LiteralString = "UNWIND $rows AS row MERGE (t:Topic {id: row.id}) SET t += row"
W_RELATIONS: LiteralString = (
    "UNWIND $rows AS row MATCH (h:Entity {id: row.head}) MATCH (t:Entity {id: row.tail}) "
    "MERGE (h)-[r:REL {id: row.id}]->(t) "
    "SET r.relation = row.relation, r.source = row.source, r.license = row.license, "
    "r.evidence_refs = row.evidence_refs"
)
W_TOPIC_EDGES: LiteralString = (
    "UNWIND $rows AS row MATCH (e:Entity {id: row.entity_id}) MATCH (t:Topic {id: row.topic_id}) "
    "MERGE (e)-[w:IN_TOPIC]->(t) SET w.weight = row.weight"
)
W_TOPIC_EVIDENCE: LiteralString = (
    "UNWIND $rows AS row MATCH (t:Topic {id: row.topic_id}) MATCH (v:Evidence {id: row.evidence_id}) "
    "MERGE (t)-[:HAS_EVIDENCE]->(v)"
)
W_MENTIONS: LiteralString = (
    "UNWIND $rows AS row MATCH (v:Evidence {id: row.evidence_id}) MATCH (e:Entity {id: row.entity_id}) "
    "MERGE (v)-[:MENTIONS]->(e)"
)
W_META: LiteralString = "UNWIND $rows AS row MERGE (m:Meta {key: row.key}) SET m.value = row.value"
D_RELATIONSHIPS: LiteralString = (
    "MATCH (n)-[r]->() WHERE n:Entity OR n:Topic OR n:Evidence OR n:Name "
    "WITH r LIMIT $batch DELETE r RETURN count(*)"
)
D_NODES: LiteralString = (
    "MATCH (n) WHERE n:Entity OR n:Topic OR n:Evidence OR n:Document OR n:Name OR n:Meta "
    "WITH n LIMIT $batch DETACH DELETE n RETURN count(*)"
)
Q_GRAPH_COUNTS: LiteralString = (
    "RETURN COUNT { (:Entity) } AS Entity, COUNT { (:Name) } AS Name, COUNT { (:Document) } AS Document, "
    "COUNT { (:Evidence) } AS Evidence, COUNT { (:Topic) } AS Topic, COUNT { (:Meta) } AS Meta, "
    "COUNT { ()-[:REL]->() } AS REL, COUNT { ()-[:NAMES]->() } AS NAMES, "
    "COUNT { ()-[:IN_TOPIC]->() } AS IN_TOPIC, COUNT { ()-[:HAS_EVIDENCE]->() } AS HAS_EVIDENCE, "
    "COUNT { ()-[:MENTIONS]->() } AS MENTIONS"
)


GRAPH_LABELS = ("Entity", "Name", "Document", "Evidence", "Topic", "Meta")


@dataclass(frozen=True)
class Stage:
    """One table → one kind of node or relationship: the SQL that reads it and the Cypher that writes it."""

    name: str
    sql: str
    write: LiteralString
    is_node: bool


def _json_list(text: str) -> list[str]:
    return [str(v) for v in json.loads(text)]


def _no_progress(stage: str, done: int, total: int) -> None:
    """Default progress sink: loads run silently unless the caller wants a progress bar."""


class _Rows:
    """Turns SQLite rows into Cypher parameter maps (entities need their names and degree attached)."""

    def __init__(self, db: sqlite3.Connection) -> None:
        self._db = db
        self._names: dict[str, list[str]] = {}
        for norm, entity_id in db.execute("SELECT name_norm, entity_id FROM entity_names ORDER BY 1"):
            self._names.setdefault(entity_id, []).append(norm)
        # Degree as the embedded store counts it: relations whose both endpoints are entities.
        self._degree: Counter[str] = Counter()
        for head, tail in db.execute(
            "SELECT head, tail FROM relations WHERE head IN (SELECT id FROM entities) "
            "AND tail IN (SELECT id FROM entities)"
        ):
            self._degree[head] += 1
            self._degree[tail] += 1

    def relation_types(self) -> list[str]:
        sql = (
            "SELECT DISTINCT relation FROM relations WHERE head IN (SELECT id FROM entities) "
            "AND tail IN (SELECT id FROM entities) ORDER BY 1"
        )
        return [str(r[0]) for r in self._db.execute(sql)]

    def convert(self, stage: str, row: tuple[Any, ...]) -> dict[str, Any]:
        if stage == "Entity":
            return {
                "id": row[0],
                "name": row[1],
                "type": row[2],
                "synonyms": _json_list(row[3]),
                "xrefs": _json_list(row[4]),
                "description": row[5],
                "sources": _json_list(row[6]),
                "name_norm": normalise_name(row[1]),
                "names_norm": self._names.get(row[0], []),
                "degree": self._degree.get(row[0], 0),
            }
        if stage == "REL":
            return {
                "id": row[0],
                "head": row[1],
                "relation": row[2],
                "tail": row[3],
                "source": row[4],
                "license": row[5],
                "evidence_refs": _json_list(row[6]),
            }
        return dict(zip(COLUMNS[stage], row, strict=True))


COLUMNS: dict[str, tuple[str, ...]] = {
    "Name": ("norm", "entity_id"),
    "Document": ("id", "title", "source", "url", "date", "license", "focus", "content_hash"),
    "Evidence": ("id", "document_id", "text", "label", "keyword_entity", "start", "end"),
    "Topic": ("id", "entity_id", "label", "description"),
    "IN_TOPIC": ("topic_id", "entity_id", "weight"),
    "HAS_EVIDENCE": ("topic_id", "evidence_id"),
    "MENTIONS": ("evidence_id", "entity_id"),
}
# Nodes first (relationships MATCH their endpoints), each table in primary-key order so reruns are stable.
STAGES: tuple[Stage, ...] = (
    Stage("Entity", "SELECT * FROM entities ORDER BY id", W_ENTITIES, True),
    Stage(
        "Document",
        "SELECT id, title, source, url, date, license, focus, content_hash FROM documents ORDER BY id",
        W_DOCUMENTS,
        True,
    ),
    Stage("Evidence", "SELECT * FROM evidence ORDER BY id", W_EVIDENCE, True),
    Stage("Topic", "SELECT * FROM topics ORDER BY id", W_TOPICS, True),
    Stage("Name", "SELECT name_norm, entity_id FROM entity_names ORDER BY 1, 2", W_NAMES, False),
    Stage("REL", "SELECT * FROM relations ORDER BY id", W_RELATIONS, False),
    Stage(
        "IN_TOPIC", "SELECT topic_id, entity_id, weight FROM topic_edges ORDER BY 1, 2", W_TOPIC_EDGES, False
    ),
    Stage(
        "HAS_EVIDENCE",
        "SELECT topic_id, evidence_id FROM topic_evidence ORDER BY 1, 2",
        W_TOPIC_EVIDENCE,
        False,
    ),
    Stage(
        "MENTIONS", "SELECT evidence_id, entity_id FROM evidence_entities ORDER BY 1, 2", W_MENTIONS, False
    ),
)


def _batches(db: sqlite3.Connection, sql: str, size: int) -> Iterator[list[tuple[Any, ...]]]:
    cursor = db.execute(sql)
    while rows := cursor.fetchmany(size):
        yield rows


def ensure_schema(conn: Neo4jConnection) -> None:
    """Constraints (unique ids, which also index the MERGE keys), lookup indexes and the full-text index."""
    for statement in SCHEMA_STATEMENTS:
        conn.write(statement)
    conn.write("CALL db.awaitIndexes(300)")


def clear_graph(conn: Neo4jConnection, batch_size: int = 5000) -> int:
    """Delete EviGraph's nodes and relationships in bounded transactions (one could exhaust the heap)."""
    deleted = 0
    for query in (D_RELATIONSHIPS, D_NODES):
        while n := int(conn.write(query, batch=batch_size)[0][0]):
            deleted += n
    return deleted


def graph_counts(conn: Neo4jConnection) -> dict[str, int]:
    """Nodes per label and relationships per type, for reports and the idempotency checks."""
    record = conn.read(Q_GRAPH_COUNTS)[0]
    return {k: int(record[k]) for k in record.keys()}  # noqa: SIM118 - Record is not a dict


def load_into_neo4j(
    build_dir: Path,
    uri: str,
    user: str | None = None,
    password: str | None = None,
    database: str = "neo4j",
    batch_size: int = 5000,
    progress: Progress | None = None,
    *,
    max_batches: int | None = None,
) -> dict[str, Any]:
    """Load one published build into Neo4j; returns counts, seconds and throughput.

    ``max_batches`` stops after that many write batches, leaving the load unfinished exactly as a crash
    would (used to test that a rerun completes it without duplicates).
    """
    report = progress or _no_progress
    started = time.perf_counter()
    version = read_manifest(build_dir).version
    db = connect(build_dir / DB_FILE, readonly=True)
    conn = Neo4jConnection(uri, user, password, database)
    try:
        ensure_schema(conn)
        meta = read_meta(conn)
        cleared = 0
        if (meta.get("schema_version"), meta.get("kb_version")) != (str(SCHEMA_VERSION), version):
            report("clearing previous graph", 0, 1)
            cleared = clear_graph(conn, batch_size)
        rows = _Rows(db)
        conn.write(W_META, rows=_meta_rows(version, "loading"))
        written: dict[str, int] = {}
        batches = 0
        stage_seconds: dict[str, float] = {}
        for stage in STAGES:
            stage_started = time.perf_counter()
            total = int(db.execute(f"SELECT COUNT(*) FROM ({stage.sql})").fetchone()[0])
            written[stage.name] = 0
            for chunk in _batches(db, stage.sql, batch_size):
                if max_batches is not None and batches >= max_batches:
                    return _summary(version, written, stage_seconds, cleared, started, complete=False)
                conn.write(stage.write, rows=[rows.convert(stage.name, r) for r in chunk])
                batches += 1
                written[stage.name] += len(chunk)
                stage_seconds[stage.name] = round(time.perf_counter() - stage_started, 3)
                report(f"neo4j: {stage.name}", written[stage.name], total)
        meta_rows = _meta_rows(version, LOAD_COMPLETE)
        meta_rows.append({"key": "relation_types", "value": json.dumps(rows.relation_types())})
        conn.write(W_META, rows=meta_rows)
        counts = graph_counts(conn)
        return _summary(version, written, stage_seconds, cleared, started, complete=True, counts=counts)
    finally:
        conn.close()
        db.close()


def _meta_rows(version: str, state: str) -> list[dict[str, str]]:
    return [
        {"key": "schema_version", "value": str(SCHEMA_VERSION)},
        {"key": "kb_version", "value": version},
        {"key": "load_state", "value": state},
    ]


def _summary(
    version: str,
    written: dict[str, int],
    stage_seconds: dict[str, float],
    cleared: int,
    started: float,
    *,
    complete: bool,
    counts: dict[str, int] | None = None,
) -> dict[str, Any]:
    """What was written; throughput counts the final graph's nodes and relationships (Meta excluded)."""
    seconds = time.perf_counter() - started
    if counts is None:
        node_stages = {s.name for s in STAGES if s.is_node}
        nodes = sum(n for k, n in written.items() if k in node_stages)
        edges = sum(n for k, n in written.items() if k not in node_stages)
    else:
        nodes = sum(counts[k] for k in GRAPH_LABELS if k != "Meta")
        edges = sum(n for k, n in counts.items() if k not in GRAPH_LABELS)
    return {
        "kb_version": version,
        "complete": complete,
        "rows_written": written,
        "stage_seconds": stage_seconds,
        "nodes": nodes,
        "relationships": edges,
        "cleared": cleared,
        "seconds": round(seconds, 3),
        "nodes_per_s": round(nodes / seconds, 1) if seconds else 0.0,
        "edges_per_s": round(edges / seconds, 1) if seconds else 0.0,
        "graph_counts": counts or {},
    }


def export_kb_to_neo4j(kb_root: Path, settings: Settings, progress: Progress | None = None) -> dict[str, Any]:
    """Load the KB published at ``kb_root`` into the Neo4j set in ``settings`` (``kb build --graph``)."""
    password = settings.neo4j_password.get_secret_value() if settings.neo4j_password else None
    return load_into_neo4j(
        current_build(kb_root),
        settings.neo4j_uri,
        settings.neo4j_user,
        password,
        settings.neo4j_database,
        progress=progress,
    )
