"""Task-specific knowledge bases for evaluation, built once into a cache and reused.

Why a cache keyed by a hash of the inputs: a BioASQ or PubMedQA pool needs its own KB (the default KB
holds MedQuAD), and building one embeds every passage — minutes on a laptop. The key covers the source
files' bytes, the builder's code and the embedding backend, so a changed slice or builder rebuilds and an
unchanged one is opened in milliseconds. Vectors of texts embedded once are kept in a per-cache embedding
file (``graphs.vectors.embedding_cache``), so even a rebuild after a code change only re-embeds what changed.
"""

from __future__ import annotations

import hashlib
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from graphs.building.builder import BuildConfig, Progress, build_kb
from graphs.disk.layout import CURRENT
from graphs.kb import KnowledgeBase
from graphs.model.schema import SCHEMA_VERSION

REPO = Path(__file__).resolve().parent.parent
DEFAULT_CACHE_DIR = REPO / "evals" / "reports" / "cache"
USER_CACHE_NAME = "embeddings.npz"
BUILDER_FILES = (
    "building/builder.py",
    "building/chunking.py",
    "building/embed_stage.py",
    "building/linking.py",
    "building/hypergraph.py",
    "model/labels.py",
    "text/ner.py",
    "text/term_variants.py",
    "disk/tables.py",
    "stores/adjacency.py",
    "model/schema.py",
    "stores/embedded.py",
    "vectors/question_index.py",
    "vectors/embedding_cache.py",
    "text/lexical_index.py",
    *sorted(f"building/loaders/{p.name}" for p in (REPO / "graphs" / "building" / "loaders").glob("*.py")),
    "vectors/search_encoder.py",
    "../data/retriever/retriever.json",
)
"""graphs/ files whose code shapes a build (and the search encoder's manifest, which pins the weights its
vectors come from): a change to any of them gives cached KBs a new key."""

Sources = tuple[tuple[Path, str | None], ...]


@dataclass(frozen=True)
class KBRecipe:
    """What a task KB is built from."""

    name: str
    kg_sources: Sources
    corpus_sources: Sources
    shipped_caches: tuple[Path, ...] = field(default=())

    def files(self) -> list[Path]:
        paths: list[Path] = []
        for source, _ in (*self.kg_sources, *self.corpus_sources):
            paths.extend(sorted(p for p in source.rglob("*") if p.is_file()) if source.is_dir() else [source])
        return paths


def recipe_key(recipe: KBRecipe, embedding_backend: str) -> str:
    """12 hex chars over source bytes, builder code, schema version and backend."""
    digest = hashlib.sha1(f"{SCHEMA_VERSION}|{embedding_backend}|{recipe.name}".encode())
    for path in recipe.files():
        digest.update(path.name.encode())
        digest.update(hashlib.sha1(path.read_bytes()).digest())
    for name in BUILDER_FILES:
        digest.update((REPO / "graphs" / name).read_bytes())
    return digest.hexdigest()[:12]


@dataclass(frozen=True)
class TaskKB:
    """An opened task KB and how it was obtained."""

    kb: KnowledgeBase
    root: Path
    built: bool
    seconds: float


def open_task_kb(
    recipe: KBRecipe,
    cache_dir: Path = DEFAULT_CACHE_DIR,
    embedding_backend: str = "onnx",
    user_embedding_cache: Path | None = None,
    progress: Progress | None = None,
) -> TaskKB:
    """Open the cached KB for ``recipe``, building it first when the cache has none for these inputs."""
    started = time.perf_counter()
    root = cache_dir / f"{recipe.name}-{recipe_key(recipe, embedding_backend)}"
    built = False
    if not (root / CURRENT).exists():
        config = BuildConfig(
            kg_sources=list(recipe.kg_sources),
            corpus_sources=list(recipe.corpus_sources),
            embedding_backend=embedding_backend,
            embedding_caches=[p for p in recipe.shipped_caches if p.exists()],
            user_embedding_cache=user_embedding_cache or cache_dir / USER_CACHE_NAME,
            name=recipe.name,
            extra={"eval_recipe": recipe.name},
        )
        if progress is None:
            build_kb(root, config)
        else:
            build_kb(root, config, progress)
        built = True
    return TaskKB(KnowledgeBase.open(root), root, built, round(time.perf_counter() - started, 2))


def shipped_caches(data_dir: Path, extra: Sequence[Path] = ()) -> tuple[Path, ...]:
    """The project's precomputed embedding caches (data/embeddings/*.npz) plus ``extra`` files."""
    return (*sorted((data_dir / "embeddings").glob("*.npz")), *extra)
