"""BioASQ near-miss pools: the snippet pool with every answer-bearing snippet of its factoid/list questions
removed, so the KB knows each question's subject but not the detail asked.

Why: the "answered" model (agent/nodes/answered.py) was calibrated on questions whose answer the KB holds
or whose subject it lacks. Between them sits the case a clinician misreads most easily — passages on the
subject, none naming what was asked ("Which CFTR mutation …?" over pages that never name one;
evals/near_miss.py). Labelled examples of it come from BioASQ itself: take a pool (bioasq-dev for
calibration, bioasq-test held out), drop the gold snippets of its factoid and list questions and every
snippet that names one of their exact answers; what is left for each question is the other questions'
snippets — often on the same gene, drug or disease. Run there, a question is "answered correctly" only when
its direct answer still names a gold exact answer (from the KG, say); any other "answered" is a near-miss.

The derived corpus is written once into the eval cache (``evals/reports/cache/sources``), deterministic in
its inputs, so ``evals.kb_cache`` keys and caches its KB like any other pool.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from evals.datasets.registry import full_kg
from evals.datasets.snippet_pools import read_jsonl
from evals.kb_cache import DEFAULT_CACHE_DIR, KBRecipe, shipped_caches
from evals.metrics.answers import exact_hit
from graphs.model.settings import Settings

NAMED_TYPES = ("factoid", "list")


def named_questions(questions: Path) -> list[dict[str, Any]]:
    """The factoid and list questions of a BioASQ set: the ones whose answer is a name."""
    return [q for q in read_jsonl(questions) if q.get("type") in NAMED_TYPES]


def answer_free_rows(
    corpus: list[dict[str, Any]], questions: list[dict[str, Any]], golden: dict[str, dict[str, Any]]
) -> list[dict[str, Any]]:
    """``corpus`` without the questions' gold snippets and without any snippet naming an exact answer."""
    gold_ids = {s for q in questions for s in q.get("gold_snippet_ids", [])}
    exacts = [golden[q["id"]].get("exact_answer") for q in questions if q["id"] in golden]
    return [
        row
        for row in corpus
        if row["id"] not in gold_ids and not any(exact_hit(row.get("text", ""), e) for e in exacts if e)
    ]


def near_miss_corpus(name: str, corpus: Path, questions: Path, golden: dict[str, dict[str, Any]]) -> Path:
    """The answer-free copy of ``corpus`` in the eval cache (written once; an unchanged input reuses it)."""
    target = DEFAULT_CACHE_DIR / "sources" / f"{name}_corpus.jsonl"
    rows = answer_free_rows(read_jsonl(corpus), named_questions(questions), golden)
    text = "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows)
    if not target.exists() or target.read_text(encoding="utf-8") != text:
        target.parent.mkdir(parents=True, exist_ok=True)
        tmp = target.with_suffix(".tmp")
        tmp.write_text(text, encoding="utf-8")
        tmp.replace(target)
    return target


def near_miss_recipe(
    settings: Settings, name: str, corpus: Path, questions: Path, golden: dict[str, dict[str, Any]]
) -> KBRecipe:
    """The near-miss pool over the full KG, planned like the bioasq-dev/test pools (registry.py)."""
    return KBRecipe(
        name=name,
        kg_sources=full_kg(settings),
        corpus_sources=((near_miss_corpus(name, corpus, questions, golden), "documents"),),
        shipped_caches=shipped_caches(settings.source_data_dir),
    )
