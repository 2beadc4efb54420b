"""Compressed sparse adjacency for the typed graph and the entity↔topic bipartite graph.

Why CSR: walks, PageRank and k-hop chain search touch thousands of neighbours per query; a row slice of a
CSR array is a pointer lookup, so the embedded store answers them without SQL. The arrays are derived from
the SQLite tables at build time (and after each incremental update) and saved uncompressed in one ``.npz``
so that loading is a few ``memcpy``s (well under the 2 s KB-load target).
"""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import scipy.sparse as sp

ADJACENCY_FILE = "adjacency.npz"


@dataclass(frozen=True)
class Adjacency:
    """Index-based views of both graphs.

    ``entity_ids``/``topic_ids``/``relation_ids`` map row numbers to ids. ``out_csr``/``in_csr`` hold, for
    each entity row, the relation row numbers (as data) of its outgoing/incoming edges, with the
    neighbour's entity row as column. ``et_csr`` is entity×topic with eq. 6 weights and ``te_csr`` its
    transpose.
    """

    entity_ids: np.ndarray
    topic_ids: np.ndarray
    relation_ids: np.ndarray
    relation_types: np.ndarray
    rel_head: np.ndarray
    rel_tail: np.ndarray
    rel_type: np.ndarray
    out_csr: sp.csr_matrix
    in_csr: sp.csr_matrix
    et_csr: sp.csr_matrix
    te_csr: sp.csr_matrix

    def entity_index(self) -> dict[str, int]:
        return {str(e): i for i, e in enumerate(self.entity_ids.tolist())}

    def topic_index(self) -> dict[str, int]:
        return {str(t): i for i, t in enumerate(self.topic_ids.tolist())}

    def degrees(self) -> np.ndarray:
        """In + out degree per entity row."""
        return np.diff(self.out_csr.indptr) + np.diff(self.in_csr.indptr)


def _csr(rows: np.ndarray, cols: np.ndarray, data: np.ndarray, shape: tuple[int, int]) -> sp.csr_matrix:
    """CSR with rows sorted by (row, col, data) so neighbour order is deterministic."""
    order = np.lexsort((data, cols, rows))
    indptr = np.zeros(shape[0] + 1, dtype=np.int64)
    np.add.at(indptr, rows[order] + 1, 1)
    np.cumsum(indptr, out=indptr)
    return sp.csr_matrix((data[order], cols[order], indptr), shape=shape)


def build_adjacency(conn: sqlite3.Connection) -> Adjacency:
    """Derive all adjacency arrays from the tables (ids sorted, so rebuilding gives identical arrays)."""
    entity_ids = np.array(sorted(r[0] for r in conn.execute("SELECT id FROM entities")), dtype=object)
    eidx = {e: i for i, e in enumerate(entity_ids.tolist())}
    rel_rows = sorted(conn.execute("SELECT id, head, relation, tail FROM relations").fetchall())
    rel_rows = [r for r in rel_rows if r[1] in eidx and r[3] in eidx]
    relation_types = np.array(sorted({r[2] for r in rel_rows}), dtype=object)
    tidx_rel = {t: i for i, t in enumerate(relation_types.tolist())}
    n_e = len(entity_ids)
    heads = np.array([eidx[r[1]] for r in rel_rows], dtype=np.int64)
    tails = np.array([eidx[r[3]] for r in rel_rows], dtype=np.int64)
    rtypes = np.array([tidx_rel[r[2]] for r in rel_rows], dtype=np.int32)
    edge_rows = np.arange(len(rel_rows), dtype=np.int64)
    out_csr = _csr(heads, tails, edge_rows, (n_e, n_e))
    in_csr = _csr(tails, heads, edge_rows, (n_e, n_e))

    topic_ids = np.array(sorted(r[0] for r in conn.execute("SELECT id FROM topics")), dtype=object)
    tidx = {t: i for i, t in enumerate(topic_ids.tolist())}
    te_rows = [
        (eidx[e], tidx[t], w)
        for t, e, w in conn.execute("SELECT topic_id, entity_id, weight FROM topic_edges")
        if e in eidx and t in tidx
    ]
    e_rows = np.array([r[0] for r in te_rows], dtype=np.int64)
    t_rows = np.array([r[1] for r in te_rows], dtype=np.int64)
    weights = np.array([r[2] for r in te_rows], dtype=np.float64)
    n_t = len(topic_ids)
    return Adjacency(
        entity_ids=entity_ids,
        topic_ids=topic_ids,
        relation_ids=np.array([r[0] for r in rel_rows], dtype=object),
        relation_types=relation_types,
        rel_head=heads,
        rel_tail=tails,
        rel_type=rtypes,
        out_csr=out_csr,
        in_csr=in_csr,
        et_csr=_csr(e_rows, t_rows, weights, (n_e, n_t)),
        te_csr=_csr(t_rows, e_rows, weights, (n_t, n_e)),
    )


def _str_array(values: np.ndarray) -> np.ndarray:
    return np.array(values.tolist(), dtype=str) if len(values) else np.zeros(0, dtype="<U1")


def save_adjacency(adj: Adjacency, directory: Path) -> Path:
    """Write all arrays to ``directory/adjacency.npz`` atomically (temp file + rename)."""
    arrays: dict[str, np.ndarray] = {
        "entity_ids": _str_array(adj.entity_ids),
        "topic_ids": _str_array(adj.topic_ids),
        "relation_ids": _str_array(adj.relation_ids),
        "relation_types": _str_array(adj.relation_types),
        "rel_head": adj.rel_head,
        "rel_tail": adj.rel_tail,
        "rel_type": adj.rel_type,
    }
    for name in ("out_csr", "in_csr", "et_csr", "te_csr"):
        m: sp.csr_matrix = getattr(adj, name)
        arrays[f"{name}_indptr"] = m.indptr
        arrays[f"{name}_indices"] = m.indices
        arrays[f"{name}_data"] = m.data
        arrays[f"{name}_shape"] = np.array(m.shape, dtype=np.int64)
    target = directory / ADJACENCY_FILE
    tmp = directory / (ADJACENCY_FILE + ".tmp.npz")
    np.savez(tmp, **arrays)  # type: ignore[arg-type]
    tmp.replace(target)
    return target


def load_adjacency(directory: Path) -> Adjacency:
    """Load arrays saved by :func:`save_adjacency`."""
    with np.load(directory / ADJACENCY_FILE, allow_pickle=False) as z:
        data = {k: z[k] for k in z.files}

    def csr(name: str) -> sp.csr_matrix:
        shape = tuple(int(x) for x in data[f"{name}_shape"])
        return sp.csr_matrix(
            (data[f"{name}_data"], data[f"{name}_indices"], data[f"{name}_indptr"]), shape=shape
        )

    return Adjacency(
        entity_ids=data["entity_ids"].astype(object),
        topic_ids=data["topic_ids"].astype(object),
        relation_ids=data["relation_ids"].astype(object),
        relation_types=data["relation_types"].astype(object),
        rel_head=data["rel_head"],
        rel_tail=data["rel_tail"],
        rel_type=data["rel_type"],
        out_csr=csr("out_csr"),
        in_csr=csr("in_csr"),
        et_csr=csr("et_csr"),
        te_csr=csr("te_csr"),
    )
