"""Precompute the default KB's embeddings into ``data/embeddings/`` (the shipped embedding cache).

Why: see graphs/vectors/embedding_cache.py — embedding the default corpus on a 2-core machine takes far longer than
the first-consult budget, and the vectors depend only on (model, text). This script computes them with the
same embedder and the same text construction the builder uses, for the *full* default profile (so both
``core`` and ``--full`` builds hit the cache). It is resumable: progress is saved every few thousand texts.

Run from the repository root: ``python data/derive_embeddings.py [--backend onnx]``, with
``--questions`` for the documents' questions (the question index's vectors, a separate part file), and with
``--literature`` for the PubMed passages of the ``literature`` profile (another part file). ``--search``
computes the search encoder's vectors of the evidence instead (graphs/vectors/search_encoder.py; its own
files ``search-onnx-int8.npz`` and, with ``--literature``, ``search-onnx-int8-literature.npz``).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections import Counter
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from graphs.building.builder import (  # noqa: E402 - the repo root must be importable first
    load_documents,
    load_kg,
    make_evidence,
)
from graphs.building.default_kb import (  # noqa: E402
    CORE_EXCLUDED_SOURCES,
    default_sources,
    literature_sources,
)
from graphs.building.embed_stage import entity_text, evidence_text, search_text  # noqa: E402
from graphs.building.linking import adopt_focus_names, link_documents  # noqa: E402
from graphs.building.loaders import LoadReport  # noqa: E402
from graphs.text.ner import DictionaryMatcher  # noqa: E402
from graphs.vectors.embedding import Embedder, get_embedder  # noqa: E402
from graphs.vectors.embedding_cache import EmbeddingCache, text_key  # noqa: E402
from graphs.vectors.question_index import question_items  # noqa: E402
from graphs.vectors.search_encoder import get_search_encoder  # noqa: E402

SLICE = REPO / "tests" / "fixtures" / "slice" / "medquad.jsonl"
CACHE_NAME = {"onnx": "minilm-onnx-int8.npz", "sentence-transformers": "minilm-st-fp32.npz"}
SEARCH_CACHE_NAME = "search-onnx-int8.npz"


def _entity_texts(entities: dict, degree: Counter[str], docs: list, matcher: DictionaryMatcher) -> list[str]:
    """Entity texts as a build over ``docs`` makes them (adopted focus names depend on the corpus)."""
    ents = dict(entities)
    keyword = link_documents(docs, ents, dict(degree), matcher)
    adopt_focus_names(docs, keyword, ents)
    return [entity_text(e) for e in ents.values()]


def kg_with_degrees(kg: list, report: LoadReport) -> tuple[dict, Counter[str]]:
    """The KG's entities and each entity's edge count (how the builder ranks link candidates)."""
    entities, relations = load_kg(kg, report)
    degree: Counter[str] = Counter()
    for r in relations.values():
        degree[r.head] += 1
        degree[r.tail] += 1
    return entities, degree


def questions_to_embed(data_dir: Path) -> list[str]:
    """The question of every default document written as one (graphs/vectors/question_index.py), core first."""
    report = LoadReport()
    _, corpus = default_sources(data_dir)
    docs = load_documents([(corpus, "medquad")], report, None)
    core = [d for d in docs if d.source.split("/")[-1] not in CORE_EXCLUDED_SOURCES]
    rest = [d for d in docs if d.source.split("/")[-1] in CORE_EXCLUDED_SOURCES]
    return [q for _, q in question_items((d.id, d.title) for d in [*core, *rest])]


def literature_to_embed(data_dir: Path, with_entities: bool = True) -> list[str]:
    """The texts a ``literature`` build embeds beyond the main file: its PubMed passages (a chunk's text does
    not depend on its keyword entity), then the entities as that build names them — mostly one document
    entity per passage that links to no KG entity (6.8 k), which a fresh build would otherwise embed."""
    report = LoadReport()
    docs = load_documents(literature_sources(data_dir), report, None)
    if not with_entities:  # the search encoder's texts (graphs/building/embed_stage.py ``search_text``)
        return [search_text(ev, doc.title) for doc in docs for ev in make_evidence(doc, "")]
    passages = [evidence_text(ev, doc.title) for doc in docs for ev in make_evidence(doc, "")]
    kg, corpus = default_sources(data_dir)
    entities, degree = kg_with_degrees(kg, report)
    medquad = load_documents([(corpus, "medquad")], report, None)
    core = [d for d in medquad if d.source.split("/")[-1] not in CORE_EXCLUDED_SOURCES]
    matcher = DictionaryMatcher.build((n, e.id) for e in entities.values() for n in (e.name, *e.synonyms))
    return passages + _entity_texts(entities, degree, [*core, *docs], matcher)


def texts_to_embed(data_dir: Path, with_entities: bool = True, full: bool = True) -> list[str]:
    """Every text a default build embeds, most needed first: the evidence of the test slice's MedQuAD
    rows (so the test suite runs on cached vectors), core evidence, entities (as a core build and as a full
    build names them; left out with ``with_entities=False``), then GARD/GHR evidence (left out with
    ``full=False``)."""
    report = LoadReport()
    kg, corpus = default_sources(data_dir)
    entities, degree = kg_with_degrees(kg, report)
    docs = load_documents([(corpus, "medquad")], report, None)
    matcher = DictionaryMatcher.build((n, e.id) for e in entities.values() for n in (e.name, *e.synonyms))
    core_docs = [d for d in docs if d.source.split("/")[-1] not in CORE_EXCLUDED_SOURCES]
    entity_texts = _entity_texts(entities, degree, core_docs, matcher)
    entity_texts += _entity_texts(entities, degree, docs, matcher)
    keyword = link_documents(docs, dict(entities), dict(degree), matcher)
    slice_rows = map(json.loads, SLICE.read_text(encoding="utf-8").splitlines())
    slice_ids = {f"medquad:{r['id']}" for r in slice_rows}
    first, core, rest = [], [], []
    for doc in docs:
        if doc.id in slice_ids:
            target = first
        elif doc.source.split("/")[-1] in CORE_EXCLUDED_SOURCES:
            target = rest
        else:
            target = core
        text = evidence_text if with_entities else search_text  # the search encoder's (titles as a build)
        target.extend(text(ev, doc.title) for ev in make_evidence(doc, keyword[doc.id]))
    return first + core + (entity_texts if with_entities else []) + (rest if full else [])


def pruned(cache: EmbeddingCache, keep: set[bytes]) -> EmbeddingCache:
    """``cache`` rewritten with only the ``keep`` keys it holds (a part file stays free of stale texts)."""
    kept = [k for k in keep if cache.get(k) is not None]
    if len(kept) == len(cache):
        return cache
    fresh_path = cache.path.with_suffix(".pruned.npz")
    fresh = EmbeddingCache(fresh_path, cache.dim)
    if kept:
        fresh.put(kept, np.stack([cache.get(k) for k in kept]))
        fresh.save()
        fresh_path.replace(cache.path)
    else:
        cache.path.unlink(missing_ok=True)
    return EmbeddingCache(cache.path, cache.dim)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--backend", default="onnx", choices=sorted(CACHE_NAME))
    parser.add_argument("--data", type=Path, default=REPO / "data")
    parser.add_argument("--save-every", type=int, default=2048)
    parser.add_argument(
        "--questions",
        action="store_true",
        help="embed the documents' questions into the '-questions' part instead of the main file",
    )
    parser.add_argument(
        "--literature",
        action="store_true",
        help="embed the literature profile's PubMed passages into the '-literature' part",
    )
    parser.add_argument(
        "--search",
        action="store_true",
        help="the search encoder's evidence vectors (search-onnx-int8.npz, or its -literature part)",
    )
    args = parser.parse_args(argv)
    embedder: Embedder = get_search_encoder() if args.search else get_embedder(args.backend)
    main_name = SEARCH_CACHE_NAME if args.search else CACHE_NAME[args.backend]
    name = main_name
    if args.questions:
        name = name.replace(".npz", "-questions.npz")
        wanted = questions_to_embed(args.data)
    elif args.literature:
        name = name.replace(".npz", "-literature.npz")
        wanted = literature_to_embed(args.data, with_entities=not args.search)
    else:
        # The search vectors ship for the core profile only (the default KB): GARD/GHR's 22.6 k more units
        # would add ~17 MB for the rarely built ``--full`` profile, which embeds them at build time (~4 min).
        wanted = texts_to_embed(args.data, with_entities=not args.search, full=not args.search)
    cache = EmbeddingCache(args.data / "embeddings" / name, embedder.dim)
    texts = list(dict.fromkeys(wanted))
    if name != main_name:  # a part file holds only what the main file lacks
        main_file = EmbeddingCache(args.data / "embeddings" / main_name, embedder.dim)
        texts = [t for t in texts if main_file.get(text_key(embedder.name, t)) is None]
    # Stale vectors go: another model's (the key names the model) or a text no longer built. A part holds
    # what the main file lacks, so after the main file is derived its parts are derived again.
    cache = pruned(cache, {text_key(embedder.name, t) for t in texts})
    todo = [t for t in texts if cache.get(text_key(embedder.name, t)) is None]
    print(f"{len(texts):,} texts, {len(texts) - len(todo):,} cached, {len(todo):,} to embed", flush=True)
    started = time.perf_counter()
    for i in range(0, len(todo), args.save_every):
        chunk = todo[i : i + args.save_every]
        cache.put([text_key(embedder.name, t) for t in chunk], embedder.embed(chunk))
        cache.save()
        done = i + len(chunk)
        rate = done / (time.perf_counter() - started)
        left = (len(todo) - done) / rate / 60
        print(f"{done:,}/{len(todo):,} embedded ({rate:.1f}/s, ~{left:.0f} min left)", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
