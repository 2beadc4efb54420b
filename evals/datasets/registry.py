"""Retrieval datasets by name, each with the KB it is evaluated on.

| name | questions | KB |
| --- | --- | --- |
| ``bioasq-dev`` | 100 BioASQ 7b–10b questions | 3,000-snippet pool + full unified KG + DO (built, cached) |
| ``bioasq-test`` | 100 others, held out: never used to tune | 3,000-snippet pool + full KG + DO (cached) |
| ``bioasq-ci`` | 15 BioASQ questions | 300-snippet pool + the test-slice KG (seconds to build) |
| ``pubmedqa`` | 100 PubMedQA test questions | their abstracts + 200 distractor abstracts + full KG |
| ``medquad-consumer`` | 72 consumer/clinician questions | the default KB (``Settings().kb_root``) |
| ``bioasq-full`` | the 100 ``bioasq-test`` questions (held out) | all 20,585 BioASQ snippets + full KG + DO |
| ``bioasq-dev-full`` | the 100 ``bioasq-dev`` questions (tunable) | the ``bioasq-full`` KB |
| ``medquad-consumer-ci`` | the 16 of them answerable in the test slice | the test-slice KB (built, cached) |
"""

from __future__ import annotations

import gzip
import json
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from evals.datasets.medquad_consumer import load_medquad_consumer
from evals.datasets.schema import RetrievalDataset
from evals.datasets.snippet_pools import load_bioasq, load_pubmedqa
from evals.kb_cache import DEFAULT_CACHE_DIR, REPO, KBRecipe, shipped_caches
from graphs.building.default_kb import CORE_EXCLUDED_SOURCES
from graphs.model.settings import Settings

DATA = REPO / "evals" / "data"
SLICE = REPO / "tests" / "fixtures" / "slice"
CI_EMBEDDINGS = DATA / "ci_embeddings.npz"
"""Vectors of the CI pool's texts (onnx backend), so the CI KB builds without running the encoder."""


@dataclass(frozen=True)
class DatasetSpec:
    """A named retrieval dataset; ``recipe`` is ``None`` when it runs on an existing KB (the default one).

    ``standin`` builds a KB from the same sources and builder as that existing KB, into the eval cache,
    for machines where it has not been built yet (``python -m evals.run build-kb --dataset …``).
    """

    name: str
    load: Callable[[int | None], RetrievalDataset]
    recipe: Callable[[Settings], KBRecipe] | None
    standin: Callable[[Settings], KBRecipe] | None = None


def held_out(dataset: RetrievalDataset) -> RetrievalDataset:
    """Say in the dataset's description (printed in every report) that it must not be tuned on."""
    return dataset.model_copy(
        update={"description": f"{dataset.description}; held out: never used to tune (tune on bioasq-dev)"}
    )


def full_kg(settings: Settings) -> tuple[tuple[Path, str | None], ...]:
    """The default KB's graph sources: the unified KG and Disease Ontology terms from the project's data/."""
    data = settings.source_data_dir
    return ((data / "kg" / "unified", "unified"), (data / "kg" / "disease_ontology", "disease_ontology"))


def slice_kg() -> tuple[tuple[Path, str | None], ...]:
    return (
        (SLICE / "kg", "unified"),
        (SLICE / "disease_ontology", "disease_ontology"),
        (SLICE / "hetionet", "hetionet"),
    )


def _pool_over_full_kg(name: str, corpus: Path) -> Callable[[Settings], KBRecipe]:
    """A task KB of the full KG plus one snippet or paragraph pool (bioasq-dev, bioasq-test, pubmedqa): the
    same plan for each, so their scores differ only by questions and pool."""

    def recipe(settings: Settings) -> KBRecipe:
        return KBRecipe(
            name=name,
            kg_sources=full_kg(settings),
            corpus_sources=((corpus, "documents"),),
            shipped_caches=shipped_caches(settings.source_data_dir),
        )

    return recipe


_bioasq_dev_recipe = _pool_over_full_kg("bioasq-dev", DATA / "bioasq_dev_corpus.jsonl")
_bioasq_test_recipe = _pool_over_full_kg("bioasq-test", DATA / "bioasq_test_corpus.jsonl")
_pubmedqa_recipe = _pool_over_full_kg("pubmedqa-dev", DATA / "pubmedqa_dev_corpus.jsonl")


FULL_POOL_NAME = "bioasq_full_corpus.jsonl"


def full_pool_corpus(settings: Settings) -> Path:
    """Every BioASQ snippet of shared/data as generic documents, written once into the eval cache.

    Why: the 3,000-snippet pools are easier than the whole pool (BM25 recall@10 0.734 vs 0.664 for the
    same questions, bm25_reference.md); the full pool is the figure users should trust.
    """
    from evals.datasets.make_slices import read_jsonl, snippet_document, write_jsonl

    target = DEFAULT_CACHE_DIR / "sources" / FULL_POOL_NAME
    if not target.exists():
        rows = read_jsonl(settings.shared_data_dir / "corpus" / "bioasq_snippets.jsonl")
        tmp = target.with_suffix(".tmp")
        write_jsonl(tmp, (snippet_document(r) for r in sorted(rows, key=lambda r: r["id"])))
        tmp.replace(target)
    return target


def _bioasq_full_recipe(settings: Settings) -> KBRecipe:
    return KBRecipe(
        name="bioasq-full",
        kg_sources=full_kg(settings),
        corpus_sources=((full_pool_corpus(settings), "documents"),),
        shipped_caches=shipped_caches(settings.source_data_dir),
    )


def _bioasq_ci_recipe(settings: Settings) -> KBRecipe:
    return KBRecipe(
        name="bioasq-ci",
        kg_sources=slice_kg(),
        corpus_sources=((DATA / "bioasq_ci_corpus.jsonl", "documents"),),
        shipped_caches=shipped_caches(settings.source_data_dir, (CI_EMBEDDINGS,)),
    )


def _slice_recipe(settings: Settings) -> KBRecipe:
    """The test KB of tests/conftest.py (same sources), so CI questions run against the KB tests use."""
    return KBRecipe(
        name="slice",
        kg_sources=slice_kg(),
        corpus_sources=((SLICE / "medquad.jsonl", None), (SLICE / "docs.jsonl", None)),
        shipped_caches=shipped_caches(settings.source_data_dir),
    )


def _default_core_recipe(settings: Settings) -> KBRecipe:
    """The default KB's ``core`` profile (graphs/building/default_kb.py: MedQuAD less GARD/GHR, full KG)."""
    source = settings.source_data_dir / "corpus" / "medquad_answered.jsonl.gz"
    target = DEFAULT_CACHE_DIR / "sources" / "medquad_core.jsonl"
    if not target.exists():
        target.parent.mkdir(parents=True, exist_ok=True)
        tmp = target.with_suffix(".tmp")
        with gzip.open(source, "rt", encoding="utf-8") as src, tmp.open("w", encoding="utf-8") as dst:
            for line in src:
                if line.strip() and json.loads(line).get("source") not in CORE_EXCLUDED_SOURCES:
                    dst.write(line)
        tmp.replace(target)
    return KBRecipe(
        name="default-core",
        kg_sources=full_kg(settings),
        corpus_sources=((target, "medquad"),),
        shipped_caches=shipped_caches(settings.source_data_dir),
    )


DATASETS: dict[str, DatasetSpec] = {
    "bioasq-dev": DatasetSpec(
        "bioasq-dev",
        lambda limit: load_bioasq(
            DATA / "bioasq_dev.jsonl", DATA / "bioasq_dev_corpus.jsonl", "bioasq-dev", limit
        ),
        _bioasq_dev_recipe,
    ),
    "bioasq-test": DatasetSpec(
        "bioasq-test",
        lambda limit: held_out(
            load_bioasq(DATA / "bioasq_test.jsonl", DATA / "bioasq_test_corpus.jsonl", "bioasq-test", limit)
        ),
        _bioasq_test_recipe,
    ),
    "bioasq-full": DatasetSpec(
        "bioasq-full",
        lambda limit: held_out(
            load_bioasq(DATA / "bioasq_test.jsonl", full_pool_corpus(Settings()), "bioasq-full", limit)
        ),
        _bioasq_full_recipe,
    ),
    "bioasq-dev-full": DatasetSpec(
        "bioasq-dev-full",
        lambda limit: load_bioasq(
            DATA / "bioasq_dev.jsonl", full_pool_corpus(Settings()), "bioasq-dev-full", limit
        ),
        _bioasq_full_recipe,
    ),
    "bioasq-ci": DatasetSpec(
        "bioasq-ci",
        lambda limit: load_bioasq(
            DATA / "bioasq_ci.jsonl", DATA / "bioasq_ci_corpus.jsonl", "bioasq-ci", limit
        ),
        _bioasq_ci_recipe,
    ),
    "pubmedqa": DatasetSpec(
        "pubmedqa",
        lambda limit: load_pubmedqa(
            DATA / "pubmedqa_dev.jsonl", DATA / "pubmedqa_dev_corpus.jsonl", "pubmedqa", limit
        ),
        _pubmedqa_recipe,
    ),
    "medquad-consumer": DatasetSpec(
        "medquad-consumer",
        lambda limit: load_medquad_consumer("medquad-consumer", limit=limit),
        None,
        _default_core_recipe,
    ),
    "medquad-consumer-ci": DatasetSpec(
        "medquad-consumer-ci",
        lambda limit: load_medquad_consumer("medquad-consumer-ci", ci_only=True, limit=limit),
        _slice_recipe,
    ),
}


def get_dataset(name: str) -> DatasetSpec:
    if name not in DATASETS:
        raise ValueError(f"unknown dataset {name!r}; known: {', '.join(DATASETS)}")
    return DATASETS[name]
