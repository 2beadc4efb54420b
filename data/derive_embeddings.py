"""Precompute the default KB's embeddings into ``data/embeddings/`` (the shipped embedding cache).

Why: see graphs/vectors/embedding_cache.py — embedding the default corpus on a 2-core machine takes far longer than
the first-consult budget, and the vectors depend only on (model, text). This script computes them with the
same embedder and the same text construction the builder uses, for the *full* default profile (so both
``core`` and ``--full`` builds hit the cache). It is resumable: progress is saved every few thousand texts.

Run from the repository root: ``python data/derive_embeddings.py [--backend onnx]``, and with
``--questions`` for the documents' questions (the question index's vectors, a separate part file).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections import Counter
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from graphs.building.builder import (  # noqa: E402 - the repo root must be importable first
    load_documents,
    load_kg,
    make_evidence,
)
from graphs.building.embed_stage import entity_text, evidence_text  # noqa: E402
from graphs.building.linking import adopt_focus_names, link_documents  # noqa: E402
from graphs.building.default_kb import CORE_EXCLUDED_SOURCES, default_sources  # noqa: E402
from graphs.vectors.embedding import get_embedder  # noqa: E402
from graphs.vectors.embedding_cache import EmbeddingCache, text_key  # noqa: E402
from graphs.building.loaders import LoadReport  # noqa: E402
from graphs.text.ner import DictionaryMatcher  # noqa: E402
from graphs.vectors.question_index import question_items  # noqa: E402

SLICE = REPO / "tests" / "fixtures" / "slice" / "medquad.jsonl"
CACHE_NAME = {"onnx": "minilm-onnx-int8.npz", "sentence-transformers": "minilm-st-fp32.npz"}


def _entity_texts(entities: dict, degree: Counter[str], docs: list, matcher: DictionaryMatcher) -> list[str]:
    """Entity texts as a build over ``docs`` makes them (adopted focus names depend on the corpus)."""
    ents = dict(entities)
    keyword = link_documents(docs, ents, dict(degree), matcher)
    adopt_focus_names(docs, keyword, ents)
    return [entity_text(e) for e in ents.values()]


def questions_to_embed(data_dir: Path) -> list[str]:
    """The question of every default document written as one (graphs/vectors/question_index.py), core first."""
    report = LoadReport()
    _, corpus = default_sources(data_dir)
    docs = load_documents([(corpus, "medquad")], report, None)
    core = [d for d in docs if d.source.split("/")[-1] not in CORE_EXCLUDED_SOURCES]
    rest = [d for d in docs if d.source.split("/")[-1] in CORE_EXCLUDED_SOURCES]
    return [q for _, q in question_items((d.id, d.title) for d in [*core, *rest])]


def texts_to_embed(data_dir: Path) -> list[str]:
    """Every text a default build embeds, most needed first: the evidence of the test slice's MedQuAD
    rows (so the test suite runs on cached vectors), core evidence, entities (as a core build and as a full
    build names them), then GARD/GHR evidence."""
    report = LoadReport()
    kg, corpus = default_sources(data_dir)
    entities, relations = load_kg(kg, report)
    degree: Counter[str] = Counter()
    for r in relations.values():
        degree[r.head] += 1
        degree[r.tail] += 1
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
        target.extend(evidence_text(ev, doc.title) for ev in make_evidence(doc, keyword[doc.id]))
    return first + core + entity_texts + rest


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
    args = parser.parse_args(argv)
    embedder = get_embedder(args.backend)
    name = CACHE_NAME[args.backend]
    if args.questions:
        name = name.replace(".npz", "-questions.npz")
    cache = EmbeddingCache(args.data / "embeddings" / name, embedder.dim)
    wanted = questions_to_embed(args.data) if args.questions else texts_to_embed(args.data)
    texts = list(dict.fromkeys(wanted))
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
