"""The knowledge base's SQLite tables: DDL, bulk writes and row↔model conversion.

Why SQLite: it is in the standard library, crash-safe, needs no server, and serves the by-id lookups the
tools make in microseconds. Adjacency for graph algorithms lives beside it as CSR arrays
(graphs/stores/adjacency.py), derived from these tables, so the tables are the single source of truth.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from graphs.model.schema import Document, Entity, Evidence, Relation, Topic, TopicEdge

DDL = """
CREATE TABLE IF NOT EXISTS meta(key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS entities(
    id TEXT PRIMARY KEY, name TEXT NOT NULL, type TEXT NOT NULL, synonyms TEXT NOT NULL,
    xrefs TEXT NOT NULL, description TEXT NOT NULL, sources TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS entity_names(
    name_norm TEXT NOT NULL, entity_id TEXT NOT NULL, PRIMARY KEY(name_norm, entity_id)) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS entity_xrefs(
    xref TEXT NOT NULL, entity_id TEXT NOT NULL, PRIMARY KEY(xref, entity_id)) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS relations(
    id TEXT PRIMARY KEY, head TEXT NOT NULL, relation TEXT NOT NULL, tail TEXT NOT NULL,
    source TEXT NOT NULL, license TEXT NOT NULL, evidence_refs TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS documents(
    id TEXT PRIMARY KEY, title TEXT NOT NULL, source TEXT NOT NULL, url TEXT NOT NULL, date TEXT NOT NULL,
    license TEXT NOT NULL, focus TEXT NOT NULL, content_hash TEXT NOT NULL, text TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS evidence(
    id TEXT PRIMARY KEY, document_id TEXT NOT NULL, text TEXT NOT NULL, label TEXT NOT NULL,
    keyword_entity TEXT NOT NULL, start INTEGER NOT NULL, end INTEGER NOT NULL);
CREATE INDEX IF NOT EXISTS evidence_by_document ON evidence(document_id);
CREATE TABLE IF NOT EXISTS evidence_entities(
    evidence_id TEXT NOT NULL, entity_id TEXT NOT NULL, PRIMARY KEY(evidence_id, entity_id)) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS evidence_entities_by_entity ON evidence_entities(entity_id, evidence_id);
CREATE TABLE IF NOT EXISTS topics(
    id TEXT PRIMARY KEY, entity_id TEXT NOT NULL, label TEXT NOT NULL, description TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS topic_evidence(
    topic_id TEXT NOT NULL, evidence_id TEXT NOT NULL, PRIMARY KEY(topic_id, evidence_id)) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS topic_edges(
    topic_id TEXT NOT NULL, entity_id TEXT NOT NULL, weight REAL NOT NULL,
    PRIMARY KEY(topic_id, entity_id)) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS topic_edges_by_entity ON topic_edges(entity_id, topic_id);
"""


def connect(path: Path, *, readonly: bool = False) -> sqlite3.Connection:
    """Open the KB database; read-only connections cannot modify a published build by accident."""
    if readonly:
        conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True, check_same_thread=False)
    else:
        conn = sqlite3.connect(path, check_same_thread=False)
        conn.execute("PRAGMA journal_mode=WAL")
        conn.executescript(DDL)
    conn.execute("PRAGMA foreign_keys=OFF")
    return conn


def _j(values: Sequence[str]) -> str:
    return json.dumps(list(values), ensure_ascii=False)


def write_entities(conn: sqlite3.Connection, entities: Iterable[Entity], normalise: Any) -> None:
    """Upsert entities with their name/synonym and xref lookup rows."""
    rows: list[tuple[str, ...]] = []
    names: list[tuple[str, str]] = []
    xrefs: list[tuple[str, str]] = []
    for e in entities:
        rows.append((e.id, e.name, e.type, _j(e.synonyms), _j(e.xrefs), e.description, _j(e.sources)))
        for n in {normalise(x) for x in (e.name, *e.synonyms)}:
            if n:
                names.append((n, e.id))
        xrefs.extend((x, e.id) for x in e.xrefs)
        xrefs.append((e.id, e.id))
    conn.executemany("INSERT OR REPLACE INTO entities VALUES (?,?,?,?,?,?,?)", rows)
    conn.executemany("INSERT OR IGNORE INTO entity_names VALUES (?,?)", names)
    conn.executemany("INSERT OR IGNORE INTO entity_xrefs VALUES (?,?)", xrefs)


def write_relations(conn: sqlite3.Connection, relations: Iterable[Relation]) -> None:
    conn.executemany(
        "INSERT OR REPLACE INTO relations VALUES (?,?,?,?,?,?,?)",
        ((r.id, r.head, r.relation, r.tail, r.source, r.license, _j(r.evidence_refs)) for r in relations),
    )


def write_documents(conn: sqlite3.Connection, docs: Iterable[tuple[Document, str]]) -> None:
    """Documents with their full text (so an evidence span can always be shown in context)."""
    conn.executemany(
        "INSERT OR REPLACE INTO documents VALUES (?,?,?,?,?,?,?,?,?)",
        (
            (d.id, d.title, d.source, d.url, d.date, d.license, d.focus, d.content_hash, text)
            for d, text in docs
        ),
    )


def write_evidence(conn: sqlite3.Connection, evidence: Iterable[Evidence]) -> None:
    conn.executemany(
        "INSERT OR REPLACE INTO evidence VALUES (?,?,?,?,?,?,?)",
        ((e.id, e.document_id, e.text, e.label, e.keyword_entity, e.start, e.end) for e in evidence),
    )


def write_evidence_entities(conn: sqlite3.Connection, pairs: Iterable[tuple[str, str]]) -> None:
    conn.executemany("INSERT OR IGNORE INTO evidence_entities VALUES (?,?)", pairs)


def write_topics(conn: sqlite3.Connection, topics: Iterable[Topic]) -> None:
    topic_rows: list[tuple[str, ...]] = []
    links: list[tuple[str, str]] = []
    for t in topics:
        topic_rows.append((t.id, t.entity_id, t.label, t.description))
        links.extend((t.id, e) for e in t.evidence_ids)
    conn.executemany("INSERT OR REPLACE INTO topics VALUES (?,?,?,?)", topic_rows)
    conn.executemany("INSERT OR IGNORE INTO topic_evidence VALUES (?,?)", links)


def write_topic_edges(conn: sqlite3.Connection, edges: Iterable[TopicEdge]) -> None:
    conn.executemany(
        "INSERT OR REPLACE INTO topic_edges VALUES (?,?,?)",
        ((e.topic_id, e.entity_id, e.weight) for e in edges),
    )


def delete_topics(conn: sqlite3.Connection, topic_ids: Sequence[str]) -> None:
    """Remove topics with their evidence links and entity edges (incremental updates)."""
    for chunk in chunked(topic_ids):
        marks = ",".join("?" * len(chunk))
        conn.execute(f"DELETE FROM topics WHERE id IN ({marks})", chunk)
        conn.execute(f"DELETE FROM topic_evidence WHERE topic_id IN ({marks})", chunk)
        conn.execute(f"DELETE FROM topic_edges WHERE topic_id IN ({marks})", chunk)


def chunked(values: Sequence[str], size: int = 900) -> Iterable[list[str]]:
    """Split id lists under SQLite's bound-parameter limit."""
    for i in range(0, len(values), size):
        yield list(values[i : i + size])


def select_in(conn: sqlite3.Connection, sql: str, ids: Sequence[str]) -> list[tuple[Any, ...]]:
    """Run ``sql`` (with one ``{marks}`` placeholder) for all ids, in chunks."""
    out: list[tuple[Any, ...]] = []
    for chunk in chunked(list(dict.fromkeys(ids))):
        out.extend(conn.execute(sql.format(marks=",".join("?" * len(chunk))), chunk).fetchall())
    return out


def entity_from_row(row: tuple[Any, ...]) -> Entity:
    return Entity.model_construct(
        id=row[0],
        name=row[1],
        type=row[2],
        synonyms=tuple(json.loads(row[3])),
        xrefs=tuple(json.loads(row[4])),
        description=row[5],
        sources=tuple(json.loads(row[6])),
    )


def relation_from_row(row: tuple[Any, ...]) -> Relation:
    return Relation.model_construct(
        id=row[0],
        head=row[1],
        relation=row[2],
        tail=row[3],
        source=row[4],
        license=row[5],
        evidence_refs=tuple(json.loads(row[6])),
    )


def document_from_row(row: tuple[Any, ...]) -> Document:
    keys = ("id", "title", "source", "url", "date", "license", "focus", "content_hash")
    return Document.model_construct(**dict(zip(keys, row[:8], strict=True)))


def evidence_from_row(row: tuple[Any, ...]) -> Evidence:
    keys = ("id", "document_id", "text", "label", "keyword_entity", "start", "end")
    return Evidence.model_construct(**dict(zip(keys, row, strict=True)))


def set_meta(conn: sqlite3.Connection, key: str, value: str) -> None:
    conn.execute("INSERT OR REPLACE INTO meta VALUES (?,?)", (key, value))
