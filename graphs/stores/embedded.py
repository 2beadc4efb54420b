"""The embedded ``GraphStore``: SQLite tables for records, CSR arrays for adjacency. No server.

Why this split: records are looked up by id (SQLite primary keys), while neighbourhoods are walked in bulk
(CSR row slices). Both files are read-only once a build is published; incremental updates write a new build.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from graphs.disk.tables import (
    connect,
    document_from_row,
    entity_from_row,
    evidence_from_row,
    relation_from_row,
    select_in,
)
from graphs.model.schema import Document, Entity, Evidence, Relation, Topic
from graphs.stores.adjacency import Adjacency, load_adjacency
from graphs.stores.base import Direction, GraphStore, StoreError

DB_FILE = "kb.sqlite"


def normalise_name(text: str) -> str:
    """Lookup key for names: lower case, single spaces, hyphens as spaces (matches the builder's key)."""
    return " ".join(text.lower().replace("-", " ").split())


class EmbeddedGraphStore(GraphStore):
    """A read-only view of one published KB build directory."""

    def __init__(self, build_dir: Path) -> None:
        db = build_dir / DB_FILE
        if not db.exists():
            raise StoreError(f"No knowledge-base database at {db}. Run `evigraph kb build`.")
        try:
            self._conn: sqlite3.Connection = connect(db, readonly=True)
            self._conn.execute("SELECT key, value FROM meta LIMIT 1").fetchall()  # fails fast on a bad file
            self._adj: Adjacency = load_adjacency(build_dir)
        except (sqlite3.DatabaseError, OSError, ValueError, KeyError) as exc:
            raise StoreError(
                f"The knowledge base at {build_dir} is corrupt ({exc}). Rebuild it with `evigraph kb build`."
            ) from exc
        self._eidx = self._adj.entity_index()
        self._tidx = self._adj.topic_index()
        self._degree = self._adj.degrees()
        self._rel_cache: dict[int, Relation] = {}

    @property
    def adjacency(self) -> Adjacency:
        """The raw arrays (for algorithms that want to run vectorised on the embedded store)."""
        return self._adj

    # ----- entities -----
    def get_entities(self, ids: Sequence[str]) -> dict[str, Entity]:
        rows = select_in(self._conn, "SELECT * FROM entities WHERE id IN ({marks})", ids)
        return {r[0]: entity_from_row(r) for r in rows}

    def find_entities(self, name: str, limit: int = 10) -> list[Entity]:
        ids = [
            r[0]
            for r in self._conn.execute(
                "SELECT entity_id FROM entity_names WHERE name_norm=?", (normalise_name(name),)
            )
        ]
        ents = self.get_entities(ids)
        deg = self.degrees(list(ents))
        ranked = sorted(ents.values(), key=lambda e: (-deg.get(e.id, 0), e.id))
        return ranked[:limit]

    def degrees(self, ids: Sequence[str]) -> dict[str, int]:
        return {i: int(self._degree[self._eidx[i]]) for i in ids if i in self._eidx}

    # ----- typed graph -----
    def _relation(self, row: int) -> Relation:
        rel = self._rel_cache.get(row)
        if rel is None:
            rel = Relation.model_construct(
                id=str(self._adj.relation_ids[row]),
                head=str(self._adj.entity_ids[self._adj.rel_head[row]]),
                relation=str(self._adj.relation_types[self._adj.rel_type[row]]),
                tail=str(self._adj.entity_ids[self._adj.rel_tail[row]]),
                source="",
                license="",
                evidence_refs=(),
            )
            self._rel_cache[row] = rel
        return rel

    def neighbor_rows(
        self, ids: Sequence[str], direction: Direction, type_codes: set[int] | None, limit_per_node: int
    ) -> list[int]:
        """Relation row numbers incident to ``ids`` (the fast path behind :meth:`neighbors`)."""
        rows: set[int] = set()
        mats = {"out": [self._adj.out_csr], "in": [self._adj.in_csr]}.get(
            direction, [self._adj.out_csr, self._adj.in_csr]
        )
        for node in ids:
            i = self._eidx.get(node)
            if i is None:
                continue
            for m in mats:
                edge_rows = m.data[m.indptr[i] : m.indptr[i + 1]]
                if type_codes is not None:
                    edge_rows = edge_rows[np.isin(self._adj.rel_type[edge_rows], list(type_codes))]
                rows.update(int(x) for x in edge_rows[:limit_per_node])
        return sorted(rows)

    def neighbors(
        self,
        ids: Sequence[str],
        direction: Direction = "both",
        relation_types: Sequence[str] | None = None,
        limit_per_node: int = 500,
    ) -> list[Relation]:
        codes = None
        if relation_types is not None:
            known = {str(t): i for i, t in enumerate(self._adj.relation_types.tolist())}
            codes = {known[t] for t in relation_types if t in known}
        rels = [self._relation(r) for r in self.neighbor_rows(ids, direction, codes, limit_per_node)]
        return sorted(rels, key=lambda r: (r.head, r.relation, r.tail))

    def get_relations(self, ids: Sequence[str]) -> dict[str, Relation]:
        rows = select_in(self._conn, "SELECT * FROM relations WHERE id IN ({marks})", ids)
        return {r[0]: relation_from_row(r) for r in rows}

    def relation_types(self) -> list[str]:
        return sorted(str(t) for t in self._adj.relation_types.tolist())

    # ----- hypergraph -----
    def entity_topics(self, entity_ids: Sequence[str]) -> dict[str, list[tuple[str, float]]]:
        out: dict[str, list[tuple[str, float]]] = {}
        m = self._adj.et_csr
        for e in entity_ids:
            i = self._eidx.get(e)
            if i is None:
                continue
            lo, hi = m.indptr[i], m.indptr[i + 1]
            out[e] = [
                (str(self._adj.topic_ids[t]), float(w))
                for t, w in zip(m.indices[lo:hi].tolist(), m.data[lo:hi].tolist(), strict=True)
            ]
        return out

    def topic_entities(self, topic_ids: Sequence[str]) -> dict[str, list[tuple[str, float]]]:
        out: dict[str, list[tuple[str, float]]] = {}
        m = self._adj.te_csr
        for t in topic_ids:
            i = self._tidx.get(t)
            if i is None:
                continue
            lo, hi = m.indptr[i], m.indptr[i + 1]
            out[t] = [
                (str(self._adj.entity_ids[e]), float(w))
                for e, w in zip(m.indices[lo:hi].tolist(), m.data[lo:hi].tolist(), strict=True)
            ]
        return out

    def get_topics(self, ids: Sequence[str]) -> dict[str, Topic]:
        rows = select_in(self._conn, "SELECT * FROM topics WHERE id IN ({marks})", ids)
        links: dict[str, list[str]] = {}
        for t, e in select_in(
            self._conn, "SELECT topic_id, evidence_id FROM topic_evidence WHERE topic_id IN ({marks})", ids
        ):
            links.setdefault(t, []).append(e)
        return {
            r[0]: Topic.model_construct(
                id=r[0],
                entity_id=r[1],
                label=r[2],
                description=r[3],
                evidence_ids=tuple(sorted(links.get(r[0], []))),
            )
            for r in rows
        }

    def get_evidence(self, ids: Sequence[str]) -> dict[str, Evidence]:
        rows = select_in(self._conn, "SELECT * FROM evidence WHERE id IN ({marks})", ids)
        return {r[0]: evidence_from_row(r) for r in rows}

    def evidence_entities(self, evidence_ids: Sequence[str]) -> dict[str, list[str]]:
        out: dict[str, list[str]] = {}
        for ev, ent in select_in(
            self._conn,
            "SELECT evidence_id, entity_id FROM evidence_entities WHERE evidence_id IN ({marks})",
            evidence_ids,
        ):
            out.setdefault(ev, []).append(ent)
        return {k: sorted(v) for k, v in out.items()}

    def entity_evidence(self, entity_ids: Sequence[str], limit_per_entity: int = 200) -> dict[str, list[str]]:
        out: dict[str, list[str]] = {}
        for ent in dict.fromkeys(entity_ids):
            rows = self._conn.execute(
                "SELECT evidence_id FROM evidence_entities WHERE entity_id=? ORDER BY evidence_id LIMIT ?",
                (ent, limit_per_entity),
            ).fetchall()
            if rows:
                out[ent] = [r[0] for r in rows]
        return out

    def get_documents(self, ids: Sequence[str]) -> dict[str, Document]:
        rows = select_in(self._conn, "SELECT * FROM documents WHERE id IN ({marks})", ids)
        return {r[0]: document_from_row(r) for r in rows}

    def document_text(self, document_id: str) -> str | None:
        row = self._conn.execute("SELECT text FROM documents WHERE id=?", (document_id,)).fetchone()
        return None if row is None else str(row[0])

    def counts(self) -> dict[str, int]:
        tables = {
            "entities": "entities",
            "relations": "relations",
            "documents": "documents",
            "evidence": "evidence",
            "topics": "topics",
            "topic_edges": "topic_edges",
        }
        return {
            k: int(self._conn.execute(f"SELECT COUNT(*) FROM {t}").fetchone()[0]) for k, t in tables.items()
        }

    def grouped_counts(self, sql: str) -> dict[str, int]:
        """``SELECT key, COUNT(*) … GROUP BY key`` helper for `kb info`."""
        return {str(k): int(n) for k, n in self._conn.execute(sql)}

    def close(self) -> None:
        self._conn.close()
