"""The embedding stage of a build: the text each entity and evidence unit is embedded as, the cached embedder
and vector index a build writes to, batched upserts, and topic vectors.

Why a module of its own: these texts decide every stored vector, so ``kb add`` (``incremental``), the
shipped embedding caches (``data/derive_embeddings.py``, keyed by the text) and the retrieval baselines
(``evals/baselines``) must embed exactly what a build embeds; and this is the one stage that talks to an
embedding model or a vector store, while the rest of the build is SQLite and CSR work.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from graphs.disk.layout import VECTORS_DIR
from graphs.model.schema import Entity, Evidence, Topic
from graphs.vectors.embedding import Embedder, get_embedder
from graphs.vectors.embedding_cache import CachedEmbedder, EmbeddingCache
from graphs.vectors.reader import ReaderUnavailable
from graphs.vectors.search_encoder import get_search_encoder
from graphs.vectors.vector_index import MatrixVectorIndex, QdrantVectorIndex, VectorIndex

if TYPE_CHECKING:  # the builder imports this module: its types only, to avoid an import cycle
    from graphs.building.builder import BuildConfig, Progress


def entity_text(e: Entity) -> str:
    syn = "; ".join(list(dict.fromkeys(e.synonyms))[:5])
    return f"{e.name} ({e.type}){': ' + syn if syn else ''}"


def evidence_text(ev: Evidence, title: str) -> str:
    """What the embedder sees: the document title gives a paragraph the context its text often omits."""
    return f"{title}\n{ev.text}"


IDENTIFIER_TITLE = re.compile(r"[A-Za-z]+\s*:?\s*\d+")
"""A title that is only a source name and a number ("PubMed 22914948"): it says nothing about the passage."""


def search_text(ev: Evidence, title: str) -> str:
    """What the search encoder sees: :func:`evidence_text`, without a title that is only an identifier.

    Why: the search encoder was trained on bare passages, and "PubMed 22914948" on top of each BioASQ
    snippet costs it recall: dense-only recall@10 of the bioasq-dev questions over all 20,585 snippets
    0.808 with the identifier titles, 0.834 without (int8, 2026-11-27). A real title (a MedQuAD question, an
    article title) stays: it names what a paragraph is about when the paragraph does not.
    """
    return ev.text if IDENTIFIER_TITLE.fullmatch(title.strip()) else evidence_text(ev, title)


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
    return behind_caches(get_embedder(config.embedding_backend), config)


def behind_caches(inner: Embedder, config: BuildConfig) -> CachedEmbedder:
    """``inner`` reading through the build's shipped caches and writing misses to the user cache (keys are
    per embedder name, so one set of files serves both encoders)."""
    shipped = [EmbeddingCache(p, inner.dim) for p in config.embedding_caches if p.exists()]
    user = EmbeddingCache(config.user_embedding_cache, inner.dim) if config.user_embedding_cache else None
    return CachedEmbedder(inner, shipped, user)


def cached_search_embedder(config: BuildConfig) -> tuple[CachedEmbedder | None, str | None]:
    """The search encoder (graphs/vectors/search_encoder.py) behind the same caches, or ``None`` and why.

    Why a build goes on without it: the base evidence vectors still rank evidence (as before the search
    encoder existed); the manifest records the reason and the KB's warnings repeat it to every answer.
    """
    if not config.search_encoder:
        return None, "this build was configured without the search encoder"
    try:
        return behind_caches(get_search_encoder(), config), None
    except ReaderUnavailable as error:
        return None, str(error)


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
