"""How often an unanswerable drug question is told the KB does not cover it (issue 21, item 4).

    python -m evals.coverage_eval [--kb-dir DIR] [--limit N] [--add FILE ... --drugs NAME ...]

The 690 MedicationQA consumer questions (``../shared/data/eval/medicationqa.jsonl``: what people ask about
their medicines; the default KB holds no drug labels, so none of them should end "answered" with a drug
monograph's content). Each is a new offline consult on the default KB. Counted: answered / insufficient,
and how many insufficient answers carry the "not covered" note (agent/nodes/coverage.py), by the set's own
question type. Before the note existed the share was 0 by construction.

With ``--add``, the files (drug labels: DailyMed SPL, openFDA JSON) are added to a copy of the KB first, and
``--drugs`` keeps the questions whose ``focus_drug`` is one of those drugs: how many of them the added labels
answer.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import tempfile
import time
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

from langgraph.checkpoint.memory import InMemorySaver

from agent.consult import Consultant
from graphs.building.incremental import add_documents
from graphs.model.settings import Settings, load_settings

REPO = Path(__file__).resolve().parent.parent


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--kb-dir", type=Path, default=None)
    parser.add_argument("--limit", type=int, default=None)
    parser.add_argument("--out", type=Path, default=REPO / "evals" / "reports" / "coverage_medicationqa.md")
    parser.add_argument("--add", type=Path, nargs="*", default=[], help="sources added to a copy of the KB")
    parser.add_argument("--drugs", nargs="*", default=[], help="keep questions about these drugs only")
    args = parser.parse_args(argv)
    settings = load_settings()
    path = settings.shared_data_dir / "eval" / "medicationqa.jsonl"
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    if args.drugs:
        wanted = {d.lower() for d in args.drugs}
        rows = [r for r in rows if str(r.get("focus_drug") or "").lower() in wanted]
    rows = rows[: args.limit]
    started = time.perf_counter()
    by_type: dict[str, Counter[str]] = defaultdict(Counter)
    examples: list[str] = []
    with tempfile.TemporaryDirectory() as tmp:
        kb_dir = args.kb_dir or settings.kb_root
        if args.add:
            shutil.copytree(kb_dir, Path(tmp) / "kb", symlinks=True)
            kb_dir = Path(tmp) / "kb"
            for source in args.add:
                add_documents(kb_dir, source)
        consultant = Consultant(
            Settings(kb_dir=kb_dir, data_dir=Path(tmp), llm_enabled=False),
            checkpointer=InMemorySaver(),
            use_llm=False,
        )
        for row in rows:
            answer: dict[str, Any] = consultant.ask(row["question"]).answer
            covered_note = bool(answer.get("verdict", {}).get("not_covered"))
            outcome = answer["status"] + (" + not covered" if covered_note else "")
            by_type[row["question_type"]][outcome] += 1
            by_type["(all)"][outcome] += 1
            if answer["status"] == "answered" and len(examples) < 8:
                examples.append(f"- {row['question']} ({row['question_type']})")
    total = by_type.pop("(all)")
    n = sum(total.values())
    outcomes = ["answered", "insufficient + not covered", "insufficient"]
    load = ", ".join(f"{x:.2f}" for x in os.getloadavg())
    lines = [
        '# Drug questions on a KB without drug labels: the "not covered" note (issue 21)',
        "",
        f"Command: `python -m evals.coverage_eval` ({time.perf_counter() - started:.0f} s, "
        f"load average {load}); "
        f"{n} MedicationQA questions, each a new offline consult on the default KB"
        + (f" with {', '.join(p.name for p in args.add)} added" if args.add else "")
        + (f"; only questions about {', '.join(args.drugs)}" if args.drugs else "")
        + ".",
        "",
        "| outcome | questions | share |",
        "| --- | --- | --- |",
        *(f"| {o} | {total[o]} | {total[o] / n:.3f} |" for o in outcomes),
        "",
        "Before the note, every insufficient answer here said only what was missing and a similarity score "
        "(share with a coverage message: 0). The note needs the question's subject linked to a drug in the "
        "KG; questions whose drug is not linked (brand names the dictionary lacks, misspellings) stay plain "
        '"insufficient".',
        "",
        "| question type | n | " + " | ".join(outcomes) + " |",
        "| --- | --- | " + " | ".join("---" for _ in outcomes) + " |",
        *(
            f"| {t} | {sum(c.values())} | " + " | ".join(str(c[o]) for o in outcomes) + " |"
            for t, c in sorted(by_type.items(), key=lambda kv: -sum(kv[1].values()))
        ),
        "",
        "Answered questions (the KB's consumer pages sometimes do answer a medicine question), first few:",
        "",
        *(examples or ["- none"]),
    ]
    args.out.write_text("\n".join(lines) + "\n", encoding="utf-8")
    print("\n".join(lines[:12]))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
