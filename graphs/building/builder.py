"""``evigraph kb build``: knowledge graph + corpus → a published, crash-safe KB build.

Stages: load KG sources (merged by entity id) → load documents → link each document's focus to its keyword
entity → split into evidence units → dictionary NER for ``f(e)`` → topics and eq. 6 weights → SQLite tables
and CSR adjacency → embeddings of entities, evidence and topics → manifest → atomic publish. The linking
rules (``linking``) and the embedding stage (``embed_stage``) live beside this module, shared with ``kb add``.
"""

from __future__ import annotations

import hashlib
import json
import platform
import sqlite3
import time
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from graphs.building.chunking import MAX_WORDS, TARGET_WORDS, split_evidence
from graphs.building.embed_stage import (
    cached_embedder,
    cached_search_embedder,
    embed_all,
    entity_text,
    evidence_text,
    open_vector_index,
    search_text,
    topic_vectors,
)
from graphs.building.hypergraph import build_topics, extractive_description
from graphs.building.linking import adopt_focus_names, entity_terms, link_documents, mentions_to_entities
from graphs.building.loaders import (
    LoadError,
    LoadReport,
    SourceDocument,
    detect_corpus_loader,
    detect_kg_loader,
)
from graphs.disk.layout import MATCHER_FILE, build_lock, new_tmp_build, publish, write_manifest
from graphs.disk.tables import (
    connect,
    set_meta,
    write_documents,
    write_entities,
    write_evidence,
    write_evidence_entities,
    write_relations,
    write_topic_edges,
    write_topics,
)
from graphs.model.schema import Document, Entity, Evidence, Relation, Topic, evidence_id, short_hash
from graphs.stores.adjacency import build_adjacency, save_adjacency
from graphs.stores.embedded import DB_FILE, normalise_name
from graphs.text.lexical_index import build_from_db as build_lexical
from graphs.text.ner import DictionaryMatcher
from graphs.vectors.question_index import QUESTIONS_COLLECTION, question_items
from graphs.vectors.search_encoder import SEARCH_COLLECTION

Progress = Callable[[str, int, int], None]
TopicDescriber = Callable[[str, str, list[Evidence]], str]
"""(entity name, label, evidence units) → topic description; extractive unless an LLM summariser is given."""


def _no_progress(stage: str, done: int, total: int) -> None:
    """Default progress sink: builds run silently unless the caller wants a progress bar."""


@dataclass
class BuildConfig:
    """What to build from, and how."""

    kg_sources: Sequence[tuple[Path, str | None]]
    corpus_sources: Sequence[tuple[Path, str | None]]
    embedding_backend: str = "onnx"
    vector_backend: str = "matrix"
    qdrant_url: str | None = None
    qdrant_api_key: str | None = None
    max_documents: int | None = None
    describe_topic: TopicDescriber | None = None
    embedding_caches: Sequence[Path] = ()
    user_embedding_cache: Path | None = None
    search_encoder: bool = True
    """Also store the search encoder's evidence vectors (graphs/vectors/search_encoder.py)."""
    name: str = "custom"
    extra: dict[str, Any] = field(default_factory=dict)


@dataclass
class BuildResult:
    build_dir: Path
    manifest: dict[str, Any]
    report: LoadReport


def load_kg(
    sources: Iterable[tuple[Path, str | None]], report: LoadReport
) -> tuple[dict[str, Entity], dict[str, Relation]]:
    """Read every KG source; entities with the same id are merged (synonyms, xrefs, sources united)."""
    entities: dict[str, Entity] = {}
    relations: dict[str, Relation] = {}
    for path, fmt in sources:
        for item in detect_kg_loader(path, fmt).load(path, report):
            if isinstance(item, Relation):
                relations.setdefault(item.id, item)
            else:
                entities[item.id] = merge_entity(entities.get(item.id), item)
    dangling = [r for r in relations.values() if r.head not in entities or r.tail not in entities]
    for rel in dangling:
        del relations[rel.id]
    if dangling:
        report.skip(Path("<kg>"), 0, f"{len(dangling)} relation(s) dropped: an endpoint is not a known node")
    return entities, relations


def merge_entity(old: Entity | None, new: Entity) -> Entity:
    if old is None:
        return new

    def union(a: tuple[str, ...], b: tuple[str, ...]) -> tuple[str, ...]:
        return tuple(dict.fromkeys((*a, *b)))

    return old.model_copy(
        update={
            "synonyms": tuple(s for s in union(old.synonyms, (*new.synonyms, new.name)) if s != old.name),
            "xrefs": union(old.xrefs, new.xrefs),
            "sources": union(old.sources, new.sources),
            "description": old.description or new.description,
            "type": old.type if old.type not in ("Concept", "") else new.type,
        }
    )


def load_documents(
    sources: Iterable[tuple[Path, str | None]], report: LoadReport, limit: int | None
) -> list[SourceDocument]:
    docs: dict[str, SourceDocument] = {}
    for path, fmt in sources:
        for doc in detect_corpus_loader(path, fmt).load(path, report):
            if doc.id in docs:  # as in `kb add`: the later record (file) is the newer version
                report.skip(path, 0, f"document {doc.id} appears more than once: the last version was kept")
            docs[doc.id] = doc
            if limit is not None and len(docs) >= limit:
                break
    if not docs:
        names = ", ".join(str(p) for p, _ in sources) or "(none given)"
        raise LoadError(
            f"The corpus is empty: no usable document in {names}. Check the files and their format."
        )
    return [docs[k] for k in sorted(docs)]


def content_hash(doc: SourceDocument) -> str:
    payload = json.dumps([doc.title, doc.text, doc.label, doc.focus, doc.source, doc.url, doc.date])
    return hashlib.sha256(payload.encode("utf-8")).hexdigest()[:16]


def make_evidence(doc: SourceDocument, keyword_entity: str) -> list[Evidence]:
    return [
        Evidence(
            id=evidence_id(doc.id, s.start, s.end, doc.text[s.start : s.end]),
            document_id=doc.id,
            text=doc.text[s.start : s.end],
            label=doc.label,
            keyword_entity=keyword_entity,
            start=s.start,
            end=s.end,
        )
        for s in split_evidence(doc.text)
    ]


def to_document(doc: SourceDocument) -> Document:
    return Document(
        id=doc.id,
        title=doc.title,
        source=doc.source,
        url=doc.url,
        date=doc.date,
        license=doc.license,
        focus=doc.focus,
        content_hash=content_hash(doc),
    )


def write_tables(
    conn: sqlite3.Connection,
    entities: dict[str, Entity],
    relations: dict[str, Relation],
    docs: Sequence[SourceDocument],
    evidence: Sequence[Evidence],
    mentions: dict[str, set[str]],
    topics: Sequence[Topic],
    edges: Sequence[Any],
) -> None:
    with conn:
        write_entities(conn, entities.values(), normalise_name)
        write_relations(conn, relations.values())
        write_documents(conn, ((to_document(d), d.text) for d in docs))
        write_evidence(conn, evidence)
        write_evidence_entities(
            conn,
            ((ev.id, m) for ev in evidence for m in sorted({*mentions.get(ev.id, ()), ev.keyword_entity})),
        )
        write_topics(conn, topics)
        write_topic_edges(conn, edges)


def build_kb(root: Path, config: BuildConfig, progress: Progress = _no_progress) -> BuildResult:
    """Build a KB from ``config`` into ``root`` and publish it; the previous build stays intact on failure."""
    started = time.perf_counter()
    timings: dict[str, float] = {}
    report = LoadReport()
    with build_lock(root):
        tmp = new_tmp_build(root)

        def lap(stage: str) -> None:
            timings[stage] = round(time.perf_counter() - started - sum(timings.values()), 3)

        progress("loading knowledge graph", 0, 1)
        entities, relations = load_kg(config.kg_sources, report)
        degree: Counter[str] = Counter()
        for r in relations.values():
            degree[r.head] += 1
            degree[r.tail] += 1
        lap("load_kg")
        progress("loading documents", 0, 1)
        docs = load_documents(config.corpus_sources, report, config.max_documents)
        lap("load_corpus")

        progress("building entity dictionary", 0, 1)
        matcher = DictionaryMatcher.build(entity_terms(entities.values()))
        keyword = link_documents(docs, entities, dict(degree), matcher)
        new_entities = [e for e in entities.values() if e.id.startswith(("FOCUS:", "DOC:"))]
        # Adopt first, then test: a short-circuited ``or`` would skip the adoption whenever documents
        # created new focus entities, which every MedQuAD build does.
        adopted = adopt_focus_names(docs, keyword, entities)
        if new_entities or adopted:
            matcher = DictionaryMatcher.build(entity_terms(entities.values()))
        matcher.save(tmp / MATCHER_FILE)
        lap("link_and_dictionary")

        evidence: list[Evidence] = []
        mentions: dict[str, set[str]] = {}
        titles = {d.id: d.title for d in docs}
        for n, doc in enumerate(docs, start=1):
            units = make_evidence(doc, keyword[doc.id])
            for ev, found in zip(units, matcher.find_many([u.text for u in units]), strict=True):
                mentions[ev.id] = mentions_to_entities(found, degree)
            evidence.extend(units)
            if n % 500 == 0 or n == len(docs):
                progress("finding entities in evidence", n, len(docs))
        lap("chunk_and_ner")

        summarise = config.describe_topic or extractive_description
        topics, edges = build_topics(
            evidence, mentions, lambda ent, label, units: summarise(entities[ent].name, label, units)
        )
        lap("topics")

        conn = connect(tmp / DB_FILE)
        write_tables(conn, entities, relations, docs, evidence, mentions, topics, edges)
        save_adjacency(build_adjacency(conn), tmp)
        lap("tables_and_adjacency")
        progress("building the BM25 index", 0, 1)
        build_lexical(conn).save(tmp)
        lap("lexical_index")

        embedder = cached_embedder(config)
        index = open_vector_index(
            config, tmp, prefix=f"evigraph_{tmp.name.removeprefix('.tmp-')}", dim=embedder.dim
        )
        embed_all(embedder, index, "entities", [(e.id, entity_text(e)) for e in entities.values()], progress)
        embed_all(
            embedder,
            index,
            "evidence",
            [(e.id, evidence_text(e, titles[e.document_id])) for e in evidence],
            progress,
        )
        questions = question_items(titles.items())
        embed_all(embedder, index, QUESTIONS_COLLECTION, questions, progress)
        embedder.save()
        searcher, no_search = cached_search_embedder(config)
        if searcher is not None:
            texts = [(e.id, search_text(e, titles[e.document_id])) for e in evidence]
            embed_all(searcher, index, SEARCH_COLLECTION, texts, progress)
            searcher.save()
        index.flush()
        index.upsert("topics", *topic_vectors(index, topics))
        index.flush()
        index.close()
        lap("embeddings")

        counts = {
            "entities": len(entities),
            "relations": len(relations),
            "documents": len(docs),
            "evidence": len(evidence),
            "questions": len(questions),
            "topics": len(topics),
            "topic_edges": len(edges),
        }
        version_seed = json.dumps(
            [sorted(d.id + content_hash(d) for d in docs), sorted(relations), config.embedding_backend]
        )
        manifest: dict[str, Any] = {
            "kb_version": f"{config.name}-{time.strftime('%Y%m%d')}-{short_hash(version_seed, length=8)}",
            "name": config.name,
            "created_at": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
            "embedder": embedder.name,
            "embedding_backend": config.embedding_backend,
            "embedding_cache": {"hits": embedder.hits, "misses": embedder.misses},
            "search_embedder": searcher.name if searcher else None,
            "search_embedder_missing": no_search,
            "search_embedding_cache": (
                {"hits": searcher.hits, "misses": searcher.misses} if searcher else None
            ),
            "vector_backend": config.vector_backend,
            "qdrant_prefix": f"evigraph_{tmp.name.removeprefix('.tmp-')}",
            "qdrant_url": config.qdrant_url if config.vector_backend == "qdrant" else None,
            "counts": counts,
            "sources": {
                "kg": [{"path": str(p), "format": f} for p, f in config.kg_sources],
                "corpus": [{"path": str(p), "format": f} for p, f in config.corpus_sources],
            },
            "chunking": {"target_words": TARGET_WORDS, "max_words": MAX_WORDS, "overlap": "1 sentence"},
            "skipped_rows": len(report.issues),
            "skipped_by_reason": report.by_reason(),
            "skipped_examples": report.summary(50),
            "timings_s": timings,
            "build_seconds": round(time.perf_counter() - started, 2),
            "python": platform.python_version(),
            "updates": [],
            **config.extra,
        }
        with conn:
            set_meta(conn, "kb_version", manifest["kb_version"])
        conn.close()
        write_manifest(tmp, manifest)
        final = publish(root, tmp)
        progress("done", 1, 1)
        return BuildResult(final, manifest, report)
