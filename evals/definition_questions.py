""" "What is X?" for MedQuAD topics: does the first key sentence say what X is?

Why: "What is COPD?" led with "The "airways" are the tubes that carry air in and out of the lungs …" while
"Chronic obstructive pulmonary disease, or COPD, is a progressive lung disease …" was not shown; a
clinician reads the first line as the answer. For a seeded sample of the default KB's MedQuAD topics with
an "information" page: "What is <topic>?" as a new offline consult, and whether the first key sentence is
one of the first two sentences of one of the topic's own "What is (are) …" answers (MedQuAD's pages open on
the definition), plus the verdict. The KB holds those pages, so this measures which of its sentences leads,
not retrieval of unseen text.

Usage: python -m evals.definition_questions [--kb-root DIR] [--n 120] [--out FILE]
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import random
import re
from collections import defaultdict
from pathlib import Path
from typing import Any

from agent.nodes.focus import sentences
from evals.offline import offline_consultant
from graphs.model.settings import load_settings

REPO = Path(__file__).resolve().parent.parent
CORPUS = REPO / "data" / "corpus" / "medquad_answered.jsonl.gz"
SEED = 20261203
LEAD_SENTENCES = 2
NOT_IN_CORE = frozenset({"GARD", "GHR"})
"""The rare-disease collections the default ("core") KB leaves out (graphs/building/default_kb.py)."""


def normalised(text: str) -> str:
    return " ".join(re.sub(r"[^a-z0-9 ]", " ", text.lower()).split())


def topic_openings(corpus: Path = CORPUS) -> dict[str, list[str]]:
    """Each topic with an "information" answer in the default KB's sources: the first sentences of those
    answers, normalised."""
    out: dict[str, list[str]] = defaultdict(list)
    with gzip.open(corpus, "rt", encoding="utf-8") as fh:
        for line in fh:
            row = json.loads(line)
            in_core = row["source"] not in NOT_IN_CORE
            if (
                in_core
                and row["qtype"] == "information"
                and len(row["focus"]) <= 60
                and "?" not in row["focus"]
            ):
                text = row["answer"]
                opening = [normalised(text[s:e]) for s, e in sentences(text)[:LEAD_SENTENCES]]
                out[row["focus"]] += [o for o in opening if o]  # an empty one would match any sentence
    return dict(out)


def run(kb_root: Path, topics: dict[str, list[str]]) -> list[dict[str, Any]]:
    rows = []
    with offline_consultant(kb_root) as consultant:
        for topic, openings in topics.items():
            result = consultant.ask(f"What is {topic}?")
            shown = result.answer.get("direct", {}).get("sentences", [])
            first = shown[0]["text"] if shown else ""
            rows.append(
                {
                    "topic": topic,
                    "status": result.answer.get("status"),
                    "first": first,
                    "opening": bool(first)
                    and any(normalised(first) in o or o in normalised(first) for o in openings),
                }
            )
    return rows


def report(rows: list[dict[str, Any]], kb_root: Path) -> str:
    n = len(rows)
    opening = sum(r["opening"] for r in rows)
    answered = sum(r["status"] == "answered" for r in rows)
    load = ", ".join(f"{x:.2f}" for x in os.getloadavg())
    lines = [
        '# "What is X?": does the first key sentence say what X is?',
        "",
        f"`python -m evals.definition_questions` on `{kb_root}`; {n} MedQuAD topics (seed {SEED}); load "
        f"average at the end {load}. evals/definition_questions.py says how they are chosen and scored.",
        "",
        "| measure | count |",
        "| --- | --- |",
        f"| answered | {answered}/{n} |",
        f"| first key sentence is one of the first {LEAD_SENTENCES} sentences of the topic's own page | "
        f"{opening}/{n} |",
        "",
        "| topic | verdict | opening? | first key sentence |",
        "| --- | --- | --- | --- |",
    ]
    for r in rows:
        first = r["first"][:100].replace("|", "/")
        lines.append(f"| {r['topic']} | {r['status']} | {'yes' if r['opening'] else 'no'} | {first} |")
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--kb-root", type=Path, default=None)
    parser.add_argument("--n", type=int, default=120)
    parser.add_argument("--out", type=Path, default=REPO / "evals" / "reports" / "definition_questions.md")
    args = parser.parse_args()
    kb_root = args.kb_root or load_settings().kb_root
    everything = topic_openings()
    chosen = sorted(random.Random(SEED).sample(sorted(everything), min(args.n, len(everything))))
    text = report(run(kb_root, {t: everything[t] for t in chosen}), kb_root)
    args.out.write_text(text, encoding="utf-8")
    print(text)


if __name__ == "__main__":
    main()
