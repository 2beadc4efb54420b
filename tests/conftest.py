"""Shared fixtures: a real knowledge base built from the real-data slice in tests/fixtures/slice.

The slice KB is built once per test session with the real builder, the real embedder (through the shipped
embedding cache, so it takes seconds) and the embedded store. Tests that modify a KB copy it first.
Set ``EVIGRAPH_TEST_KB=/some/dir`` to build it there once and reuse it across sessions while developing
(it is rebuilt when the fixture sources or the schema version change).
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from langgraph.checkpoint.memory import InMemorySaver

from agent.consult import Consultant
from evals.kb_cache import BUILDER_FILES
from graphs.building.builder import BuildConfig, build_kb
from graphs.building.default_kb import shipped_embedding_caches
from graphs.kb import KnowledgeBase
from graphs.model.schema import SCHEMA_VERSION
from graphs.model.settings import Settings

REPO = Path(__file__).resolve().parent.parent
SLICE = REPO / "tests" / "fixtures" / "slice"
SHIPPED_CACHES = tuple(
    shipped_embedding_caches(Settings(source_data_dir=REPO / "data", embedding_backend="onnx"))
)
TEST_EMBEDDING_CACHE = Path(
    os.environ.get(
        "EVIGRAPH_TEST_EMBEDDING_CACHE", Path.home() / ".cache" / "evigraph" / "test-embeddings.npz"
    )
)
"""Vectors of slice texts the shipped cache lacks (PubMed docs, slice-only entity texts): computed once."""


def slice_config(**overrides: object) -> BuildConfig:
    """The build config of the test KB: unified KG slice + DO + Hetionet slice, MedQuAD + PubMed docs."""
    base: dict[str, object] = {
        "kg_sources": [
            (SLICE / "kg", "unified"),
            (SLICE / "disease_ontology", None),
            (SLICE / "hetionet", None),
        ],
        "corpus_sources": [(SLICE / "medquad.jsonl", None), (SLICE / "docs.jsonl", None)],
        "embedding_caches": SHIPPED_CACHES,
        "user_embedding_cache": TEST_EMBEDDING_CACHE,
        "name": "slice",
    }
    base.update(overrides)
    return BuildConfig(**base)  # type: ignore[arg-type]


def _fingerprint() -> str:
    h = hashlib.sha1(str(SCHEMA_VERSION).encode())
    for p in sorted(SLICE.rglob("*")):
        if p.is_file() and "bad" not in p.parts:
            h.update(p.name.encode())
            h.update(p.read_bytes())
    for name in (*BUILDER_FILES, "disk/layout.py", "disk/integrity.py"):  # the last two shape the manifest
        h.update((REPO / "graphs" / name).read_bytes())
    return h.hexdigest()[:12]


@pytest.fixture(scope="session")
def slice_kb_root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Root directory of the session's slice KB (read-only for tests: copy before modifying)."""
    reuse = os.environ.get("EVIGRAPH_TEST_KB")
    root = Path(reuse) / _fingerprint() if reuse else tmp_path_factory.mktemp("slice-kb")
    if not (root / "current").exists():
        build_kb(root, slice_config())
    return root


@pytest.fixture(scope="session")
def slice_kb(slice_kb_root: Path) -> Iterator[KnowledgeBase]:
    kb = KnowledgeBase.open(slice_kb_root)
    yield kb
    kb.close()


@pytest.fixture()
def consultant(slice_kb: KnowledgeBase, slice_kb_root: Path, tmp_path: Path) -> Consultant:
    """An offline consultant on the slice KB, its consults kept in memory (one per test)."""
    settings = Settings(kb_dir=slice_kb_root, data_dir=tmp_path, llm_enabled=False)
    return Consultant(settings, kb=slice_kb, checkpointer=InMemorySaver(), use_llm=False)


@pytest.fixture()
def kb_copy(slice_kb_root: Path, tmp_path: Path) -> Path:
    """A private copy of the slice KB root that a test may modify."""
    target = tmp_path / "kb"
    shutil.copytree(slice_kb_root, target, symlinks=True)
    return target


@contextlib.contextmanager
def read_only(directory: Path) -> Iterator[Path]:
    """Make ``directory`` really read-only for the duration: a read-only bind mount when running as root
    (root ignores permission bits), else permission bits. Either way writes fail with EROFS / EACCES."""
    if os.geteuid() == 0:
        subprocess.run(["mount", "--bind", str(directory), str(directory)], check=True)
        try:
            subprocess.run(["mount", "-o", "remount,ro,bind", str(directory)], check=True)
            yield directory
        finally:
            subprocess.run(["umount", "--lazy", str(directory)], check=True)  # lazy: even if a file is open
        return
    modes = {p: p.stat().st_mode for p in [directory, *directory.rglob("*")]}
    for p in modes:
        p.chmod(0o555 if p.is_dir() else 0o444)
    try:
        yield directory
    finally:
        for p, mode in modes.items():
            p.chmod(mode)


def offline_answers(root: Path, data_dir: Path, *questions: str) -> list[dict[str, Any]]:
    """Offline answers of ``questions`` on the KB at ``root`` (opened and closed here), one consult each."""
    from langgraph.checkpoint.memory import InMemorySaver

    from agent.consult import Consultant

    kb = KnowledgeBase.open(root)
    try:
        settings = Settings(kb_dir=root, data_dir=data_dir, llm_enabled=False)
        consultant = Consultant(settings, kb=kb, checkpointer=InMemorySaver(), use_llm=False)
        return [consultant.ask(q).answer for q in questions]
    finally:
        kb.close()


def jsonl_rows(path: Path) -> Iterator[dict[str, Any]]:
    """The JSON objects of a JSON-lines file, plain or gzipped (the shipped training manifests are)."""
    import gzip
    import json

    opener = gzip.open if path.suffix == ".gz" else open
    with opener(path, "rt", encoding="utf-8") as lines:
        for line in lines:
            if line.strip():
                yield json.loads(line)
