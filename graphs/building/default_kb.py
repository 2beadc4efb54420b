"""The default knowledge base: what it is built from, and building it on first use.

The project ships its sources in ``data/`` (MedQuAD answered pairs, the unified KG, Disease Ontology terms;
see data/README.md for licenses). ``evigraph ask`` builds the default KB when none exists, so a fresh
install answers its first question with no extra step.

Subset choice: the ``core`` profile keeps every MedQuAD source except the two rare-disease collections
(GARD and Genetics Home Reference, 10.8 k of the 16.4 k answers); it covers the common conditions
clinicians ask about (NIDDK, NHLBI, NINDS, CancerGov, MedlinePlus, NIH SeniorHealth, CDC) and builds within
the first-consult time budget on a 2-core laptop. ``full`` adds GARD and GHR (``evigraph kb build --full``).
``literature`` is ``core`` plus research literature: 20.6 k BioASQ snippets and 3.4 k PubMedQA paragraphs of
PubMed abstracts (``evigraph kb build --profile literature``), cited as "PubMed abstract (research
literature)" with PMID links, for research questions (a drug's target, a trial's result) that consumer-health
pages never answer. It is a profile of its own, not the default, because its answered-threshold was calibrated
on the core KB and on BioASQ pools separately (evals/reports/answered_calibration.md).
The KG is always complete: it is cheap to load and the reasoning chains need all of it.
"""

from __future__ import annotations

import gzip
import json
from pathlib import Path

from graphs.building.builder import BuildConfig, BuildResult, Progress, TopicDescriber, build_kb
from graphs.building.loaders import LoadError
from graphs.disk.layout import scratch_dir
from graphs.model.settings import Settings

CORE_EXCLUDED_SOURCES = frozenset({"GARD", "GHR"})
PROFILES = ("core", "full", "literature")
LITERATURE_FILES = ("corpus/bioasq_snippets.jsonl.gz", "corpus/pubmedqa_contexts.jsonl.gz")


Sources = list[tuple[Path, str | None]]


def default_sources(data_dir: Path) -> tuple[Sources, Path]:
    """(KG sources, MedQuAD file) inside the shipped ``data/`` folder; a clear error when it is missing."""
    kg: Sources = [
        (data_dir / "kg" / "unified", "unified"),
        (data_dir / "kg" / "disease_ontology", "disease_ontology"),
    ]
    corpus = data_dir / "corpus" / "medquad_answered.jsonl.gz"
    missing = [p for p, _ in kg if not p.exists()] + ([corpus] if not corpus.exists() else [])
    if missing:
        raise LoadError(
            f"The default KB's source data is missing ({', '.join(map(str, missing))}). Point "
            "EVIGRAPH_SOURCE_DATA_DIR at the project's data/ folder, or reinstall EviGraph from a full "
            "checkout."
        )
    return kg, corpus


def literature_sources(data_dir: Path) -> Sources:
    """The research-literature passages of the ``literature`` profile (shipped in data/corpus/)."""
    paths = [data_dir / name for name in LITERATURE_FILES]
    missing = [str(p) for p in paths if not p.exists()]
    if missing:
        raise LoadError(
            f"The literature profile's source data is missing ({', '.join(missing)}). Reinstall EviGraph "
            "from a full checkout, or build the core profile."
        )
    return [(p, "pubmed_passages") for p in paths]


def _core_subset(corpus: Path, out_dir: Path) -> Path:
    """Write the core profile's MedQuAD rows to a temp file (the loader stays format-only)."""
    target = out_dir / "medquad_core.jsonl"
    with gzip.open(corpus, "rt", encoding="utf-8") as src, target.open("w", encoding="utf-8") as dst:
        for line in src:
            try:
                source = json.loads(line).get("source")
            except json.JSONDecodeError:
                source = None  # let the loader report the malformed line with its number
            if source not in CORE_EXCLUDED_SOURCES:
                dst.write(line)
    return target


def build_default_kb(
    settings: Settings,
    profile: str = "core",
    progress: Progress | None = None,
    describe_topic: TopicDescriber | None = None,
) -> BuildResult:
    """Build the default KB from the shipped data into ``settings.kb_root``."""
    if profile not in PROFILES:
        raise ValueError(f"Unknown profile '{profile}'. Choose one of: {', '.join(PROFILES)}.")
    kg, corpus = default_sources(settings.source_data_dir)
    literature = literature_sources(settings.source_data_dir) if profile == "literature" else []
    with scratch_dir(settings.kb_root) as tmp:
        medquad = corpus if profile == "full" else _core_subset(corpus, Path(tmp))
        config = BuildConfig(
            kg_sources=kg,
            corpus_sources=[(medquad, "medquad"), *literature],
            embedding_backend=settings.embedding_backend,
            vector_backend="qdrant" if settings.qdrant_url else "matrix",
            qdrant_url=settings.qdrant_url,
            qdrant_api_key=settings.qdrant_api_key.get_secret_value() if settings.qdrant_api_key else None,
            name=f"default-{profile}",
            describe_topic=describe_topic,
            embedding_caches=shipped_embedding_caches(settings, literature=profile == "literature"),
            user_embedding_cache=settings.data_dir / "embedding-cache.npz",
            extra={"profile": profile, "source_data": str(settings.source_data_dir)},
        )
        if progress is None:
            return build_kb(settings.kb_root, config)
        return build_kb(settings.kb_root, config, progress)


def shipped_embedding_caches(settings: Settings, literature: bool = False) -> list[Path]:
    """The precomputed vectors shipped in data/embeddings/ for the configured backend: the main file
    (``minilm-onnx-int8.npz``) and its parts, kept apart so adding texts does not rewrite the 56 MB file
    (``-questions``: the document questions; ``-literature``: the PubMed passages, read only by the
    literature profile). The search encoder's evidence vectors (``search-onnx-int8``, graphs/vectors/
    search_encoder.py) are onnx whatever the backend, so their files are listed for every backend."""
    stem = {"onnx": "minilm-onnx-int8", "sentence-transformers": "minilm-st-fp32"}[settings.embedding_backend]
    folder = settings.source_data_dir / "embeddings"
    out: list[Path] = []
    for name in (stem, "search-onnx-int8"):
        parts = sorted(
            p for p in folder.glob(f"{name}-*.npz") if literature or not p.stem.endswith("-literature")
        )
        out += [folder / f"{name}.npz", *parts]
    return out
