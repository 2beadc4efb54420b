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
* **bioasq-test** — held out: 100 questions drawn with dev's rules from the eligible questions that are not
  in dev or CI, do not repeat a dev/CI question's text and share no gold snippet with one (this leaves out
  11 of the 1,704 otherwise eligible, two of them verbatim repeats from another BioASQ year), so a ranking
  choice tuned on dev is confirmed on questions and evidence never looked at. Its distractors come from
  outside the dev and CI pools (the pools overlap only where a test gold snippet was a dev/CI distractor),
  and none has the same text as one of its gold snippets (the shared pool holds 30 texts under more than
  one id; such a copy would score a correct hit as a miss). It draws from its own
  ``random.Random(SEED + 2)``, so adding it left the dev and CI files byte-for-byte unchanged.
* **pubmedqa-dev** — 100 questions from the official PQA-L test split; the pool is their abstracts'
  paragraphs plus the paragraphs of 200 other abstracts (distractors).

Corpus files use the generic document format (graphs/building/loaders/generic_docs.py): one document per
snippet or paragraph with ``id`` = snippet id, so every retrieved evidence unit maps back to its snippet. The
title is ``PubMed <pmid>`` (a real, neutral field; an empty title would make the builder name fallback
entities after nothing).

Usage: python -m evals.datasets.make_slices [--shared DIR] [--out evals/data]
"""

from __future__ import annotations

import argparse
import json
import random
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from evals.datasets.snippet_pools import read_jsonl
from graphs.model.settings import Settings

DATA_DIR = Path(__file__).resolve().parent.parent / "data"
SEED = 20240502
DEV_QUESTIONS = 100
DEV_POOL = 3000
DEV_MAX_GOLD = 25
CI_QUESTIONS = 15
CI_POOL = 300
CI_GOLD_RANGE = (2, 8)
TEST_SEED = SEED + 2
"""bioasq-test draws from its own stream: the dev/CI stream must stay as it was to keep those files."""
TEST_QUESTIONS = 100
TEST_POOL = 3000
PUBMEDQA_QUESTIONS = 100
PUBMEDQA_DISTRACTOR_ABSTRACTS = 200


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


def normalized_question(text: str) -> str:
    """Case, spacing and trailing punctuation removed: BioASQ repeats some questions across years."""
    return " ".join(text.lower().split()).rstrip("?. ")


def held_out_candidates(
    eligible: Sequence[dict[str, Any]], seen: Sequence[dict[str, Any]]
) -> list[dict[str, Any]]:
    """Eligible questions sharing nothing with ``seen``: not the same id, text or any gold snippet."""
    seen_ids = {q["id"] for q in seen}
    seen_texts = {normalized_question(q["question"]) for q in seen}
    seen_gold = {s for q in seen for s in q["gold_snippet_ids"]}
    return [
        q
        for q in eligible
        if q["id"] not in seen_ids
        and normalized_question(q["question"]) not in seen_texts
        and not seen_gold.intersection(q["gold_snippet_ids"])
    ]


def write_bioasq_slice(
    name: str,
    chosen: Sequence[dict[str, Any]],
    pool: Sequence[str],
    snippets: dict[str, dict[str, Any]],
    out: Path,
) -> dict[str, int]:
    """Write ``<name>.jsonl`` (questions) and ``<name>_corpus.jsonl`` (the pool as generic documents)."""
    pmids = {str(snippets[s]["pmid"]) for s in pool}
    return {
        f"{name}_questions": write_jsonl(out / f"{name}.jsonl", (bioasq_question(q, pmids) for q in chosen)),
        f"{name}_snippets": write_jsonl(
            out / f"{name}_corpus.jsonl", (snippet_document(snippets[s]) for s in pool)
        ),
        f"{name}_gold_snippets": len({s for q in chosen for s in q["gold_snippet_ids"]}),
    }


def gold_of(name: str, chosen: Sequence[dict[str, Any]], size: int) -> list[str]:
    gold = sorted({s for q in chosen for s in q["gold_snippet_ids"]})
    if len(gold) > size:
        raise ValueError(f"{name}: {len(gold)} gold snippets exceed the pool size {size}")
    return gold


def bioasq_slices(shared: Path, out: Path) -> dict[str, int]:
    """Write the dev, CI and held-out test BioASQ slices (questions + snippet corpora)."""
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
    used_pool: set[str] = set()
    for name, chosen, size in (("bioasq_dev", dev, DEV_POOL), ("bioasq_ci", ci, CI_POOL)):
        pool = pad_pool(gold_of(name, chosen, size), list(snippets), size, rng)
        used_pool.update(pool)
        counts.update(write_bioasq_slice(name, chosen, pool, snippets, out))

    test_rng = random.Random(TEST_SEED)
    test = sorted(
        test_rng.sample(held_out_candidates(eligible, [*dev, *ci]), TEST_QUESTIONS), key=lambda q: q["id"]
    )
    test_gold = gold_of("bioasq_test", test, TEST_POOL)
    gold_texts = {snippets[s]["text"] for s in test_gold}
    distractors = [s for s in snippets if s not in used_pool and snippets[s]["text"] not in gold_texts]
    test_pool = pad_pool(test_gold, distractors, TEST_POOL, test_rng)
    counts.update(write_bioasq_slice("bioasq_test", test, test_pool, snippets, out))
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
