"""Calibrate δ, the cosine threshold of ``ner_link``'s embedding linker, on real data.

HyKGE links a term to its nearest entity when the similarity exceeds δ = 0.7 — for its GTE encoder. Our
encoder (all-MiniLM-L6-v2) and our entity texts (``name (Type): synonyms``,
graphs/building/embed_stage.entity_text) give other similarity levels, so δ is measured, not copied:

* **Entity universe:** every entity of the default KB's knowledge graph (unified KG + Disease Ontology,
  ~31 k), embedded exactly as the builder embeds them.
* **Positives A — held-out KG synonyms:** entities with a synonym that differs from the name (word-set
  Jaccard < 0.5, ≥ 5 characters) and names no other entity. The synonym is removed from the entity's text
  before embedding that entity, so the query is a genuine unseen paraphrase; correct = the top-1 entity is
  the owner.
* **Positives B — MedQuAD foci:** ``focus`` strings and ``focus_synonyms`` that the dictionary does not
  match at all (exactly the terms that reach the embedding linker), gold = entities carrying one of the
  record's ``focus_cuis`` (``UMLS:C…`` id or xref).
* **Negatives:** candidate terms produced by ``ner_link``'s own generator (uncovered 1–4-grams between
  stop words) from MedQuAD questions and answers, with the full dictionary's matches removed. Some are real
  concepts the dictionary lacks, so the false-link rate is an upper bound; the top-scoring ones are printed
  for a spot check.

For each threshold 0.50–0.90 it prints recall (top-1 correct and above δ), wrong links, the negatives'
link rate and precision/recall/F1 at positive:negative mixes 1:1 and 1:4.

Result (seed 13; 400 + 400 positives, 1,500 negatives; "equiv" counts a same-concept node of another
source as right):

| δ | A equiv | A wrong | B equiv | B wrong | negatives linked |
|---|---|---|---|---|---|
| 0.70 | 0.35 | 0.41 | 0.10 | 0.13 | 0.11 |
| 0.75 | 0.30 | 0.30 | 0.09 | 0.05 | 0.06 |
| 0.80 | 0.22 | 0.21 | 0.08 | 0.03 | 0.03 |
| 0.85 | 0.13 | 0.09 | 0.06 | 0.01 | 0.01 |

The "negatives" are not all wrong links, so the printed bands were judged by hand: right in ~25 % of the
0.70–0.75 band, ~27 % (12 of 44) of 0.75–0.80, ~76 % (17.5 of 23) of 0.80–0.85 and ~85 % above. Precision of
the links ``ner_link`` would accept is therefore ~40 % at δ = 0.70, ~50 % at 0.75, ~80 % at 0.80: δ = 0.80
(tools/ner_link.DEFAULT_DELTA). Held-out synonyms show the recall it costs (0.35 → 0.22).

Usage: python -m evals.calibrate_linking [--positives 400] [--negatives 1500] [--seed 13]
"""

from __future__ import annotations

import argparse
import json
import random
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from graphs.building.builder import load_kg
from graphs.building.embed_stage import entity_text
from graphs.building.loaders.base import LoadReport
from graphs.model.schema import Entity
from graphs.model.settings import Settings
from graphs.text.ner import DictionaryMatcher, normalise_term
from graphs.vectors.embedding import get_embedder
from graphs.vectors.embedding_cache import CachedEmbedder, EmbeddingCache
from tools.candidate_terms import candidate_terms
from tools.ranking import STOP_WORDS

REPO = Path(__file__).resolve().parent.parent
KG_SOURCES = [(REPO / "data/kg/unified", "unified"), (REPO / "data/kg/disease_ontology", "disease_ontology")]
MEDQUAD = Settings().shared_data_dir / "corpus" / "medquad_answered.jsonl"
SHIPPED_CACHE = REPO / "data/embeddings/minilm-onnx-int8.npz"
THRESHOLDS = [round(0.5 + 0.05 * i, 2) for i in range(9)]


@dataclass
class Query:
    text: str
    gold: frozenset[str]
    held_out_vector: np.ndarray | None = None  # the gold entity re-embedded without this synonym


_NAME_NOISE = frozenset({"disorder", "nos", "finding", "disease", "syndrome", "condition"})


def name_key(text: str) -> frozenset[str]:
    """Order-free content words of a name: "Cerebellar vermis agenesis" = "Agenesis of cerebellar vermis"."""
    words = normalise_term(text).replace("(", " ").replace(")", " ").replace(",", " ").split()
    return frozenset(w for w in words if w not in STOP_WORDS and w not in _NAME_NOISE)


def equivalent(candidate: Entity, gold: Sequence[Entity], query: str) -> bool:
    """Same concept: the gold entity itself, a shared xref (UMLS/MeSH/...), or the same name up to word order.

    Why: the unified KG keeps one node per source, so "Agenesis of cerebellar vermis" exists as a GARD
    phenotype and as a UMLS disorder; linking to either is right, and a strict id match would call it wrong.
    """
    if any(candidate.id == g.id for g in gold):
        return True
    refs = {candidate.id, *candidate.xrefs}
    if any(refs & {g.id, *g.xrefs} for g in gold):
        return True
    keys = {name_key(n) for n in (candidate.name, *candidate.synonyms)}
    gold_keys = {name_key(n) for g in gold for n in (g.name, *g.synonyms)} | {name_key(query)}
    return bool(keys & gold_keys - {frozenset()})


def jaccard(a: str, b: str) -> float:
    x, y = set(a.split()), set(b.split())
    return len(x & y) / max(len(x | y), 1)


def held_out_synonyms(
    entities: dict[str, Entity], matcher: DictionaryMatcher, count: int, rng: random.Random
) -> list[tuple[str, Entity]]:
    """(synonym, entity with that synonym removed) for unambiguous, non-trivial synonyms."""
    pool: list[tuple[str, Entity]] = []
    for entity in sorted(entities.values(), key=lambda e: e.id):
        name_key = normalise_term(entity.name)
        for synonym in entity.synonyms:
            key = normalise_term(synonym)
            if len(key) < 5 or jaccard(key, name_key) >= 0.5 or matcher.entity_ids(synonym) != [entity.id]:
                continue
            rest = tuple(s for s in entity.synonyms if s != synonym)
            pool.append((synonym, entity.model_copy(update={"synonyms": rest})))
    rng.shuffle(pool)
    chosen: list[tuple[str, Entity]] = []
    seen: set[str] = set()
    for synonym, entity in pool:  # one synonym per entity, so no entity dominates
        if entity.id not in seen:
            seen.add(entity.id)
            chosen.append((synonym, entity))
        if len(chosen) == count:
            break
    return chosen


def medquad_rows() -> list[dict[str, object]]:
    with MEDQUAD.open(encoding="utf-8") as handle:
        return [json.loads(line) for line in handle]


def focus_queries(
    rows: list[dict[str, object]],
    entities: dict[str, Entity],
    matcher: DictionaryMatcher,
    count: int,
    rng: random.Random,
) -> list[Query]:
    """MedQuAD focus strings and synonyms that the dictionary does not match, with their CUI-linked gold."""
    by_cui: dict[str, set[str]] = {}
    for entity in entities.values():
        for ref in (entity.id, *entity.xrefs):
            if ref.startswith("UMLS:"):
                by_cui.setdefault(ref.removeprefix("UMLS:"), set()).add(entity.id)
    queries: dict[str, Query] = {}
    for row in rows:
        gold = set().union(*(by_cui.get(str(c), set()) for c in row.get("focus_cuis") or []))  # type: ignore[attr-defined]
        if not gold:
            continue
        for text in [str(row["focus"]), *(str(s) for s in row.get("focus_synonyms") or [])]:  # type: ignore[attr-defined]
            key = normalise_term(text)
            if key and key not in queries and not matcher.find(text):
                queries[key] = Query(text, frozenset(gold))
    chosen = sorted(queries.values(), key=lambda q: q.text)
    rng.shuffle(chosen)
    return chosen[:count]


def negative_terms(
    rows: list[dict[str, object]], matcher: DictionaryMatcher, count: int, rng: random.Random
) -> list[str]:
    """Terms ``ner_link`` would embed: uncovered n-grams of MedQuAD questions and answer sentences."""
    texts: list[str] = []
    for row in rows[::23]:
        texts.append(str(row["question"]))
        sentences = str(row["answer"]).split(". ")
        texts.append(sentences[rng.randrange(len(sentences))][:400])
    terms: dict[str, str] = {}
    for text in texts:
        covered = [[(m.start, m.end) for m in matcher.find(text)]]
        candidates, _ = candidate_terms([text], covered)
        for candidate in candidates:
            terms.setdefault(normalise_term(candidate.term), candidate.term)
    pool = sorted(terms.values())
    rng.shuffle(pool)
    return pool[:count]


def top1(
    queries: Sequence[Query], vectors: np.ndarray, matrix: np.ndarray, ids: Sequence[str]
) -> list[tuple[str, float]]:
    """Best entity and cosine per query; a held-out query sees its gold entity's re-embedded vector."""
    column = {entity_id: i for i, entity_id in enumerate(ids)}
    out: list[tuple[str, float]] = []
    for start in range(0, len(vectors), 256):
        scores = vectors[start : start + 256] @ matrix.T
        for row, query in enumerate(queries[start : start + 256]):
            if query.held_out_vector is not None:
                gold = next(iter(query.gold))
                scores[row, column[gold]] = float(vectors[start + row] @ query.held_out_vector)
            best = int(scores[row].argmax())
            out.append((ids[best], float(scores[row, best])))
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--positives", type=int, default=400, help="per positive set")
    parser.add_argument("--negatives", type=int, default=1500)
    parser.add_argument("--seed", type=int, default=13)
    parser.add_argument("--judge", type=int, default=12, help="negatives printed per score band")
    parser.add_argument(
        "--cache", type=Path, default=Path(tempfile.gettempdir()) / "evigraph-calibration-cache.npz"
    )
    args = parser.parse_args()
    rng = random.Random(args.seed)

    entities, _ = load_kg(KG_SOURCES, LoadReport())
    matcher = DictionaryMatcher.build((n, e.id) for e in entities.values() for n in (e.name, *e.synonyms))
    inner = get_embedder("onnx")
    embedder = CachedEmbedder(
        inner, [EmbeddingCache(SHIPPED_CACHE, inner.dim)], EmbeddingCache(args.cache, inner.dim)
    )
    ids = sorted(entities)
    matrix = embedder.embed([entity_text(entities[i]) for i in ids])
    embedder.save()
    print(f"entities: {len(ids):,}  (embedding cache hits {embedder.hits:,}, misses {embedder.misses:,})")

    held = held_out_synonyms(entities, matcher, args.positives, rng)
    held_vectors = embedder.embed([entity_text(e) for _, e in held])
    set_a = [Query(s, frozenset([e.id]), v) for (s, e), v in zip(held, held_vectors, strict=True)]
    rows = medquad_rows()
    set_b = focus_queries(rows, entities, matcher, args.positives, rng)
    negatives = negative_terms(rows, matcher, args.negatives, rng)
    embedder.save()
    print(
        f"positives: A (held-out synonyms) {len(set_a)}, B (MedQuAD foci) {len(set_b)}; "
        f"negatives {len(negatives)}"
    )

    scored: dict[str, list[tuple[str, float, bool]]] = {}
    for name, queries in (("A", set_a), ("B", set_b)):
        results = top1(queries, embedder.embed([q.text for q in queries]), matrix, ids)
        scored[name] = [(e, score, e in q.gold) for q, (e, score) in zip(queries, results, strict=True)]
        scored[name + "~"] = [
            (e, score, equivalent(entities[e], [entities[g] for g in q.gold], q.text))
            for q, (e, score) in zip(queries, results, strict=True)
        ]
    negative_queries = [Query(term, frozenset()) for term in negatives]
    neg = top1(negative_queries, embedder.embed(negatives), matrix, ids)
    embedder.save()

    print_table(scored, neg)
    names = {i: entities[i].name for i in ids}
    print("\nNegatives by score band, a random sample each (judge by hand: is the link wrong?):")
    bands = [*THRESHOLDS[1:], 1.01]
    for low, high in zip(THRESHOLDS, bands, strict=True):
        inside = [(term, e, sc) for term, (e, sc) in zip(negatives, neg, strict=True) if low <= sc < high]
        print(f"  [{low:.2f}, {high:.2f}): {len(inside)} negatives")
        for term, e, sc in rng.sample(inside, min(args.judge, len(inside))):
            print(f"    {sc:.3f}  {term!r} -> {names[e]!r}")
    print("\nPositives linked to a non-equivalent entity with a high score:")
    wrong = [
        (sc, q.text, names[e])
        for q, (e, sc, ok) in zip(set_a + set_b, scored["A~"] + scored["B~"], strict=True)
        if not ok
    ]
    for sc, text, name in sorted(wrong, reverse=True)[:15]:
        print(f"    {sc:.3f}  {text!r} -> {name!r}")


def rate(items: list[tuple[str, float, bool]], threshold: float, correct: bool) -> float:
    return sum(s > threshold and ok == correct for _, s, ok in items) / max(len(items), 1)


def print_table(scored: dict[str, list[tuple[str, float, bool]]], neg: list[tuple[str, float]]) -> None:
    """Recall/wrong-link rates per positive set (strict id, and equivalent concept), and mixed P/R/F1."""
    print(
        "| δ | A strict | A equiv | A wrong | B strict | B equiv | B wrong | neg link rate "
        "| P 1:1 | R | F1 1:1 | P 1:4 | F1 1:4 |"
    )
    print("|" + "---|" * 14)
    pooled = scored["A~"] + scored["B~"]
    for t in THRESHOLDS:
        cells: list[float] = []
        for name in ("A", "B"):
            cells += [
                rate(scored[name], t, True),
                rate(scored[name + "~"], t, True),
                rate(scored[name + "~"], t, False),
            ]
        neg_rate = sum(s > t for _, s in neg) / max(len(neg), 1)
        tp, wrong = rate(pooled, t, True), rate(pooled, t, False)
        cells.append(neg_rate)
        for mix in (1.0, 4.0):
            precision = tp / max(tp + wrong + mix * neg_rate, 1e-9)
            cells += (
                [precision] + ([tp] if mix == 1.0 else []) + [2 * precision * tp / max(precision + tp, 1e-9)]
            )
        print(f"| {t:.2f} | " + " | ".join(f"{c:.2f}" for c in cells) + " |")


if __name__ == "__main__":
    main()
