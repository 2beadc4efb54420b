"""Near-miss questions: the KB knows the subject but not the detail asked. Is "answered" still honest?

Why: the "answered" verdict is calibrated on questions whose answer the KB holds or whose subject it lacks
(evals/data/sufficiency.jsonl, BioASQ pools). Its hardest case sits between: "Which CFTR mutation is the most
common in cystic fibrosis?" — the consumer pages say a great deal about CFTR and cystic fibrosis but never
name F508del, and the turn was "answered" with "A defect in the CFTR gene causes cystic fibrosis". A
clinician reads that as the answer to what was asked, the worst defect this product can have.

``evals/data/near_miss.jsonl``: 24 questions written by hand for this project (2026-11-27), each about a
subject the default KB covers (MedQuAD pages on cystic fibrosis, gout, thalassemia …) and asking one named
detail, with the strings that name it (``answers``, any one counts, case-insensitive). Each question runs as
a new offline consult on the default KB; an "answered" turn is right when its direct answer (as shown: named
answer, KG facts, key sentences) holds one of those strings. Evaluation only: nothing was tuned on it.

Usage: python -m evals.near_miss [--kb-root DIR] [--out evals/reports/near_miss.md]
"""

from __future__ import annotations

import argparse
import json
import os
import tempfile
from pathlib import Path
from typing import Any

from agent.consult import Consultant
from evals.answer_eval import plain
from graphs.model.settings import Settings, load_settings

REPO = Path(__file__).resolve().parent.parent
QUESTIONS = REPO / "evals" / "data" / "near_miss.jsonl"


def shown_text(answer: dict[str, Any]) -> str:
    """The direct answer's lines as plain text (what a clinician reads first)."""
    return plain(answer.get("direct", {}).get("lines", []))


def holds(text: str, answers: list[str]) -> bool:
    low = text.lower()
    return any(a.lower() in low for a in answers)


def run(kb_root: Path) -> list[dict[str, Any]]:
    rows = [json.loads(line) for line in QUESTIONS.read_text(encoding="utf-8").splitlines() if line.strip()]
    out: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory() as tmp:
        consultant = Consultant(Settings(kb_dir=kb_root, data_dir=Path(tmp)), use_llm=False)
        for row in rows:
            answer = consultant.ask(row["question"]).answer
            text = shown_text(answer)
            out.append(
                {**row, "status": answer.get("status"), "shown": text, "right": holds(text, row["answers"])}
            )
        consultant.kb.close()
    return out


def report(results: list[dict[str, Any]], kb_root: Path) -> str:
    answered = [r for r in results if r["status"] == "answered"]
    right = [r for r in answered if r["right"]]
    load = ", ".join(f"{x:.2f}" for x in os.getloadavg())
    lines = [
        "# Near-miss questions: the KB knows the subject, not the detail asked (evals/near_miss.py)",
        "",
        f"Command: `python -m evals.near_miss`; KB at {kb_root}; offline; load average at the end {load}.",
        f"{len(results)} questions (evals/data/near_miss.jsonl, hand-written 2026-11-27, evaluation only).",
        "",
        "| answered | of which the direct answer names the asked detail | insufficient |",
        "| --- | --- | --- |",
        f"| {len(answered)} | {len(right)} | {len(results) - len(answered)} |",
        "",
        'Answered without naming what was asked (each is an "answered" a clinician would misread):',
        "",
        *(
            f"- {r['id']} {r['question']} — shown: \u201c{r['shown'][:240]}\u201d"
            for r in answered
            if not r["right"]
        ),
        "",
        "Answered and right:",
        "",
        *(f"- {r['id']} {r['question']}" for r in right),
        "",
    ]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--kb-root", type=Path, default=None)
    parser.add_argument("--out", type=Path, default=REPO / "evals" / "reports" / "near_miss.md")
    args = parser.parse_args(argv)
    kb_root = args.kb_root or load_settings().kb_root
    text = report(run(kb_root), kb_root)
    args.out.write_text(text, encoding="utf-8")
    print(text)


if __name__ == "__main__":
    main()
