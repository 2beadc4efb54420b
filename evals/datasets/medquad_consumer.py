"""The consumer-style MedQuAD question set (evals/data/medquad_consumer.jsonl), written for EviGraph.

Why a new set: MedQuAD's own questions are generated from templates ("What are the symptoms of X ?") that
repeat the document title, so retrieving the answer for them is trivially easy. These questions are
phrased the way patients and clinicians ask ("my dad was just told he has gout, what can he take for the
pain?"); each one's gold ids were chosen by reading the candidate answers of its focus in every MedQuAD
source, and ``gold_passages`` quotes the sentence that answers where one paragraph does. All foci are in
the default KB's ``core`` profile (MedQuAD without GARD/GHR); a few gold lists also name GARD/GHR pairs,
which count only when the KB holds them. ``ci: true`` marks the questions answerable inside the test
slice (tests/fixtures/slice/medquad.jsonl).
"""

from __future__ import annotations

import json
from pathlib import Path

from evals.datasets.schema import RetrievalDataset, RetrievalQuestion

MEDQUAD_PREFIX = "medquad:"
"""graphs/building/loaders/medquad.py prefixes every QA-pair id with this."""
QUESTIONS = Path(__file__).resolve().parent.parent / "data" / "medquad_consumer.jsonl"


def load_medquad_consumer(
    name: str, ci_only: bool = False, path: Path = QUESTIONS, limit: int | None = None
) -> RetrievalDataset:
    """The question set; ``ci_only`` keeps the questions answerable within the test slice."""
    items: list[RetrievalQuestion] = []
    with path.open(encoding="utf-8") as handle:
        for line in handle:
            if not line.strip():
                continue
            row = json.loads(line)
            if ci_only and not row.get("ci"):
                continue
            items.append(
                RetrievalQuestion(
                    id=row["id"],
                    question=row["question"],
                    gold_documents=tuple(MEDQUAD_PREFIX + g for g in row["gold_ids"]),
                    passage_hints={MEDQUAD_PREFIX + k: v for k, v in row.get("gold_passages", {}).items()},
                    meta={"asker": row.get("asker", "patient")},
                )
            )
    scope = "questions answerable in the test slice" if ci_only else "questions"
    return RetrievalDataset(
        name=name,
        description=f"{len(items)} consumer/clinician-style MedQuAD {scope} with hand-checked gold",
        questions=items[:limit],
        passage_unit="evidence",
    )
