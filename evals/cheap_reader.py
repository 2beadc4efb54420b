"""The cheap alternative to the evidence reader (issue 18): a gradient-boosted model over features EviGraph
already computes, trained and scored on exactly the reader's pairs, so the two can be compared.

    python -m evals.cheap_reader [--pairs /tmp/evigraph-reader/pairs.jsonl] [--out <report.md>]

Why measure it: a cross-encoder costs ~100× a dot product per passage; if boosted trees over cosine, BM25
and overlap features separated answering from non-answering text as well, the product should ship those.
Features per (question, text) pair, none of which needs the reader:

* ``cosine`` — the shipped MiniLM embedder's cosine (what the dense index ranks by);
* ``bm25`` — BM25 of the question over the text, with IDF over every text of the pairs (the KB's BM25,
  graphs/text/lexical_index.py, with its tokenizer and constants);
* ``overlap`` and ``idf_overlap`` — the share of the question's tokens the text holds, plain and
  IDF-weighted (the share of the question's information the text mentions);
* ``words`` and ``question_words`` — lengths (long passages hold more matches by chance).

Model: scikit-learn ``HistGradientBoostingClassifier`` (seeded; early stopping on a 10 % slice of the
training pairs), trained on the pairs' ``train`` split and scored on their question-level ``dev`` split —
the same split the reader was early-stopped and checked on (evals/reader_data.py ``dev_split``); no
evaluation or calibration question is in either (data/reader/CARD.md). The reader's dev AUCs are computed
here too, with the shipped int8 file, so both columns come from one run.
"""

from __future__ import annotations

import argparse
import json
import os
import time
from pathlib import Path
from typing import Any

import numpy as np

from evals.train_reader import auc
from graphs.text.lexical_index import build as build_lexical
from graphs.text.lexical_index import query_tokens, tokenize

REPO = Path(__file__).resolve().parent.parent
FEATURES = ("cosine", "bm25", "overlap", "idf_overlap", "words", "question_words")


def load_pairs(path: Path) -> list[dict[str, Any]]:
    if not path.exists():
        raise SystemExit(
            f"{path} not found: write the pairs first with `python -m evals.reader_data --out {path}`"
        )
    return [json.loads(line) for line in path.open(encoding="utf-8")]


def features(pairs: list[dict[str, Any]]) -> np.ndarray:
    """The feature matrix (rows = pairs, columns = FEATURES)."""
    from graphs.vectors.embedding import get_embedder

    texts = list(dict.fromkeys(p["passage"] for p in pairs))
    questions = list(dict.fromkeys(p["question"] for p in pairs))
    text_row = {t: i for i, t in enumerate(texts)}
    question_row = {q: i for i, q in enumerate(questions)}
    embedder = get_embedder()
    text_vecs = embedder.embed(texts)
    question_vecs = embedder.embed(questions)
    lexical = build_lexical(((str(i), str(i), t) for i, t in enumerate(texts)), {})
    field = lexical.evidence
    bm25_of: dict[str, np.ndarray] = {q: field.scores(query_tokens(q)) for q in questions}
    text_tokens = [set(tokenize(t)) for t in texts]
    rows = []
    for p in pairs:
        t, q = text_row[p["passage"]], question_row[p["question"]]
        tokens = query_tokens(p["question"])
        idfs = np.array([field.idf(tok) for tok in tokens]) if tokens else np.zeros(0)
        held = np.array([tok in text_tokens[t] for tok in tokens], dtype=bool)
        rows.append(
            [
                float(text_vecs[t] @ question_vecs[q]),
                float(bm25_of[p["question"]][t]),
                float(held.mean()) if tokens else 0.0,
                float(idfs[held].sum() / idfs.sum()) if tokens and idfs.sum() > 0 else 0.0,
                len(p["passage"].split()),
                len(p["question"].split()),
            ]
        )
    return np.asarray(rows, dtype=np.float64)


def per_source(pairs: list[dict[str, Any]], scores: np.ndarray) -> dict[str, float]:
    labels = np.asarray([p["label"] for p in pairs])
    result = {"all": auc(labels, scores)}
    for source in sorted({p["source"] for p in pairs}):
        mask = np.asarray([p["source"] == source for p in pairs])
        result[source] = auc(labels[mask], scores[mask])
    return result


def reader_logits(dev: list[dict[str, Any]]) -> tuple[np.ndarray, float]:
    """The shipped reader's logits on the dev pairs, and its seconds per pair."""
    from graphs.vectors.reader import SHIPPED_READER_DIR, get_reader

    reader = get_reader(SHIPPED_READER_DIR)
    started = time.perf_counter()
    out = np.zeros(len(dev), dtype=np.float32)
    by_question: dict[str, list[int]] = {}
    for i, p in enumerate(dev):
        by_question.setdefault(p["question"], []).append(i)
    for question, rows in by_question.items():
        out[rows] = reader.logits(question, [dev[i]["passage"] for i in rows])
    return out, (time.perf_counter() - started) / max(len(dev), 1)


def main(argv: list[str] | None = None) -> int:
    from sklearn.ensemble import HistGradientBoostingClassifier

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pairs", type=Path, default=Path("/tmp/evigraph-reader/pairs.jsonl"))
    parser.add_argument("--out", type=Path, default=REPO / "evals" / "reports" / "reader_vs_gbm.md")
    args = parser.parse_args(argv)
    started = time.perf_counter()
    pairs = load_pairs(args.pairs)
    train = [p for p in pairs if p["split"] == "train"]
    dev = [p for p in pairs if p["split"] == "dev"]
    t0 = time.perf_counter()
    x_train, x_dev = features(train), features(dev)
    feature_s = (time.perf_counter() - t0) / len(pairs)
    model = HistGradientBoostingClassifier(
        max_iter=400, learning_rate=0.05, early_stopping=True, validation_fraction=0.1, random_state=13
    )
    model.fit(x_train, np.asarray([p["label"] for p in train]))
    gbm = model.predict_proba(x_dev)[:, 1]
    logits, reader_s = reader_logits(dev)
    columns = {
        "cosine alone": per_source(dev, x_dev[:, 0]),
        "BM25 alone": per_source(dev, x_dev[:, 1]),
        "GBM over the six features": per_source(dev, gbm),
        "evidence reader (shipped int8)": per_source(dev, logits),
    }
    sources = list(columns["evidence reader (shipped int8)"])
    counts = {s: sum(1 for p in dev if s in ("all", p["source"])) for s in sources}
    load = ", ".join(f"{x:.2f}" for x in os.getloadavg())
    lines = [
        "# The evidence reader against a cheap alternative (issue 18)",
        "",
        f"Command: `python -m evals.cheap_reader` ({time.perf_counter() - started:.0f} s; "
        f"load average {load}). "
        "ROC AUC on the question-level dev split of the reader's own training pairs (evals/reader_data.py; "
        "no evaluation or calibration question is in it); the GBM is trained on the train split "
        f"({len(train):,} pairs, {model.n_iter_} boosting rounds after early stopping) with the features "
        f"{', '.join(FEATURES)} (evals/cheap_reader.py says why each).",
        "",
        "| scorer | " + " | ".join(f"{s} (n {counts[s]:,})" for s in sources) + " |",
        "| --- | " + " | ".join("---" for _ in sources) + " |",
    ]
    for name, result in columns.items():
        lines.append(f"| {name} | " + " | ".join(f"{result[s]:.3f}" for s in sources) + " |")
    lines += [
        "",
        f"Cost per pair: features {1000 * feature_s:.2f} ms (embedding both sides, batched; in a consult the "
        f"passage vectors are precomputed and the cosine is free), reader {1000 * reader_s:.2f} ms "
        "(batched per question, 2 threads).",
        "",
    ]
    args.out.write_text("\n".join(lines) + "\n", encoding="utf-8")
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
