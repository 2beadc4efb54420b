"""Write the shipped evaluation slices in evals/data/ from the full data in ../shared/data.

Why slices: embedding runs at ~10–30 passages/s on a 2-core laptop, so a KB over the whole BioASQ pool
(20,585 snippets) takes 15–30 minutes to build; the committed report uses a dev slice (100 questions, a
3,000-snippet pool) and CI uses a tiny one (15 questions, 300 snippets) that builds in seconds.

How each slice is chosen (deterministic, ``random.Random(seed)``):

* **bioasq-dev** — 100 questions drawn uniformly from BioASQ 7b–10b among those with at most 25 gold
  snippets (so one question cannot fill the pool); the pool is the union of their gold snippets plus
  *random* distractor snippets from the rest of the 20,585-snippet pool up to 3,000. Random (not
  retrieval-mined) distractors keep the pool neutral between systems; it is therefore easier than the full
  pool, and the report gives BM25 on the full pool for the same questions as the calibration.
* **bioasq-ci** — 15 questions (disjoint from dev) with 2–8 gold snippets, pool padded to 300.
* **pubmedqa-dev** — 100 questions from the official PQA-L test split; the pool is their abstracts'
  paragraphs plus the paragraphs of 200 other abstracts (distractors).

Corpus files use the generic document format (graphs/loaders/generic_docs.py): one document per snippet
or paragraph with ``id`` = snippet id, so every retrieved evidence unit maps back to its snippet. The title
is ``PubMed <pmid>`` (a real, neutral field; an empty title would make the builder name fallback entities
after nothing).

Usage: python -m evals.datasets.make_slices [--shared DIR] [--out evals/data]
"""

from __future__ import annotations

import argparse
import json
import random
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from graphs.settings import Settings

DATA_DIR = Path(__file__).resolve().parent.parent / "data"
SEED = 20240502
DEV_QUESTIONS = 100
DEV_POOL = 3000
DEV_MAX_GOLD = 25
CI_QUESTIONS = 15
CI_POOL = 300
CI_GOLD_RANGE = (2, 8)
PUBMEDQA_QUESTIONS = 100
PUBMEDQA_DISTRACTOR_ABSTRACTS = 200


def read_jsonl(path: Path) -> list[dict[str, Any]]:
    with path.open(encoding="utf-8") as handle:
        return [json.loads(line) for line in handle if line.strip()]


def write_jsonl(path: Path, rows: Iterable[dict[str, Any]]) -> int:
    path.parent.mkdir(parents=True, exist_ok=True)
    count = 0
    with path.open("w", encoding="utf-8") as handle:
        for row in rows:
            handle.write(json.dumps(row, ensure_ascii=False) + "\n")
            count += 1
    return count


def snippet_document(snippet: dict[str, Any]) -> dict[str, Any]:
    """A BioASQ snippet as a generic document (one KB document per snippet)."""
    pmid = str(snippet["pmid"])
    return {
        "id": snippet["id"],
        "title": f"PubMed {pmid}",
        "text": snippet["text"],
        "source": "BioASQ",
        "url": f"https://pubmed.ncbi.nlm.nih.gov/{pmid}/",
        "date": "",
        "label": "general",
        "pmid": pmid,
        "section": snippet.get("section", ""),
    }


def bioasq_question(question: dict[str, Any], pool_pmids: set[str]) -> dict[str, Any]:
    return {
        "id": question["id"],
        "question": question["question"],
        "type": question["type"],
        "batch": question["batch"],
        "gold_snippet_ids": list(question["gold_snippet_ids"]),
        "gold_pmids": [p for p in question["documents"] if p in pool_pmids],
    }


def pad_pool(gold: Sequence[str], candidates: Sequence[str], size: int, rng: random.Random) -> list[str]:
    """Gold snippet ids plus random distractors (not gold for the slice) up to ``size``, sorted."""
    chosen = set(gold)
    rest = sorted(set(candidates) - chosen)
    rng.shuffle(rest)
    chosen.update(rest[: max(size - len(chosen), 0)])
    return sorted(chosen)


def bioasq_slices(shared: Path, out: Path) -> dict[str, int]:
    """Write the dev and CI BioASQ slices (questions + snippet corpora)."""
    rng = random.Random(SEED)
    questions = read_jsonl(shared / "eval" / "bioasq_taskb_golden_7b_10b.jsonl")
    snippets = {s["id"]: s for s in read_jsonl(shared / "corpus" / "bioasq_snippets.jsonl")}
    eligible = [q for q in questions if 1 <= len(q["gold_snippet_ids"]) <= DEV_MAX_GOLD]
    dev = sorted(rng.sample(eligible, DEV_QUESTIONS), key=lambda q: q["id"])
    dev_ids = {q["id"] for q in dev}
    low, high = CI_GOLD_RANGE
    ci_pool = [q for q in eligible if q["id"] not in dev_ids and low <= len(q["gold_snippet_ids"]) <= high]
    ci = sorted(rng.sample(ci_pool, CI_QUESTIONS), key=lambda q: q["id"])
    counts: dict[str, int] = {}
    for name, chosen, size in (("bioasq_dev", dev, DEV_POOL), ("bioasq_ci", ci, CI_POOL)):
        gold = sorted({s for q in chosen for s in q["gold_snippet_ids"]})
        if len(gold) > size:
            raise ValueError(f"{name}: {len(gold)} gold snippets exceed the pool size {size}")
        pool = pad_pool(gold, list(snippets), size, rng)
        pmids = {str(snippets[s]["pmid"]) for s in pool}
        counts[f"{name}_questions"] = write_jsonl(
            out / f"{name}.jsonl", (bioasq_question(q, pmids) for q in chosen)
        )
        counts[f"{name}_snippets"] = write_jsonl(
            out / f"{name}_corpus.jsonl", (snippet_document(snippets[s]) for s in pool)
        )
        counts[f"{name}_gold_snippets"] = len(gold)
    return counts


def pubmedqa_slice(shared: Path, out: Path) -> dict[str, int]:
    """Write the PubMedQA dev slice: test-split questions, their paragraphs and distractor abstracts."""
    rng = random.Random(SEED + 1)
    items = read_jsonl(shared / "eval" / "pubmedqa_pqal.jsonl")
    test = [q for q in items if q.get("official_split") == "test"]
    chosen = sorted(rng.sample(test, PUBMEDQA_QUESTIONS), key=lambda q: q["id"])
    chosen_ids = {q["id"] for q in chosen}
    others = sorted((q for q in items if q["id"] not in chosen_ids), key=lambda q: q["id"])
    distractors = rng.sample(others, PUBMEDQA_DISTRACTOR_ABSTRACTS)

    def paragraphs(item: dict[str, Any]) -> Iterable[dict[str, Any]]:
        pmid = str(item["pubid"])
        for k, (text, label) in enumerate(zip(item["contexts"], item["labels"], strict=False)):
            yield {
                "id": f"{pmid}#{k}",
                "title": f"PubMed {pmid}",
                "text": text,
                "source": "PubMedQA",
                "url": f"https://pubmed.ncbi.nlm.nih.gov/{pmid}/",
                "date": str(item.get("year") or ""),
                "label": "general",
                "pmid": pmid,
                "section": str(label),
            }

    corpus = [p for item in sorted(chosen + distractors, key=lambda q: q["id"]) for p in paragraphs(item)]
    return {
        "pubmedqa_dev_questions": write_jsonl(
            out / "pubmedqa_dev.jsonl",
            (
                {
                    "id": str(q["id"]),
                    "question": q["question"],
                    "pmid": str(q["pubid"]),
                    "final_decision": q["final_decision"],
                }
                for q in chosen
            ),
        ),
        "pubmedqa_dev_paragraphs": write_jsonl(out / "pubmedqa_dev_corpus.jsonl", corpus),
    }


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--shared", type=Path, default=Settings().shared_data_dir)
    parser.add_argument("--out", type=Path, default=DATA_DIR)
    args = parser.parse_args(argv)
    counts = {**bioasq_slices(args.shared, args.out), **pubmedqa_slice(args.shared, args.out)}
    print(json.dumps(counts, indent=2))


if __name__ == "__main__":
    main()
