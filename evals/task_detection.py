"""How the offline planner reads which task a text asks for (agent/nodes/turn.py ``detect_task``), on
labelled wordings and on every question set the project holds.

    python -m evals.task_detection [--out evals/reports/task_detection.md]

Three measures: the labelled wordings of evals/data/task_wordings.jsonl (written for this rule, including
the newcomer's "Colleague says: …" that was answered as a clinical question and consumer questions that quote
a doctor and then ask something); the 30 hand-written reply-check replies (evals/data/reply_claims.jsonl),
which are all reply checks; and the questions of the evaluation sets, none of which is a reply to check
(a question read as one is a false alarm). Exam stems are counted without their options, so a stem read as
a reply check here is still read as an exam question in use (options come first).
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from agent.nodes.turn import detect_task
from graphs.model.settings import load_settings

REPO = Path(__file__).resolve().parent.parent
WORDINGS = REPO / "evals" / "data" / "task_wordings.jsonl"
REPLIES = REPO / "evals" / "data" / "reply_claims.jsonl"
LOCAL_SETS = ("medquad_consumer", "sufficiency", "near_miss", "aspect_wordings", "bioasq_dev", "bioasq_test")
SHARED_SETS = ("medicationqa", "expertqa_medical_lfqa", "bioasq_taskb_golden_7b_10b", "pubmedqa_pqal")


def rows(path: Path) -> Iterator[dict[str, Any]]:
    for line in path.read_text(encoding="utf-8").split("\n"):
        if line.strip():
            yield json.loads(line)


def question_text(row: dict[str, Any]) -> str | None:
    for key in ("question", "body", "Question", "query"):
        if isinstance(row.get(key), str):
            return str(row[key])
    return None


def misread(rows_: list[dict[str, Any]]) -> list[tuple[dict[str, Any], str]]:
    """The labelled wordings ``detect_task`` reads otherwise, with what it read."""
    return [(r, got) for r in rows_ if (got := detect_task(r["text"])) != r["task"]]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=REPO / "evals" / "reports" / "task_detection.md")
    args = parser.parse_args(argv)
    labelled = list(rows(WORDINGS))
    wrong = misread(labelled)
    replies = [r["reply"] for r in rows(REPLIES)]
    missed = [q for q in replies if detect_task(q) != "check_reply"]
    lines = [
        "# Which task a text asks for (agent/nodes/turn.py `detect_task`)",
        "",
        f"Command: `python -m evals.task_detection`. Labelled wordings (`evals/data/task_wordings.jsonl`): "
        f"{len(labelled) - len(wrong)}/{len(labelled)} read as labelled. Hand-written reply-check replies "
        f"(`evals/data/reply_claims.jsonl`): {len(replies) - len(missed)}/{len(replies)} read as a reply "
        "check.",
        "",
        'Before this rule (commit 1387031\'s cues: a fixed list, "doctor said", "reply:" …) the same '
        "measures were 10/22 labelled wordings, 0/30 replies, and one false alarm each in medquad_consumer "
        'and sufficiency ("The doctor said my son has roundworms (ascariasis). What medicine gets rid of '
        'them?").',
        "",
        "Questions of the evaluation sets read as a reply check (false alarms; none of them is one):",
        "",
        "| set | questions | read as a reply check |",
        "| --- | ---: | ---: |",
    ]
    shared = load_settings().shared_data_dir / "eval"
    paths = [REPO / "evals" / "data" / f"{n}.jsonl" for n in LOCAL_SETS]
    paths += [shared / f"{n}.jsonl" for n in SHARED_SETS if (shared / f"{n}.jsonl").exists()]
    alarms: list[str] = []
    for path in paths:
        questions = [q for row in rows(path) if (q := question_text(row))]
        hits = [q for q in questions if detect_task(q) == "check_reply"]
        alarms += hits
        lines.append(f"| {path.stem} | {len(questions)} | {len(hits)} |")
    lines += ["", "Misread:", ""]
    lines += [f"- labelled {r['task']}, read {got}: {r['text']}" for r, got in wrong]
    lines += [f"- reply check missed: {q}" for q in missed]
    lines += [f"- false alarm: {q[:200]}" for q in alarms]
    if not (wrong or missed or alarms):
        lines.append("- none")
    args.out.write_text("\n".join(lines) + "\n", encoding="utf-8")
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
