"""Loaders for the snippet-pool retrieval sets: BioASQ (question → gold snippets) and PubMedQA.

Both pools are built as one KB document per snippet/paragraph (``doc:<snippet id>``, see make_slices.py),
so the passage unit is the KB document and the document unit is its PMID.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from evals.datasets.schema import RetrievalDataset, RetrievalQuestion

GENERIC_PREFIX = "doc:"
"""graphs/building/loaders/generic_docs.py prefixes every generic document id with this."""


def read_jsonl(path: Path) -> list[dict[str, Any]]:
    with path.open(encoding="utf-8") as handle:
        return [json.loads(line) for line in handle if line.strip()]


def pmid_groups(corpus: Path) -> dict[str, str]:
    """KB document id → PMID for every snippet/paragraph of a pool corpus."""
    return {GENERIC_PREFIX + row["id"]: str(row["pmid"]) for row in read_jsonl(corpus)}


def load_bioasq(questions: Path, corpus: Path, name: str, limit: int | None = None) -> RetrievalDataset:
    """BioASQ questions whose gold are their snippets; questions without a pooled gold snippet are dropped."""
    groups = pmid_groups(corpus)
    items: list[RetrievalQuestion] = []
    for row in read_jsonl(questions):
        gold = tuple(GENERIC_PREFIX + s for s in row["gold_snippet_ids"] if GENERIC_PREFIX + s in groups)
        if not gold:
            continue
        items.append(
            RetrievalQuestion(
                id=row["id"],
                question=row["question"],
                gold_documents=gold,
                meta={"type": row.get("type", ""), "batch": row.get("batch", "")},
            )
        )
    return RetrievalDataset(
        name=name,
        description=f"BioASQ 7b–10b question → gold snippets, pool of {len(groups):,} snippets",
        questions=items[:limit],
        passage_unit="document",
        group_of=groups,
    )


def load_pubmedqa(questions: Path, corpus: Path, name: str, limit: int | None = None) -> RetrievalDataset:
    """PubMedQA question → every paragraph of its own abstract (a sanity check: it is easy)."""
    groups = pmid_groups(corpus)
    by_pmid: dict[str, list[str]] = {}
    for document_id, pmid in sorted(groups.items()):
        by_pmid.setdefault(pmid, []).append(document_id)
    items = [
        RetrievalQuestion(
            id=row["id"],
            question=row["question"],
            gold_documents=tuple(by_pmid[row["pmid"]]),
            meta={"final_decision": row.get("final_decision", "")},
        )
        for row in read_jsonl(questions)
        if row["pmid"] in by_pmid
    ]
    return RetrievalDataset(
        name=name,
        description=f"PubMedQA PQA-L test question → its abstract's paragraphs, pool of {len(groups):,}",
        questions=items[:limit],
        passage_unit="document",
        group_of=groups,
    )
