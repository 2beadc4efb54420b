"""What the ``literature`` profile answers that ``core`` does not — and what it costs consumer questions.

    python -m evals.literature_profile --core KB_ROOT --literature KB_ROOT [--out FILE]

Both KBs are built by ``evigraph kb build`` (``--profile literature`` for the second). Every question is one
offline consult turn on each KB. Questions: the 100 held-out BioASQ test questions (research questions; the
literature profile holds the BioASQ snippet pool, so this is closed-pool retrieval — easier than searching
all of PubMed, see data/PROVENANCE.md 1.3) and the 72 everyday consumer questions of medquad-consumer.

Measured per KB: how many turns end ``answered``; for BioASQ factoid/list questions, how often an answered
turn's direct answer holds the gold exact answer (the answered-precision proxy, BioASQ's own synonyms); for
consumer questions, how often an answered turn cites a gold MedQuAD page; and how many answers cite research
literature at all (which should be rare for consumer questions: the two kinds of text must not mix silently);
and how many insufficient research answers say the KB holds no research literature (agent/nodes/coverage.py).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any

from langgraph.checkpoint.memory import InMemorySaver

from agent.consult import Consultant
from evals.metrics.answers import exact_hit
from graphs.building.loaders.pubmed_passages import SOURCE
from graphs.kb import KnowledgeBase
from graphs.model.settings import load_settings

REPO = Path(__file__).resolve().parent.parent
BIOASQ = REPO / "evals" / "data" / "bioasq_test.jsonl"
CONSUMER = REPO / "evals" / "data" / "medquad_consumer.jsonl"
ANSWER_END = ("Supporting passages", "Closest passages")


def rows(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def golden_exact(shared: Path) -> dict[str, Any]:
    found = {}
    for line in (
        (shared / "eval" / "bioasq_taskb_golden_7b_10b.jsonl").read_text(encoding="utf-8").split("\n")
    ):
        if line.strip():
            row = json.loads(line)
            found[row["id"]] = row.get("exact_answer")
    return found


def direct_answer(text: str) -> str:
    """The answer's first block (the direct answer or the insufficient line), before the passages."""
    cut = min((text.find(m) for m in ANSWER_END if m in text), default=len(text))
    return text[:cut]


def common_counts(answer: dict[str, Any]) -> Counter[str]:
    """What every question counts: asked, answered or not, cites research literature, told "no literature"."""
    answered = answer["status"] == "answered"
    return Counter(
        n=1,
        answered=answered,
        insufficient=not answered,
        cites_research=any(s.get("source") == SOURCE for s in answer["sources"]),
        no_literature_note="research literature" in str(answer.get("verdict", {}).get("not_covered", "")),
    )


def run_kb(
    root: Path, bioasq: list[dict[str, Any]], consumer: list[dict[str, Any]], exact: dict[str, Any]
) -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as data_dir:
        settings = load_settings(kb_dir=root, data_dir=Path(data_dir), llm_enabled=False)
        kb = KnowledgeBase.open(root)
        consultant = Consultant(settings, kb=kb, checkpointer=InMemorySaver(), use_llm=False)
        seconds: list[float] = []

        def ask(question: str) -> dict[str, Any]:
            started = time.perf_counter()
            answer = consultant.ask(question).answer
            seconds.append(time.perf_counter() - started)
            return answer

        b: Counter[str] = Counter()
        for q in bioasq:
            answer = ask(q["question"])
            b.update(common_counts(answer))
            if q["type"] in ("factoid", "list"):
                answered = answer["status"] == "answered"
                hit = exact_hit(direct_answer(answer["text"]), exact.get(q["id"]))
                b.update(
                    exact_n=1,
                    exact_in_answer=hit,
                    answered_exact_n=answered,
                    answered_exact_hit=answered and hit,
                )
        c: Counter[str] = Counter()
        for q in consumer:
            answer = ask(q["question"])
            gold = {f"medquad:{g}" for g in q["gold_ids"]}
            cites_gold = any(s.get("document_id") in gold for s in answer["sources"])
            c.update(common_counts(answer))
            c.update(answered_cites_gold=answer["status"] == "answered" and cites_gold)
        out: dict[str, Any] = {"kb_version": kb.version, "bioasq": dict(b), "consumer": dict(c)}
        out["turn_seconds_median"] = round(statistics.median(seconds), 2)
        kb.close()
    return out


def report(results: dict[str, dict[str, Any]]) -> str:
    lines = [
        "# The literature profile against core (evals/literature_profile.py)",
        "",
        "Offline, one turn per question. BioASQ: the 100 held-out test questions (closed pool: the",
        "literature profile holds BioASQ's snippet pool). Consumer: the 72 medquad-consumer questions.",
        f"Load average at the end: {', '.join(f'{x:.2f}' for x in os.getloadavg())} (2 cores).",
        "",
        "| measure | " + " | ".join(results) + " |",
        "| --- | " + " | ".join("---" for _ in results) + " |",
    ]

    def row(name: str, part: str, num: str, den: str) -> None:
        cells = [f"{r[part].get(num, 0)}/{r[part].get(den, 0)}" for r in results.values()]
        lines.append(f"| {name} | " + " | ".join(cells) + " |")

    row("BioASQ: answered", "bioasq", "answered", "n")
    row("BioASQ factoid/list: gold exact answer in the direct answer", "bioasq", "exact_in_answer", "exact_n")
    row(
        "BioASQ factoid/list answered: exact answer in it (precision proxy)",
        "bioasq",
        "answered_exact_hit",
        "answered_exact_n",
    )
    row("BioASQ: cites research literature", "bioasq", "cites_research", "n")
    row('BioASQ insufficient: "no research literature" note', "bioasq", "no_literature_note", "insufficient")
    row("consumer: answered", "consumer", "answered", "n")
    row(
        "consumer answered: cites a gold MedQuAD page (precision proxy)",
        "consumer",
        "answered_cites_gold",
        "answered",
    )
    row("consumer: cites research literature", "consumer", "cites_research", "n")
    row(
        'consumer insufficient: "no research literature" note (should be 0)',
        "consumer",
        "no_literature_note",
        "insufficient",
    )
    lines.append(
        "| median seconds per turn | "
        + " | ".join(str(r["turn_seconds_median"]) for r in results.values())
        + " |"
    )
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--core", type=Path, required=True)
    parser.add_argument("--literature", type=Path, required=True)
    parser.add_argument("--out", type=Path, default=REPO / "evals" / "reports" / "literature_profile.md")
    args = parser.parse_args()
    settings = load_settings()
    exact = golden_exact(settings.shared_data_dir)
    bioasq, consumer = rows(BIOASQ), rows(CONSUMER)
    results = {
        name: run_kb(root, bioasq, consumer, exact)
        for name, root in (("core", args.core), ("literature", args.literature))
    }
    args.out.write_text(report(results))
    args.out.with_suffix(".json").write_text(json.dumps(results, indent=2) + "\n")
    print(report(results))


if __name__ == "__main__":
    main()
