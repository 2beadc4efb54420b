"""Training pairs for a passage reranker: BioASQ gold snippets against the fused ranking's own near misses.

  python -m evals.rerank_data --pairs READER_PAIRS --out RERANK_PAIRS [--candidates CANDIDATES.json]

Why: the evidence reader (data/reader/CARD.md) learned "does this passage answer the question" from BM25-mined
negatives, and as a reranker of the fused top 50 it adds little (evals/reports/reader_dev.md). What keeps
bioasq-full recall@10 at 0.78 while recall@50 is 0.93 are the snippets *the fused ranking* puts in its top
10: on bioasq-dev-full 521 of the top-10 slots hold non-gold snippets of other documents. A cross-encoder
trained on exactly those confusers is the DS@GT recipe (BioASQ 2025, arXiv 2507.05577) the issue names.

How: the agent's offline retrieval round runs on the ``bioasq-full`` KB (evals/learned_fusion.py ``capture``)
for every BioASQ training question of ``READER_PAIRS`` (``python -m evals.reader_data --out READER_PAIRS``:
its split and exclusions are data/reader/CARD.md's, checked by tests/test_reader_data.py). A question's
positives are its gold snippets (up to ``POSITIVES``); its negatives are up to ``PER_QUESTION`` candidates of
the fused ranks ``FROM_RANK``–``TO_RANK`` that ``usable_negatives`` allows (never a gold snippet or gold
document of the question, a positive's text, or any evaluation question's gold snippet or document). The
pairs keep the reader's train/dev side of their question; the reader's MedQuAD and PubMedQA pairs are written
after them unchanged, for ``evals/train_reader.py --mix`` to replay. ``--candidates`` also writes the
captured rankings of the held-back questions (the reader's dev split) for evals/tune_rerank.py.
"""

from __future__ import annotations

import argparse
import gzip
import json
import random
from pathlib import Path
from typing import Any

from evals.learned_fusion import capture
from evals.mine_negatives import usable_negatives
from evals.reader_data import _pair, _rows, _training_questions, exclusions, write_pairs
from graphs.model.settings import Settings

SEED = 17
FROM_RANK = 0
"""Unlike the encoder's mining (ranks 3–40), the very top is kept: the reranker's job is to tell the fused
top 10 apart, and a gold document's own snippets are already excluded."""
TO_RANK = 30
PER_QUESTION = 8
POSITIVES = 6


def rerank_pairs(
    reader_pairs: list[dict[str, Any]], settings: Settings
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """(pairs, held-back captured rankings): see the module docstring."""
    side = {p["qid"]: p["split"] for p in reader_pairs if p["source"] == "bioasq"}
    excluded = exclusions(settings)
    snippets = list(_rows(settings.shared_data_dir / "corpus" / "bioasq_snippets.jsonl"))
    row_of = {row["id"]: i for i, row in enumerate(snippets)}
    questions = [
        (row, gold_ids, gold_pmids)
        for row, gold_ids, gold_pmids in _training_questions(settings, excluded)
        if row["id"] in side and gold_ids & row_of.keys()
    ]
    captured = capture(
        [{"question": row["question"], "gold_snippet_ids": sorted(gold)} for row, gold, _ in questions]
    )
    rng = random.Random(SEED)
    pairs: list[dict[str, Any]] = []
    held: list[dict[str, Any]] = []
    for (row, gold_ids, gold_pmids), seen in zip(questions, captured, strict=True):
        order = sorted(range(len(seen["docs"])), key=lambda i: -seen["rel"][i])
        ranked = [row_of[seen["docs"][i]] for i in order if seen["docs"][i] in row_of]
        if side[row["id"]] == "dev":
            held.append({"qid": row["id"], "question": row["question"], "gold": sorted(gold_ids),
                         "ranked": [seen["docs"][i] for i in order[:50]],
                         "relevance": [round(float(seen["rel"][i]), 6) for i in order[:50]]})  # fmt: skip
        positives = sorted(gold_ids & row_of.keys())
        rng.shuffle(positives)
        positives = positives[:POSITIVES]
        texts = {snippets[row_of[s]]["text"] for s in positives}
        usable = usable_negatives(
            ranked, snippets, gold_ids, gold_pmids, texts, excluded, window=(FROM_RANK, TO_RANK)
        )
        chosen = [(row_of[s], 1) for s in positives]
        chosen += [(i, 0) for i in sorted(rng.sample(usable, min(PER_QUESTION, len(usable))))]
        for i, label in chosen:
            pair = _pair("rerank", row["id"], row["question"], snippets[i]["text"], label)
            pairs.append({**pair, "split": side[row["id"]]})
    return pairs, held


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--pairs", type=Path, required=True, help="the reader's pairs (evals/reader_data.py)")
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--candidates", type=Path, default=None)
    args = parser.parse_args()
    opener = gzip.open if args.pairs.suffix == ".gz" else open
    with opener(args.pairs, "rt", encoding="utf-8") as handle:
        reader_pairs = [json.loads(line) for line in handle if line.strip()]
    pairs, held = rerank_pairs(reader_pairs, Settings())
    replay = [p for p in reader_pairs if p["source"] in ("medquad", "pubmedqa")]
    counts = write_pairs([*pairs, *replay], args.out)
    if args.candidates:
        args.candidates.write_text(json.dumps(held), encoding="utf-8")
    print(json.dumps(counts, indent=1))


if __name__ == "__main__":
    main()
