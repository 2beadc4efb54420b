"""Incremental updates: ``evigraph kb add FILE`` and ``evigraph kb remove DOC_ID`` (EbmKG §A.3).

Adding or removing a document touches only the topics of its keyword entity and labels: those topics'
evidence sets, their entity edges and eq. 6 weights, and their vectors are recomputed; every other topic and
weight stays byte-identical. Updates are idempotent through document content hashes (re-adding the same
file changes nothing; a changed document replaces its old version).

Crash safety as for builds: the current build is copied, the copy is updated and published atomically.
"""

from __future__ import annotations

import shutil
import time
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from graphs.building.builder import Progress, TopicDescriber, content_hash, make_evidence, to_document
from graphs.building.embed_stage import embed_all, entity_text, evidence_text, search_text, topic_vectors
from graphs.building.hypergraph import build_topics, extractive_description
from graphs.building.linking import adopt_focus_names, entity_terms, link_documents, mentions_to_entities
from graphs.building.loaders import LoadError, LoadReport, SourceDocument, detect_corpus_loader
from graphs.disk.layout import (
    MATCHER_FILE,
    KBError,
    build_lock,
    current_build,
    new_tmp_build,
    publish,
    read_manifest,
    verify_build,
    write_manifest,
)
from graphs.disk.tables import (
    connect,
    delete_topics,
    entity_from_row,
    evidence_from_row,
    select_in,
    set_meta,
    write_documents,
    write_entities,
    write_evidence,
    write_evidence_entities,
    write_topic_edges,
    write_topics,
)
from graphs.model.schema import Evidence, Topic, short_hash
from graphs.stores.adjacency import build_adjacency, save_adjacency
from graphs.stores.embedded import DB_FILE, EmbeddedGraphStore, normalise_name
from graphs.text.lexical_index import build_from_db as build_lexical
from graphs.text.ner import DictionaryMatcher
from graphs.vectors.embedding import Embedder, get_embedder
from graphs.vectors.question_index import QUESTIONS_COLLECTION, question_items
from graphs.vectors.reader import ReaderUnavailable
from graphs.vectors.search_encoder import SEARCH_COLLECTION, recorded_search_encoder
from graphs.vectors.vector_index import MatrixVectorIndex, QdrantVectorIndex, VectorIndex

SQLITE_SIDE_FILES = shutil.ignore_patterns("*-wal", "*-shm", "*-journal")
"""Not copied into an update: a reader's WAL index belongs to the published file, not to the copy."""


def _quiet(stage: str, done: int, total: int) -> None:
    """Updates run silently unless the caller passes a progress sink (the CLI shows a bar)."""


MAX_DOCUMENT_CHARS = 200_000
"""Default cap on one document's text in ``kb add`` (the longest MedQuAD answer is ~29 k characters); a
longer one is skipped with a message, since chunking, linking and embedding it would take minutes."""


@dataclass
class UpdateResult:
    kb_version: str
    added_documents: list[str]
    unchanged_documents: list[str]
    removed_documents: list[str]
    touched_topics: list[str]
    report: LoadReport


def _vector_index(build: Path, manifest: dict[str, Any]) -> VectorIndex:
    backend = manifest.get("vector_backend", "matrix")
    prefix = str(manifest.get("qdrant_prefix", "evigraph"))
    if backend == "qdrant":
        return QdrantVectorIndex(url=str(manifest["qdrant_url"]), prefix=prefix)
    if backend == "qdrant-local":
        return QdrantVectorIndex(path=build / "qdrant", prefix=prefix)
    return MatrixVectorIndex(build / "vectors")


def _remove_documents(conn: Any, doc_ids: Sequence[str]) -> tuple[set[tuple[str, str]], list[str]]:
    """Delete documents and their evidence; return the (keyword, label) topics affected and evidence ids."""
    rows = select_in(
        conn, "SELECT id, keyword_entity, label FROM evidence WHERE document_id IN ({marks})", doc_ids
    )
    ev_ids = [r[0] for r in rows]
    for sql in (
        "DELETE FROM evidence_entities WHERE evidence_id IN ({marks})",
        "DELETE FROM topic_evidence WHERE evidence_id IN ({marks})",
        "DELETE FROM evidence WHERE id IN ({marks})",
    ):
        select_in(conn, sql, ev_ids)
    select_in(conn, "DELETE FROM documents WHERE id IN ({marks})", doc_ids)
    return {(r[1], r[2]) for r in rows}, ev_ids


def _recompute_topics(
    conn: Any, affected: set[tuple[str, str]], describe: TopicDescriber, entity_names: dict[str, str]
) -> list[str]:
    """Rebuild exactly the affected topics from their current evidence; empty topics disappear."""
    touched = []
    for entity, label in sorted(affected):
        rows = conn.execute(
            "SELECT * FROM evidence WHERE keyword_entity=? AND label=? ORDER BY id", (entity, label)
        ).fetchall()
        units = [evidence_from_row(r) for r in rows]
        mentions: dict[str, set[str]] = {}
        for ev_id, ent in select_in(
            conn,
            "SELECT evidence_id, entity_id FROM evidence_entities WHERE evidence_id IN ({marks})",
            [u.id for u in units],
        ):
            mentions.setdefault(ev_id, set()).add(ent)
        tid = f"T:{entity}|{label}"
        delete_topics(conn, [tid])
        topics, edges = build_topics(units, mentions, describe)
        write_topics(conn, topics)
        write_topic_edges(conn, edges)
        touched.append(tid)
    return touched


def _publish_update(
    root: Path, tmp: Path, manifest: dict[str, Any], conn: Any, change: dict[str, Any]
) -> str:
    counts = {
        k: int(conn.execute(f"SELECT COUNT(*) FROM {k}").fetchone()[0])
        for k in ("entities", "relations", "documents", "evidence", "topics", "topic_edges")
    }
    if "questions" in manifest.get("counts", {}):  # a KB built before the question index stays without
        counts["questions"] = len(question_items(conn.execute("SELECT id, title FROM documents")))
    suffix = short_hash(manifest["kb_version"], repr(change), length=8)
    version = f"{manifest.get('name', 'kb')}-{time.strftime('%Y%m%d')}-{suffix}"
    with conn:
        set_meta(conn, "kb_version", version)
    save_adjacency(build_adjacency(conn), tmp)
    build_lexical(conn).save(tmp)  # rebuilt from the updated tables: BM25 statistics are corpus-wide
    conn.close()
    manifest = {
        **manifest,
        "kb_version": version,
        "counts": counts,
        "updates": [*manifest.get("updates", []), {"at": time.strftime("%Y-%m-%dT%H:%M:%S"), **change}],
    }
    manifest.pop("schema_version", None)
    write_manifest(tmp, manifest)
    publish(root, tmp)
    return version


def validated_documents(
    path: Path, fmt: str | None, report: LoadReport, max_document_chars: int = MAX_DOCUMENT_CHARS
) -> list[SourceDocument]:
    """The documents of ``path`` that may go into the KB: over-long ones skipped, and of several rows with
    the same id only the last (as in a log of edits: the later row is the newer version)."""
    last: dict[str, SourceDocument] = {}
    for doc in detect_corpus_loader(path, fmt).load(path, report):
        if len(doc.text) > max_document_chars:
            report.skip(
                path,
                0,
                f"document {doc.id} has {len(doc.text):,} characters, over the limit of "
                f"{max_document_chars:,}: split it into several documents, or raise the limit with "
                "--max-doc-chars",
            )
            continue
        if doc.id in last:
            report.skip(path, 0, f"document {doc.id} appears more than once: the last version was kept")
            del last[doc.id]  # keep the file order of the surviving versions
        last[doc.id] = doc
    return list(last.values())


def _checked_current(root: Path) -> tuple[Path, dict[str, Any]]:
    """The published build and its manifest, verified first: an update must not copy damage into a new
    build that would then carry fresh, matching checksums."""
    current = current_build(root)
    manifest = read_manifest(current)
    verify_build(current, manifest)
    return current, dict(manifest.data)


def add_documents(
    root: Path,
    path: Path,
    fmt: str | None = None,
    describe_topic: TopicDescriber | None = None,
    progress: Progress | None = None,
    max_document_chars: int = MAX_DOCUMENT_CHARS,
) -> UpdateResult:
    """Add (or replace changed) documents from ``path`` to the current KB."""
    report = LoadReport()
    progress = progress or _quiet
    progress("reading documents", 0, 1)
    docs = validated_documents(path, fmt, report, max_document_chars)
    progress("reading documents", 1, 1)
    if not docs:
        skipped = "".join(f"\n  {line}" for line in report.summary(5))
        raise LoadError(
            f"No usable document in {path}; nothing was changed. Check the file and its format.{skipped}"
        )
    with build_lock(root):
        current, manifest = _checked_current(root)
        store = EmbeddedGraphStore(current)
        known = store.get_documents([d.id for d in docs])
        store.close()
        fresh = [d for d in docs if d.id not in known or known[d.id].content_hash != content_hash(d)]
        unchanged = sorted(d.id for d in docs if d not in fresh)
        if not fresh:
            return UpdateResult(manifest["kb_version"], [], unchanged, [], [], report)
        tmp = new_tmp_build(root)
        try:
            shutil.copytree(current, tmp, dirs_exist_ok=True, ignore=SQLITE_SIDE_FILES)
            (tmp / "manifest.json").unlink()
            conn = connect(tmp / DB_FILE)
            entities = {r[0]: entity_from_row(r) for r in conn.execute("SELECT * FROM entities")}
            degree: Counter[str] = Counter()
            for h, t in conn.execute("SELECT head, tail FROM relations"):
                degree[h] += 1
                degree[t] += 1
            matcher = DictionaryMatcher.load(tmp / MATCHER_FILE)
            before = set(entities)
            keyword = link_documents(fresh, entities, dict(degree), matcher)
            originals = dict(entities)
            adopted = adopt_focus_names(fresh, keyword, entities)
            changed = [e for k, e in entities.items() if k in before and e is not originals[k]]
            new_entities = [entities[i] for i in sorted(set(entities) - before)]
            if new_entities or adopted:
                matcher = DictionaryMatcher.build(entity_terms(entities.values()))
                matcher.save(tmp / MATCHER_FILE)
            with conn:
                affected, removed_ev = _remove_documents(conn, [d.id for d in fresh if d.id in known])
                evidence: list[Evidence] = []
                mentions: dict[str, set[str]] = {}
                for n, doc in enumerate(fresh, start=1):
                    progress("finding entities in evidence", n, len(fresh))
                    units = make_evidence(doc, keyword[doc.id])
                    for ev, found in zip(units, matcher.find_many([u.text for u in units]), strict=True):
                        mentions[ev.id] = mentions_to_entities(found, degree)
                    evidence.extend(units)
                    affected.add((keyword[doc.id], doc.label))
                write_entities(conn, [*new_entities, *changed], normalise_name)
                write_documents(conn, ((to_document(d), d.text) for d in fresh))
                write_evidence(conn, evidence)
                write_evidence_entities(
                    conn, ((e.id, m) for e in evidence for m in sorted({*mentions[e.id], e.keyword_entity}))
                )
                summarise = describe_topic or extractive_description

                def describe(ent: str, label: str, units: list[Evidence]) -> str:
                    return summarise(entities[ent].name, label, units)

                touched = _recompute_topics(
                    conn, affected, describe, {k: v.name for k, v in entities.items()}
                )
            _update_vectors(
                tmp,
                manifest,
                conn,
                new_entities,
                evidence,
                removed_ev,
                touched,
                entities,
                [d.id for d in fresh],
                progress,
            )
            version = _publish_update(
                root,
                tmp,
                manifest,
                conn,
                {"op": "add", "file": str(path), "documents": [d.id for d in fresh]},
            )
        except BaseException:
            shutil.rmtree(tmp, ignore_errors=True)
            raise
        return UpdateResult(version, sorted(d.id for d in fresh), unchanged, [], touched, report)


def _update_vectors(
    tmp: Path,
    manifest: dict[str, Any],
    conn: Any,
    new_entities: Sequence[Any],
    evidence: Sequence[Evidence],
    removed_evidence: Sequence[str],
    touched_topics: Sequence[str],
    entities: dict[str, Any],
    document_ids: Sequence[str],
    progress: Progress = _quiet,
) -> None:
    embedder = get_embedder(str(manifest.get("embedding_backend", "onnx")))
    searcher = _search_encoder_of(manifest)
    index = _vector_index(tmp, manifest)
    if removed_evidence:
        index.delete("evidence", list(removed_evidence))
        if searcher is not None:
            index.delete(SEARCH_COLLECTION, list(removed_evidence))
    if document_ids:  # added, replaced or removed documents: their questions are re-indexed from the table
        index.delete(QUESTIONS_COLLECTION, list(document_ids))
        sql = "SELECT id, title FROM documents WHERE id IN ({marks})"
        questions = question_items(select_in(conn, sql, list(document_ids)))
        embed_all(embedder, index, QUESTIONS_COLLECTION, questions, progress)
    titles = dict(
        select_in(
            conn, "SELECT id, title FROM documents WHERE id IN ({marks})", [e.document_id for e in evidence]
        )
    )
    embed_all(embedder, index, "entities", [(e.id, entity_text(e)) for e in new_entities], progress)
    items = [(e.id, evidence_text(e, titles[e.document_id])) for e in evidence]
    embed_all(embedder, index, "evidence", items, progress, batch=64)
    if searcher is not None:
        texts = [(e.id, search_text(e, titles[e.document_id])) for e in evidence]
        embed_all(searcher, index, SEARCH_COLLECTION, texts, progress, batch=64)
    live = [r[0] for r in select_in(conn, "SELECT id FROM topics WHERE id IN ({marks})", touched_topics)]
    gone = sorted(set(touched_topics) - set(live))
    if gone:
        index.delete("topics", gone)
    if live:
        index.flush()
        index.upsert("topics", *topic_vectors(index, _topics_with_evidence(conn, live)))
    index.flush()
    index.close()


def _topics_with_evidence(conn: Any, topic_ids: Sequence[str]) -> list[Topic]:
    links: dict[str, list[str]] = {}
    sql = "SELECT topic_id, evidence_id FROM topic_evidence WHERE topic_id IN ({marks})"
    for t, e in select_in(conn, sql, topic_ids):
        links.setdefault(t, []).append(e)
    return [
        Topic(
            id=r[0],
            entity_id=r[1],
            label=r[2],
            description=r[3],
            evidence_ids=tuple(sorted(links.get(r[0], []))),
        )
        for r in select_in(conn, "SELECT * FROM topics WHERE id IN ({marks})", topic_ids)
    ]


def _search_encoder_of(manifest: dict[str, Any]) -> Embedder | None:
    """The search encoder that made this build's search vectors, or ``None`` if the build has none.

    Why refuse rather than skip when it is missing or different: a document added without its search vector
    (or with another model's) would be invisible to, or mis-scored by, the build's dense evidence search,
    silently. Nothing has been published when this raises.
    """
    try:
        return recorded_search_encoder(manifest)
    except ReaderUnavailable as error:
        raise KBError(f"Cannot update the KB: {error}. Nothing was changed.") from error


def remove_document(root: Path, doc_id: str, describe_topic: TopicDescriber | None = None) -> UpdateResult:
    """Remove one document (and its evidence) from the current KB."""
    with build_lock(root):
        current, manifest = _checked_current(root)
        store = EmbeddedGraphStore(current)
        exists = bool(store.get_documents([doc_id]))
        store.close()
        if not exists:
            raise KBError(
                f"No document '{doc_id}' in the KB. `evigraph kb info` shows the sources; ids look "
                "like medquad:<id> or doc:<id>."
            )
        tmp = new_tmp_build(root)
        try:
            shutil.copytree(current, tmp, dirs_exist_ok=True, ignore=SQLITE_SIDE_FILES)
            (tmp / "manifest.json").unlink()
            conn = connect(tmp / DB_FILE)
            entities = {r[0]: entity_from_row(r) for r in conn.execute("SELECT * FROM entities")}
            with conn:
                affected, removed_ev = _remove_documents(conn, [doc_id])
                summarise = describe_topic or extractive_description

                def describe(ent: str, label: str, units: list[Evidence]) -> str:
                    return summarise(entities[ent].name, label, units)

                touched = _recompute_topics(
                    conn, affected, describe, {k: v.name for k, v in entities.items()}
                )
            _update_vectors(tmp, manifest, conn, [], [], removed_ev, touched, entities, [doc_id])
            version = _publish_update(root, tmp, manifest, conn, {"op": "remove", "documents": [doc_id]})
        except BaseException:
            shutil.rmtree(tmp, ignore_errors=True)
            raise
        return UpdateResult(version, [], [], [doc_id], touched, LoadReport())
