"""``evigraph kb build``: knowledge graph + corpus → a published, crash-safe KB build.

Stages: load KG sources (merged by entity id) → load documents → link each document's focus to its keyword
entity → split into evidence units → dictionary NER for ``f(e)`` → topics and eq. 6 weights → SQLite tables
and CSR adjacency → embeddings of entities, evidence and topics → manifest → atomic publish.
"""

from __future__ import annotations

import hashlib
import json
import math
import platform
import sqlite3
import time
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from graphs.building.chunking import MAX_WORDS, TARGET_WORDS, split_evidence
from graphs.building.hypergraph import FocusLinker, build_topics, extractive_description, new_focus_entity
from graphs.building.loaders import (
    LoadError,
    LoadReport,
    SourceDocument,
    detect_corpus_loader,
    detect_kg_loader,
)
from graphs.disk.layout import MATCHER_FILE, VECTORS_DIR, build_lock, new_tmp_build, publish, write_manifest
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
from graphs.model.schema import Document, Entity, Evidence, Relation, Topic, evidence_id, short_hash, slugify
from graphs.stores.adjacency import build_adjacency, save_adjacency
from graphs.stores.embedded import DB_FILE, normalise_name
from graphs.text.lexical_index import build_from_db as build_lexical
from graphs.text.ner import DictionaryMatcher, Mention
from graphs.vectors.embedding import Embedder, get_embedder
from graphs.vectors.embedding_cache import CachedEmbedder, EmbeddingCache
from graphs.vectors.question_index import QUESTIONS_COLLECTION, question_items
from graphs.vectors.vector_index import MatrixVectorIndex, QdrantVectorIndex, VectorIndex

MAX_SENSES_PER_MENTION = 3
"""A surface form that names several entities contributes at most this many (best connected) to f(e)."""

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
            docs.setdefault(doc.id, doc)
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


def entity_terms(entities: Iterable[Entity]) -> Iterable[tuple[str, str]]:
    """Dictionary terms of each entity: its name, its synonyms, and their everyday short forms.

    The one short form added: a trailing "mellitus" is dropped ("type 2 diabetes mellitus" → "type 2
    diabetes"), because clinicians and patients almost never say it and the KG almost always does.
    """
    for e in entities:
        for term in (e.name, *e.synonyms):
            yield term, e.id
            if term.lower().endswith(" mellitus") and len(term.split()) > 2:
                yield term[: -len(" mellitus")], e.id


def mentions_to_entities(mentions: Sequence[Mention], degree: dict[str, int]) -> set[str]:
    """``f(e)`` from dictionary mentions: negated mentions still count (the passage is about them)."""
    out: set[str] = set()
    for m in mentions:
        senses = sorted(m.entity_ids, key=lambda i: (-degree.get(i, 0), i))
        out.update(senses[:MAX_SENSES_PER_MENTION])
    return out


def link_documents(
    docs: Sequence[SourceDocument],
    entities: dict[str, Entity],
    degree: dict[str, int],
    matcher: DictionaryMatcher | None,
) -> dict[str, str]:
    """Keyword entity per document; new focus entities are added to ``entities``.

    A document without a focus (generic documents) takes the entity it mentions most, weighted by
    specificity (``count / log(2 + degree)``) so that a hub such as "disease" does not become its keyword.
    """
    linker = FocusLinker.from_entities(entities, degree)
    keyword: dict[str, str] = {}
    for doc in docs:
        hit = None
        if doc.focus:
            hit = linker.link(doc.focus, doc.focus_cuis, doc.focus_synonyms)
        elif matcher is not None:
            counts = Counter(i for m in matcher.find(doc.title + "\n" + doc.text) for i in m.entity_ids[:1])
            hit = (
                min(counts, key=lambda i: (-counts[i] / math.log(2 + degree.get(i, 0)), i))
                if counts
                else None
            )
        if hit is None:
            focus = doc.focus or doc.title
            ent = new_focus_entity(focus, doc.focus_cuis, doc.focus_synonyms, doc.focus_type)
            if not doc.focus:
                ent = ent.model_copy(update={"id": "DOC:" + slugify(doc.id), "type": "Concept"})
            if ent.id not in entities:
                entities[ent.id] = ent
                linker.add(ent)
            hit = ent.id
        keyword[doc.id] = hit
    return keyword


def adopt_focus_names(
    docs: Sequence[SourceDocument], keyword: dict[str, str], entities: dict[str, Entity]
) -> int:
    """Add curated focus names as synonyms of the KG entity they were linked to through a UMLS CUI.

    Why: KG names are often formal ("type 2 diabetes mellitus") while people write "type 2 diabetes";
    MedQuAD foci are UMLS-curated consumer names of the same concept, so they make the dictionary match the
    way questions are asked. Only short names of single-CUI foci that name no other entity are adopted
    (NIDDK "foci" can be page titles; a multi-CUI focus is a broader concept).
    """
    taken = {normalise_name(n) for e in entities.values() for n in (e.name, *e.synonyms)}
    adopted = 0
    for doc in docs:
        ent = entities.get(keyword.get(doc.id, ""))
        if ent is None or len(doc.focus_cuis) != 1 or ent.id.startswith(("FOCUS:", "DOC:")):
            continue  # several CUIs ("Diabetes" → T1, T2, …) would make the name a wrong synonym
        new = [
            n
            for n in dict.fromkeys((doc.focus, *doc.focus_synonyms))
            if n and "?" not in n and len(n.split()) <= 6 and normalise_name(n) not in taken
        ]
        if new:
            entities[ent.id] = ent.model_copy(update={"synonyms": (*ent.synonyms, *new)})
            taken.update(normalise_name(n) for n in new)
            adopted += len(new)
    return adopted


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


def entity_text(e: Entity) -> str:
    syn = "; ".join(list(dict.fromkeys(e.synonyms))[:5])
    return f"{e.name} ({e.type}){': ' + syn if syn else ''}"


def evidence_text(ev: Evidence, title: str) -> str:
    """What the embedder sees: the document title gives a paragraph the context its text often omits."""
    return f"{title}\n{ev.text}"


def topic_vectors(index: VectorIndex, topics: Sequence[Topic]) -> tuple[list[str], np.ndarray]:
    """A topic's vector is the normalised mean of its evidence vectors.

    Why not embed the description: a topic *is* its evidence set (EbmKG §3), the mean is a faithful summary
    of all of it rather than of its first paragraph, and it costs no model call.
    """
    ids: list[str] = []
    rows: list[np.ndarray] = []
    for t in topics:
        vecs = index.get_vectors("evidence", list(t.evidence_ids))
        if not vecs:
            continue
        mean = np.mean(np.stack(list(vecs.values())), axis=0)
        ids.append(t.id)
        rows.append(mean / max(float(np.linalg.norm(mean)), 1e-9))
    return ids, (np.stack(rows).astype(np.float32) if rows else np.zeros((0, index_dim(index)), np.float32))


def index_dim(index: VectorIndex) -> int:
    return int(getattr(index, "dim", 384))


def cached_embedder(config: BuildConfig) -> CachedEmbedder:
    """The configured embedder behind the shipped and per-user embedding caches."""
    inner = get_embedder(config.embedding_backend)
    shipped = [EmbeddingCache(p, inner.dim) for p in config.embedding_caches if p.exists()]
    user = EmbeddingCache(config.user_embedding_cache, inner.dim) if config.user_embedding_cache else None
    return CachedEmbedder(inner, shipped, user)


def open_vector_index(config: BuildConfig, build_dir: Path, prefix: str, dim: int) -> VectorIndex:
    if config.vector_backend == "matrix":
        return MatrixVectorIndex(build_dir / VECTORS_DIR, dim=dim)
    if config.vector_backend == "qdrant-local":
        return QdrantVectorIndex(path=build_dir / "qdrant", prefix=prefix, dim=dim)
    if config.vector_backend == "qdrant":
        return QdrantVectorIndex(url=config.qdrant_url, api_key=config.qdrant_api_key, prefix=prefix, dim=dim)
    raise ValueError(f"Unknown vector backend '{config.vector_backend}' (matrix, qdrant-local, qdrant)")


def embed_all(
    embedder: Embedder,
    index: VectorIndex,
    collection: str,
    items: Sequence[tuple[str, str]],
    progress: Progress,
    batch: int = 256,
) -> None:
    """Embed (id, text) pairs in batches into ``collection``, reporting progress."""
    for i in range(0, len(items), batch):
        chunk = items[i : i + batch]
        index.upsert(collection, [k for k, _ in chunk], embedder.embed([t for _, t in chunk]))
        progress(f"embedding {collection}", min(i + batch, len(items)), len(items))


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
            "skipped_examples": report.summary(10),
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
