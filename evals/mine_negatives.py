"""Mine hard negatives for the search encoder's second round with the shipped search encoder itself.

  python -m evals.mine_negatives --pairs PAIRS --out MINED_PAIRS

Why: the first round (data/retriever/CARD.md) trained on BM25-mined negatives, which a dense encoder soon
separates; what it still ranks wrongly are the snippets *it* puts near a question. A second round on the
encoder's own near misses is the ANCE recipe (Xiong et al. 2021) and what evals/reports/learned_fusion.md
named as the next retrieval lever: recall@50 of the fused ranking is 0.93, recall@10 0.78.

How: every BioASQ question of the training split of ``PAIRS`` (``python -m evals.reader_data --out PAIRS``,
whose split and exclusions data/reader/CARD.md states and tests/test_reader_data.py checks) is embedded with
the shipped search encoder and ranked against all 20,585 BioASQ snippets. Of the ranks ``FROM_RANK`` to
``TO_RANK`` (the very top is left out: BioASQ's gold lists are incomplete, and a snippet the encoder puts
first for a question is often an unlabelled answer), up to ``PER_QUESTION`` are drawn with a fixed seed, never
a gold snippet of the question, a snippet of one of its gold documents, a text equal to a positive's, or any
evaluation question's gold snippet or gold document. They are written after the input pairs with
``"mined": true``; ``evals/train_retriever.py train --mined`` prefers them as a triplet's hard negative.
"""

from __future__ import annotations

import argparse
import json
import random
from collections import defaultdict
from pathlib import Path
from typing import Any

import numpy as np

from evals.reader_data import Exclusions, _pair, _rows, _training_questions, exclusions
from graphs.model.settings import Settings
from graphs.vectors.search_encoder import get_search_encoder

SEED = 13
FROM_RANK = 3
TO_RANK = 40
PER_QUESTION = 4


def usable_negatives(
    ranked: list[int],
    snippets: list[dict[str, Any]],
    gold_ids: set[str],
    gold_pmids: set[str],
    positive_texts: set[str],
    excluded: Exclusions,
    window: tuple[int, int] = (FROM_RANK, TO_RANK),
) -> list[int]:
    """The snippets of ranks ``window`` (default ``FROM_RANK``–``TO_RANK``) of ``ranked`` that may be a
    negative of a question with these gold snippets, gold documents and positive texts (module docstring)."""
    return [
        i
        for i in ranked[window[0] : window[1]]
        if snippets[i]["id"] not in gold_ids
        and snippets[i]["id"] not in excluded.snippet_ids
        and str(snippets[i]["pmid"]) not in gold_pmids
        and str(snippets[i]["pmid"]) not in excluded.pmids
        and snippets[i]["text"] not in positive_texts
    ]


def mine(pairs_file: Path, out: Path, settings: Settings) -> dict[str, int]:
    """Write ``pairs_file``'s pairs and the mined negatives to ``out``; returns counts."""
    pairs = [json.loads(line) for line in pairs_file.read_text(encoding="utf-8").splitlines() if line]
    wanted = {p["qid"] for p in pairs if p["source"] == "bioasq" and p["split"] == "train"}
    positives: dict[str, set[str]] = defaultdict(set)
    for p in pairs:
        if p["source"] == "bioasq" and p["label"]:
            positives[p["qid"]].add(p["passage"])
    excluded = exclusions(settings)
    snippets = list(_rows(settings.shared_data_dir / "corpus" / "bioasq_snippets.jsonl"))
    texts = [row["text"] for row in snippets]
    encoder = get_search_encoder()
    pool = encoder.embed(texts)
    questions = [
        (row, gold_ids, gold_pmids)
        for row, gold_ids, gold_pmids in _training_questions(settings, excluded)
        if row["id"] in wanted
    ]
    query = encoder.embed([row["question"] for row, _, _ in questions])
    rng = random.Random(SEED)
    mined: list[dict[str, object]] = []
    for (row, gold_ids, gold_pmids), vector in zip(questions, query, strict=True):
        ranked = [int(i) for i in np.argsort(-(pool @ vector))[:TO_RANK]]
        usable = usable_negatives(ranked, snippets, gold_ids, gold_pmids, positives[row["id"]], excluded)
        for i in sorted(rng.sample(usable, min(PER_QUESTION, len(usable)))):
            pair = _pair("bioasq", row["id"], row["question"], texts[i], 0)
            mined.append({**pair, "split": "train", "mined": True})
    with out.open("w", encoding="utf-8") as handle:
        for pair in [*pairs, *mined]:
            handle.write(json.dumps(pair, ensure_ascii=False) + "\n")
    return {"pairs": len(pairs), "questions": len(questions), "mined": len(mined)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--pairs", type=Path, required=True)
    parser.add_argument("--out", type=Path, required=True)
    args = parser.parse_args()
    print(json.dumps(mine(args.pairs, args.out, Settings()), indent=1))


if __name__ == "__main__":
    main()
