"""``KnowledgeBase``: one handle on a published build — graph store, vector index, dictionary, embedder.

The tools take a ``KnowledgeBase`` and nothing else, so tests can hand them a small real KB and the agent
can hand them the default one. Heavy parts (the embedding model, the dictionary automaton) load lazily on
first use, so opening a KB for ``kb info`` or a graph-only call stays fast.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from graphs.disk.layout import (
    MATCHER_FILE,
    VECTORS_DIR,
    KBCorrupt,
    Manifest,
    current_build,
    read_manifest,
    take_lease,
    verify_build,
)
from graphs.model.settings import Settings
from graphs.stores.base import GraphStore, StoreError
from graphs.stores.embedded import DB_FILE, EmbeddedGraphStore
from graphs.text.lexical_index import LexicalIndex, open_lexical
from graphs.text.ner import DictionaryMatcher
from graphs.vectors.embedding import get_embedder
from graphs.vectors.query_vectors import RememberingEmbedder
from graphs.vectors.question_index import BUILT_WITHOUT_IT
from graphs.vectors.reader import SHIPPED_READER_DIR, EvidenceReader, ReaderUnavailable, get_reader
from graphs.vectors.search_encoder import recorded_search_encoder
from graphs.vectors.vector_index import MatrixVectorIndex, QdrantVectorIndex, VectorIndex


@dataclass
class KnowledgeBase:
    """A published KB build, opened read-only."""

    build_dir: Path
    manifest: Manifest
    store: GraphStore
    vectors: VectorIndex
    _embedder: RememberingEmbedder | None = None
    _matcher: DictionaryMatcher | None = None
    _lexical: LexicalIndex | None = None
    _reader: EvidenceReader | None = None
    reader_warning: str | None = None
    _searcher: RememberingEmbedder | None = None
    search_warning: str | None = None
    _lock: threading.Lock = field(default_factory=threading.Lock)
    _lease: Any = None

    @classmethod
    def open(
        cls, root: Path, *, store: GraphStore | None = None, qdrant_api_key: str | None = None
    ) -> KnowledgeBase:
        """Open ``root/current``; ``store`` overrides the embedded store (e.g. a Neo4j store).

        The build is checked against its integrity record first (sizes, checksums, a vector sample: a
        damaged file is a :class:`KBCorrupt` naming it and the fix) and leased, so a newer publish does not
        prune it while this handle is open.
        """
        build, lease = _leased_current(root)
        try:
            kb = cls._open_build(build, store, qdrant_api_key)
        except BaseException:
            if lease is not None:
                lease.close()
            raise
        kb._lease = lease
        return kb

    @classmethod
    def _open_build(cls, build: Path, store: GraphStore | None, qdrant_api_key: str | None) -> KnowledgeBase:
        manifest = read_manifest(build)
        verify_build(build, manifest)
        try:
            graph = store or EmbeddedGraphStore(build)
        except StoreError as exc:
            raise KBCorrupt(str(exc)) from exc
        backend = manifest.data.get("vector_backend", "matrix")
        vectors: VectorIndex
        prefix = str(manifest.data.get("qdrant_prefix", "evigraph"))
        if backend == "qdrant":
            vectors = QdrantVectorIndex(
                url=str(manifest.data["qdrant_url"]), api_key=qdrant_api_key, prefix=prefix
            )
        elif backend == "qdrant-local":
            vectors = QdrantVectorIndex(path=build / "qdrant", prefix=prefix)
        else:
            if not (build / VECTORS_DIR).is_dir():
                raise KBCorrupt(f"{build} has no vectors. Run `evigraph kb build` to rebuild the KB.")
            vectors = MatrixVectorIndex(build / VECTORS_DIR)
        return cls(build_dir=build, manifest=manifest, store=graph, vectors=vectors)

    @property
    def version(self) -> str:
        return self.manifest.version

    @property
    def embedder(self) -> RememberingEmbedder:
        with self._lock:
            if self._embedder is None:
                backend = str(self.manifest.data.get("embedding_backend", "onnx"))
                self._embedder = RememberingEmbedder(get_embedder(backend))
            return self._embedder

    @property
    def matcher(self) -> DictionaryMatcher:
        with self._lock:
            if self._matcher is None:
                try:
                    self._matcher = DictionaryMatcher.load(self.build_dir / MATCHER_FILE)
                except (OSError, ValueError) as exc:
                    raise KBCorrupt(
                        f"Entity dictionary unreadable ({exc}). Run `evigraph kb build`."
                    ) from exc
            return self._matcher

    @property
    def lexical(self) -> LexicalIndex:
        """BM25 over evidence and document questions (graphs/text/lexical_index.py), loaded on first use."""
        with self._lock:
            if self._lexical is None:
                self._lexical = open_lexical(self.build_dir, self.build_dir / DB_FILE)
            return self._lexical

    @property
    def reader(self) -> EvidenceReader | None:
        """The evidence reader (graphs/vectors/reader.py), loaded on first use; ``None`` when its weights are
        missing or damaged — then ``reader_warning`` says so and how to restore them, and ranking goes on
        without it (the one labelled fallback)."""
        with self._lock:
            if self._reader is None and self.reader_warning is None:
                try:
                    self._reader = get_reader(SHIPPED_READER_DIR)
                except ReaderUnavailable as exc:
                    self.reader_warning = (
                        "the evidence reader is unavailable, so key sentences were chosen by similarity and "
                        f"the verdict by the offline rule: {exc}"
                    )
            return self._reader

    @property
    def searcher(self) -> RememberingEmbedder | None:
        """The search encoder (graphs/vectors/search_encoder.py) that made this build's evidence search
        vectors, loaded on first use; ``None`` when the build has none or the encoder is missing, damaged or
        a different one — then ``search_warning`` says so and evidence is searched with the base vectors."""
        with self._lock:
            if self._searcher is None and self.search_warning is None:
                self._searcher, self.search_warning = _open_searcher(self.manifest.data)
            return self._searcher

    @property
    def warnings(self) -> list[str]:
        """What the reader of answers from this build should know about the build itself: indexes an older
        build lacks (BM25 rebuilt in memory, no question index), each with the command that adds them."""
        out = list(self.lexical.warnings)
        if "questions" not in self.manifest.data.get("counts", {}):
            out.append(BUILT_WITHOUT_IT)
        if self.reader_warning:
            out.append(self.reader_warning)
        if self.searcher is None and self.search_warning:
            out.append(self.search_warning)
        return out

    def embed(self, texts: list[str]) -> np.ndarray:
        return self.embedder.embed(texts)

    def info(self) -> dict[str, Any]:
        return {"version": self.version, "build_dir": str(self.build_dir), **self.manifest.data}

    def close(self) -> None:
        self.store.close()
        self.vectors.close()
        if self._lease is not None:
            self._lease.close()
            self._lease = None


def _open_searcher(manifest: dict[str, Any]) -> tuple[RememberingEmbedder | None, str | None]:
    """The build's search encoder, or why evidence search falls back to the base encoder's vectors."""
    fallback = "evidence was searched with the base encoder's vectors"
    try:
        encoder = recorded_search_encoder(manifest)
    except ReaderUnavailable as exc:
        return None, f"the search encoder is unavailable, so {fallback}: {exc}"
    if encoder is None:
        why = manifest.get("search_embedder_missing") or "it predates the search encoder"
        return None, (
            f"this KB has no search-encoder vectors ({why}), so {fallback}; `evigraph kb build` adds them"
        )
    return RememberingEmbedder(encoder), None


def _leased_current(root: Path) -> tuple[Path, Any]:
    """The published build with a lease held on it; retried when a publish pruned it in between."""
    for _ in range(3):
        build = current_build(root)
        lease = take_lease(build)
        if build.is_dir():
            return build, lease
        if lease is not None:
            lease.close()
    return current_build(root), None


def open_kb(settings: Settings) -> KnowledgeBase:
    """The KB the settings describe: the local build, with its graph in Neo4j when configured."""
    from graphs.neo4j.store import open_store

    store = open_store(settings) if settings.graph_backend == "neo4j" else None
    key = settings.qdrant_api_key.get_secret_value() if settings.qdrant_api_key else None
    return KnowledgeBase.open(settings.kb_root, store=store, qdrant_api_key=key)
