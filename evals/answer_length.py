"""How long an answer is on screen: lines at 100 columns over 50 real questions, compact and full view.

Why: issue 10 measured 130 lines for one offline answer (ten whole passages); a clinician should see the
answer on one screen. Target: a typical consult (the median) fits in ~40 lines at 100 columns.

Questions: the first 50 real consumer questions of ``evals/data/medquad_consumer.jsonl`` (written by
patients, answerable from the default KB), plus the issue's own examples (reported separately, not in the
median). Each is asked as a new offline consult on the default KB; the answer is rendered exactly as
``evigraph ask`` prints it (``agent.frontends.render.print_answer``) into a 100-column console,
compact (the default)
and ``--full``, and the lines counted.

Usage: python -m evals.answer_length [--kb-root DIR] [--n 50] [--out evals/reports/answer_length.md]
"""

from __future__ import annotations

import argparse
import io
import json
import os
import statistics
import tempfile
from pathlib import Path
from typing import Any

from rich.console import Console

from agent.consult import Consultant
from agent.frontends.render import print_answer
from evals.bench_common import percentile, publish
from graphs.model.settings import Settings, load_settings

WIDTH = 100
TARGET_MEDIAN_LINES = 40
QUESTIONS = Path(__file__).resolve().parent / "data" / "medquad_consumer.jsonl"
ISSUE_EXAMPLES = (
    "What is the first-line medicine for type 2 diabetes?",
    "What are the common side effects of metformin?",
    "What are the symptoms of Fabry disease?",
    "What is the capital of France?",
)


def consumer_questions(n: int) -> list[str]:
    rows = [json.loads(line) for line in QUESTIONS.read_text(encoding="utf-8").splitlines() if line.strip()]
    return [str(r["question"]) for r in rows[:n]]


def rendered_lines(answer: dict[str, Any], evidence: dict[str, str], full: bool) -> int:
    """Lines the answer takes in a 100-column terminal, as ``evigraph ask`` prints it."""
    buffer = io.StringIO()
    console = Console(file=buffer, width=WIDTH, force_terminal=False, color_system=None)
    print_answer(console, answer, evidence, full=full)
    return len(buffer.getvalue().rstrip("\n").splitlines())


def measure(consultant: Consultant, question: str) -> dict[str, Any]:
    result = consultant.ask(question)
    evidence = consultant.evidence_texts(result.answer.get("evidence_ids", []))
    return {
        "question": question,
        "status": result.answer.get("status"),
        "compact": rendered_lines(result.answer, evidence, full=False),
        "full": rendered_lines(result.answer, evidence, full=True),
    }


def summary(rows: list[dict[str, Any]], key: str) -> tuple[float, float, int]:
    values = [r[key] for r in rows]
    return statistics.median(values), percentile(values, 90), max(values)


def report(rows: list[dict[str, Any]], examples: list[dict[str, Any]], kb_version: str) -> str:
    lines = [
        "# Answer length on screen (lines at 100 columns)",
        "",
        f"KB {kb_version}, offline mode, {len(rows)} MedQuAD consumer questions (evals/data/"
        f"medquad_consumer.jsonl), each a new consult, rendered as `evigraph ask` prints it. "
        f"Target: median ≤ {TARGET_MEDIAN_LINES} lines (compact view). Load average at the end: "
        f"{' '.join(f'{x:.2f}' for x in os.getloadavg())}.",
        "",
        "| view | median | p90 | max |",
        "| --- | ---: | ---: | ---: |",
    ]
    for key, name in (("compact", "compact (default)"), ("full", "`--full` / `/more`")):
        med, p90, top = summary(rows, key)
        lines.append(f"| {name} | {med:g} | {p90:g} | {top} |")
    answered = sum(1 for r in rows if r["status"] == "answered")
    lines += ["", f"Status: {answered}/{len(rows)} answered, {len(rows) - answered} insufficient.", ""]
    lines += ["Issue 10's examples (not in the median):", "", "| question | status | compact | full |"]
    lines += ["| --- | --- | ---: | ---: |"]
    lines += [f"| {r['question']} | {r['status']} | {r['compact']} | {r['full']} |" for r in examples]
    longest = sorted(rows, key=lambda r: -r["compact"])[:3]
    lines += ["", "Longest compact answers:", ""]
    lines += [f"- {r['compact']} lines: {r['question']}" for r in longest]
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--kb-root", type=Path, default=None, help="KB root (default: the default KB)")
    parser.add_argument("--n", type=int, default=50)
    parser.add_argument("--out", type=Path, default=Path("evals/reports/answer_length.md"))
    args = parser.parse_args(argv)
    kb_root = args.kb_root or load_settings().kb_root
    with tempfile.TemporaryDirectory(prefix="evigraph-length-") as tmp:
        settings = Settings(kb_dir=kb_root, data_dir=Path(tmp), llm_enabled=False)
        consultant = Consultant(settings, use_llm=False)
        rows = [measure(consultant, q) for q in consumer_questions(args.n)]
        examples = [measure(consultant, q) for q in ISSUE_EXAMPLES]
        publish(report(rows, examples, consultant.kb.version), args.out)


if __name__ == "__main__":
    main()
