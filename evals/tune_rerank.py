"""Score a passage reranker on held-back BioASQ training questions, before it is exported or wired in.

  python -m evals.tune_rerank --candidates HELD.json --model DIR [--model DIR ...]

Why: training a reranker (evals/rerank_data.py, evals/train_reader.py) takes half an hour; whether it
reorders the fused top 50 better should be known from its own fp32 weights in a minute, on questions it
has not seen, before the dev-set grid of the product (evals/tune_reader.py) decides anything.

How: ``HELD.json`` holds the fused ranking (top 50 and their relevance) of every question of the reader's
question-level dev split, captured on the bioasq-full KB by ``evals.rerank_data --candidates``. Each model
reads the top ``K`` passages; relevance' = (1 − w)·relevance + w·p for them and (1 − w)·relevance below the
cut, as tools/reader_rerank.py does. ``DIR`` is a shipped-style model directory (its ``reader.json``
manifest read by graphs/vectors/reader.py) or a saved torch model (the ``train`` extra). Metric:
evals/learned_fusion.py's recall@10 over distinct gold snippets (denominator min(10, gold)) and success@1.
"""

from __future__ import annotations

import argparse
import json
import os
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from evals.learned_fusion import metrics as fused_metrics
from evals.reader_data import _rows
from graphs.model.settings import Settings

KS = (10, 20, 30, 50)
WEIGHTS = (0.0, 0.2, 0.3, 0.5, 0.7, 1.0)
Scorer = Callable[[str, Sequence[str]], np.ndarray]


def scorer(model: Path) -> Scorer:
    """Probabilities of 'answers/relevant' for (question, passages) from a shipped or a torch model."""
    if not (model / "config.json").exists():  # no torch model: a shipped-style directory (reader.json)
        from graphs.vectors.reader import EvidenceReader

        reader = EvidenceReader(model)
        return lambda q, ps: np.asarray(reader.probabilities(q, list(ps)), dtype=float)
    import torch
    from transformers import AutoModelForSequenceClassification, AutoTokenizer

    from evals.train_reader import _score_torch

    torch.set_num_threads(2)
    tokenizer = AutoTokenizer.from_pretrained(model)
    net = AutoModelForSequenceClassification.from_pretrained(model)

    def score(question: str, passages: Sequence[str]) -> np.ndarray:
        logits = _score_torch(net, tokenizer, [{"question": question, "passage": p} for p in passages])
        return 1.0 / (1.0 + np.exp(-logits.astype(float)))

    return score


def metrics(rows: list[dict[str, Any]], scores: list[np.ndarray]) -> tuple[float, float]:
    """learned_fusion's recall@10 and success@1, on the captured rankings."""
    data = [(None, None, {"docs": row["ranked"], "gold": set(row["gold"])}) for row in rows]
    return fused_metrics(data, scores)  # type: ignore[arg-type]


def grid(rows: list[dict[str, Any]], probs: list[np.ndarray]) -> list[tuple[int, float, float, float]]:
    out = []
    for k in KS:
        for w in WEIGHTS:
            scores = []
            for row, p in zip(rows, probs, strict=True):
                rel = np.array(row["relevance"])
                read = np.zeros_like(rel)
                read[:k] = p[:k]
                scores.append((1 - w) * rel + w * read)
            out.append((k, w, *metrics(rows, scores)))
    return out


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--candidates", type=Path, required=True)
    parser.add_argument("--model", type=Path, action="append", required=True)
    args = parser.parse_args(argv)
    rows = json.loads(args.candidates.read_text(encoding="utf-8"))
    text = {
        r["id"]: r["text"] for r in _rows(Settings().shared_data_dir / "corpus" / "bioasq_snippets.jsonl")
    }
    for model in args.model:
        score = scorer(model)
        probs = [score(row["question"], [text[s] for s in row["ranked"]]) for row in rows]
        print(f"## {model} ({len(rows)} questions; load {os.getloadavg()[0]:.1f})")
        for k, w, recall, first in grid(rows, probs):
            if w == 0.0 and k != KS[0]:
                continue
            print(f"K {k:2d} w {w:.1f}: recall@10 {recall:.3f} success@1 {first:.3f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
