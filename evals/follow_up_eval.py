"""Follow-ups against the same questions asked outright, offline, on the default KB.

Why: a consult continues ("What is COPD?" → "How is it treated?"), and a follow-up should get the answer
the clinician would get by naming the subject. The reader was trained on questions that name their subject,
so how a follow-up is put to it (agent.nodes.retrieval.search_question) decides whether it is answered.
For each of 12 common conditions: "What is X?", then four follow-ups in that consult, and the same four
asked outright as new consults. Reported: answered counts, and how often the follow-up's first key sentence
is the outright question's (no gold here: the outright answer is the reference a user would compare with).

Usage: python -m evals.follow_up_eval [--kb-root DIR] [--out evals/reports/follow_up_eval.md]
"""

from __future__ import annotations

import argparse
import os
import tempfile
from pathlib import Path
from typing import Any

from agent.consult import Consultant
from evals.bench_common import publish
from graphs.model.settings import Settings, load_settings

SUBJECTS = (
    "COPD",
    "gout",
    "asthma",
    "psoriasis",
    "glaucoma",
    "osteoporosis",
    "hypothyroidism",
    "Parkinson's disease",
    "shingles",
    "celiac disease",
    "rheumatoid arthritis",
    "kidney stones",
)
FORMS = (
    ("How is it treated?", "How is {} treated?"),
    ("What are its symptoms?", "What are the symptoms of {}?"),
    ("What causes it?", "What causes {}?"),
    ("How is it diagnosed?", "How is {} diagnosed?"),
)


def lead_sentence(answer: dict[str, Any]) -> str:
    """The first bullet of the answer that is not a KG line: what a reader sees first."""
    for line in str(answer.get("text", "")).splitlines():
        if line.strip().startswith("- ") and "KG" not in line:
            return line.strip()
    return ""


def run(kb_root: Path) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory() as tmp:
        consultant = Consultant(Settings(data_dir=Path(tmp) / "data", kb_dir=kb_root), use_llm=False)
        for subject in SUBJECTS:
            first = consultant.ask(f"What is {subject}?")
            for follow_up, outright in FORMS:
                continued = consultant.ask(follow_up, consult_id=first.consult_id).answer
                alone = consultant.ask(outright.format(subject)).answer
                rows.append(
                    {
                        "subject": subject,
                        "follow_up": follow_up,
                        "follow_status": continued["status"],
                        "outright_status": alone["status"],
                        "follow_lead": lead_sentence(continued),
                        "outright_lead": lead_sentence(alone),
                    }
                )
    return rows


def report(rows: list[dict[str, Any]], kb_root: Path) -> str:
    answered_f = sum(r["follow_status"] == "answered" for r in rows)
    answered_o = sum(r["outright_status"] == "answered" for r in rows)
    same = sum(r["follow_lead"] == r["outright_lead"] for r in rows)
    lines = [
        "# Follow-ups against the same questions asked outright (evals/follow_up_eval.py)",
        "",
        f"KB {kb_root}; {len(SUBJECTS)} conditions × {len(FORMS)} follow-ups, offline; load average "
        f"{os.getloadavg()[0]:.1f}.",
        "",
        "| measure | follow-up in the consult | asked outright |",
        "| --- | ---: | ---: |",
        f"| answered | {answered_f}/{len(rows)} | {answered_o}/{len(rows)} |",
        f"| same first key sentence | {same}/{len(rows)} | — |",
        "",
        "| condition | follow-up | status (follow-up / outright) | follow-up's first key sentence |",
        "| --- | --- | --- | --- |",
    ]
    for r in rows:
        lead = r["follow_lead"][2:120].replace("|", "/")
        lines.append(
            f"| {r['subject']} | {r['follow_up']} | {r['follow_status']} / {r['outright_status']} | {lead} |"
        )
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--kb-root", type=Path, default=None)
    parser.add_argument("--out", type=Path, default=None)
    args = parser.parse_args()
    kb_root = args.kb_root or load_settings().kb_root
    publish(report(run(kb_root), kb_root), args.out)


if __name__ == "__main__":
    main()
