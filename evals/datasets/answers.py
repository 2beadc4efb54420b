"""Loaders for answer-level evaluation: MCQ (MedQA-USMLE, MedMCQA, MMLU medical) and long-form QA
(ExpertQA medical, MedicationQA). Read from ``Settings().shared_data_dir/eval``.

Only items with a usable gold are kept: MedicationQA rows whose answer was withheld for copyright
(``answer = null``) are skipped, since there is nothing to score against.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from evals.datasets.schema import LongFormItem, McqItem

MCQ_FILES = {
    "medqa": "medqa_usmle_test.jsonl",
    "medmcqa": "medmcqa_dev.jsonl",
    "mmlu-medical": "mmlu_medical_test.jsonl",
}
LONG_FORM_FILES = {
    "expertqa": "expertqa_medical_lfqa.jsonl",
    "medicationqa": "medicationqa.jsonl",
}


def _rows(path: Path) -> Iterator[dict[str, Any]]:
    with path.open(encoding="utf-8") as handle:
        for line in handle:
            if line.strip():
                yield json.loads(line)


def load_mcq(name: str, eval_dir: Path, limit: int | None = None) -> list[McqItem]:
    """MCQ items of ``name`` (one of :data:`MCQ_FILES`), gold as option letters."""
    if name not in MCQ_FILES:
        raise ValueError(f"unknown MCQ set {name!r}; known: {', '.join(MCQ_FILES)}")
    items: list[McqItem] = []
    for row in _rows(eval_dir / MCQ_FILES[name]):
        options = {str(k): str(v) for k, v in (row.get("options") or {}).items()}
        gold = str(row.get("answer_idx") or "")
        if not options or gold not in options:
            continue
        items.append(
            McqItem(id=str(row["id"]), question=row["question"], options=options, gold=(gold,), source=name)
        )
        if limit is not None and len(items) >= limit:
            break
    return items


def load_long_form(name: str, eval_dir: Path, limit: int | None = None) -> list[LongFormItem]:
    """Long-form items of ``name`` (one of :data:`LONG_FORM_FILES`) that have a reference answer."""
    if name not in LONG_FORM_FILES:
        raise ValueError(f"unknown long-form set {name!r}; known: {', '.join(LONG_FORM_FILES)}")
    items: list[LongFormItem] = []
    for row in _rows(eval_dir / LONG_FORM_FILES[name]):
        reference = row.get("answer")
        if not isinstance(reference, str) or not reference.strip():
            continue
        meta = {k: row[k] for k in ("split", "question_type", "focus_drug", "specific_field") if k in row}
        items.append(
            LongFormItem(
                id=str(row["id"]), question=row["question"], reference=reference, source=name, meta=meta
            )
        )
        if limit is not None and len(items) >= limit:
            break
    return items
