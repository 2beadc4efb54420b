"""Benchmark and sanity check of the dictionary NER (graphs/text/ner.py) on real data.

Builds the matcher over every name and synonym of the unified KG, then runs it over a spread sample of
MedQuAD answers (every 8th record, 2,000 passages). Prints the build time and the matching throughput
(median of 3 runs each) and the most frequent matched terms, which is how the stop list was tuned: the
top terms should be real medical concepts, not English words that happen to be gene symbols.

Usage: python -m evals.bench_ner [--passages 2000] [--top 100] [--negation]
"""

from __future__ import annotations

import argparse
import csv
import json
import statistics
import time
from collections import Counter
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TypeVar

from graphs.model.settings import Settings
from graphs.text.ner import DictionaryMatcher, Mention

DATA = Settings().shared_data_dir
NODES = DATA / "kg/unified/nodes.tsv"
MEDQUAD = DATA / "corpus/medquad_answered.jsonl"

T = TypeVar("T")


def kg_terms(nodes: Path = NODES) -> Iterator[tuple[str, str]]:
    """(name or synonym, node id) for every node of the unified KG; synonyms are pipe-separated."""
    with nodes.open(encoding="utf-8", newline="") as handle:
        for row in csv.DictReader(handle, delimiter="\t"):
            yield row["name"], row["node_id"]
            for synonym in row["synonyms"].split("|"):
                if synonym.strip():
                    yield synonym, row["node_id"]


def medquad_answers(count: int, stride: int = 8) -> list[str]:
    answers: list[str] = []
    with MEDQUAD.open(encoding="utf-8") as handle:
        for index, line in enumerate(handle):
            if index % stride == 0:
                answers.append(json.loads(line)["answer"])
                if len(answers) == count:
                    break
    return answers


def median_time(function: Callable[[], T], runs: int = 3) -> tuple[float, float, T]:
    """Median wall-clock and median CPU seconds of ``runs`` calls, and the last result.

    CPU time is printed too because the benchmark often shares a small machine: wall time then measures
    the neighbours, CPU time still measures the matcher.
    """
    wall: list[float] = []
    cpu: list[float] = []
    result: T | None = None
    for _ in range(runs):
        started, started_cpu = time.perf_counter(), time.process_time()
        result = function()
        wall.append(time.perf_counter() - started)
        cpu.append(time.process_time() - started_cpu)
    assert result is not None
    return statistics.median(wall), statistics.median(cpu), result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--passages", type=int, default=2000)
    parser.add_argument("--top", type=int, default=100)
    parser.add_argument("--negation", action="store_true", help="also time and sample negation marking")
    args = parser.parse_args()

    terms = list(kg_terms())
    build_wall, build_cpu, matcher = median_time(lambda: DictionaryMatcher.build(terms))
    passages = medquad_answers(args.passages)
    characters = sum(len(p) for p in passages)
    find_wall, find_cpu, found = median_time(lambda: matcher.find_many(passages))
    mentions = [m for per_passage in found for m in per_passage]
    print(f"dictionary: {len(terms):,} (name, id) pairs -> {len(matcher):,} distinct normalised terms")
    print(f"build (median of 3): {build_wall:.2f} s wall, {build_cpu:.2f} s CPU")
    print(
        f"find (median of 3): {len(passages):,} passages, {characters / 1e6:.2f} M chars, "
        f"{len(mentions):,} mentions; {find_wall:.2f} s wall = {len(passages) / find_wall:,.0f} passages/s, "
        f"{find_cpu:.2f} s CPU = {len(passages) / find_cpu:,.0f} passages/s"
    )
    if args.negation:
        negation_wall, negation_cpu, negated = median_time(
            lambda: matcher.find_many(passages, with_negation=True)
        )
        flagged = [(p, m) for p, ms in zip(passages, negated, strict=True) for m in ms if m.negated]
        print(
            f"find+negation (median of 3): {len(passages) / negation_wall:,.0f} passages/s wall, "
            f"{len(passages) / negation_cpu:,.0f} passages/s CPU; "
            f"{len(flagged):,} of {len(mentions):,} mentions negated"
        )
        for passage, mention in flagged[:: max(1, len(flagged) // 40)][:40]:
            print(f"  NEG {_context(passage, mention)}")
    counts = Counter(m.term for m in mentions)
    print(f"top {args.top} matched terms:")
    for term, count in counts.most_common(args.top):
        print(f"  {count:6d}  {term}")


def _context(passage: str, mention: Mention, width: int = 60) -> str:
    left = passage[max(0, mention.start - width) : mention.start].replace("\n", " ")
    right = passage[mention.end : mention.end + 20].replace("\n", " ")
    return f"...{left}[{mention.surface}]{right}..."


if __name__ == "__main__":
    main()
