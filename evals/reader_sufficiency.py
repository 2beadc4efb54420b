"""Is the evidence reader's probability a better "answered" signal than the offline rule? (issue 18, measured)

The sufficiency verdict decides whether a clinician is told "answered"; today it is a rule over entity links
and a cosine threshold (agent/nodes/sufficiency_rule.py, evals/reports/sufficiency_calibration.md). This
script measures, on the same labelled set (evals/data/sufficiency.jsonl, the same calibration/held-out
split), what the reader would do in its place — before any code in the agent changes:

* each question runs as a new offline consult on the default KB (or ``--kb-dir``); the turn's final top
  ``TOP`` passages are read by the reader, and ``p_best`` = its highest probability that one answers;
* on the calibration half, the lowest threshold whose precision of "answered" is ≥ 0.95 and whose share
  of out-of-KB questions left insufficient is ≥ 0.90 is chosen (as for the rule);
* on the held-out half: precision and recall (Wilson 95 % intervals) of the reader alone, the rule as it
  runs, and the two combined (rule AND reader, rule OR reader).

Usage: python -m evals.reader_sufficiency [--kb-dir DIR] [--out evals/reports/reader_sufficiency.md]
"""

from __future__ import annotations

import argparse
import json
import os
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from langgraph.checkpoint.memory import InMemorySaver

from agent.consult import Consultant
from agent.sessions import thread_config
from evals.datasets.sufficiency import OUT as DATASET
from evals.sufficiency_calibration import fmt_ci, rates
from graphs.model.settings import load_settings
from graphs.vectors.reader import SHIPPED_READER_DIR, get_reader

REPORTS = Path(__file__).resolve().parent / "reports"
TOP = 8
TARGET_P = 0.95
TARGET_OOK = 0.90
GRID = tuple(round(0.50 + 0.01 * i, 2) for i in range(50))


def collect(kb_dir: Path | None) -> list[dict[str, Any]]:
    settings = load_settings(**({"kb_dir": kb_dir} if kb_dir else {}))
    consultant = Consultant(settings, use_llm=False, checkpointer=InMemorySaver())
    reader = get_reader(SHIPPED_READER_DIR)
    rows = []
    for line in DATASET.read_text(encoding="utf-8").splitlines():
        if not line.strip():
            continue
        q = json.loads(line)
        result = consultant.ask(q["question"])
        state = consultant.graph.get_state(thread_config(result.consult_id)).values  # type: ignore[arg-type]
        top = state.get("evidence", [])[:TOP]
        p = reader.probabilities(q["question"], [ev["text"] for ev in top]) if top else []
        rows.append(
            {**q, "p_best": float(max(p, default=0.0)), "rule": result.answer.get("status") == "answered"}
        )
    return rows


Decide = Callable[[dict[str, Any]], bool]


def choose(rows: list[dict[str, Any]]) -> float:
    ok = [
        t
        for t in GRID
        if (s := rates(rows, lambda r, t=t: r["p_best"] >= t))["precision"] >= TARGET_P
        and s["ook_share"] >= TARGET_OOK
    ]
    return min(ok) if ok else max(GRID)


def render(rows: list[dict[str, Any]], threshold: float, seconds: float) -> str:
    held = [r for r in rows if r["split"] == "held_out"]
    calib = [r for r in rows if r["split"] == "calibration"]
    rules: dict[str, Decide] = {
        f"reader p_best ≥ {threshold}": lambda r: r["p_best"] >= threshold,
        "rule as it runs (agent/nodes/sufficiency.py)": lambda r: r["rule"],
        "rule AND reader": lambda r: r["rule"] and r["p_best"] >= threshold,
        "rule OR reader": lambda r: r["rule"] or r["p_best"] >= threshold,
    }
    lines = [
        '# The evidence reader as the "answered" signal, against the offline rule',
        "",
        f"Command: `python -m evals.reader_sufficiency`. {len(rows)} questions of "
        "evals/data/sufficiency.jsonl, "
        f"each a new offline consult on the default KB; the reader reads the turn's top {TOP} passages. "
        f"Threshold chosen on the calibration half ({len(calib)}): the lowest with precision ≥ {TARGET_P} "
        f"and out-of-KB insufficient ≥ {TARGET_OOK}. Load average at the end {os.getloadavg()[0]:.1f}; "
        f"{seconds:.0f} s.",
        "",
        f"## Held-out half ({len(held)} questions)",
        "",
        "| decision | answered | precision of answered (95 % CI) | recall of answerable | "
        "out-of-KB left insufficient |",
        "| --- | --- | --- | --- | --- |",
    ]
    for name, decide in rules.items():
        s = rates(held, decide)
        lines.append(
            f"| {name} | {s['answered']} | {fmt_ci(s['tp'], s['answered'])} | {fmt_ci(s['tp'], s['pos'])} | "
            f"{fmt_ci(s['ook'], s['neg'])} |"
        )
    lines += [
        "",
        "## By kind (held out): answered / questions",
        "",
        "| kind | reader | rule |",
        "| --- | --- | --- |",
    ]
    for kind in sorted({r["kind"] for r in held}):
        group = [r for r in held if r["kind"] == kind]
        reader_n = sum(1 for r in group if r["p_best"] >= threshold)
        rule_n = sum(1 for r in group if r["rule"])
        lines.append(f"| {kind} | {reader_n}/{len(group)} | {rule_n}/{len(group)} |")
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--kb-dir", type=Path, default=None)
    parser.add_argument("--out", type=Path, default=REPORTS / "reader_sufficiency.md")
    args = parser.parse_args()
    started = time.perf_counter()
    rows = collect(args.kb_dir)
    (args.out.with_suffix(".jsonl")).write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    threshold = choose([r for r in rows if r["split"] == "calibration"])
    args.out.write_text(render(rows, threshold, time.perf_counter() - started), encoding="utf-8")
    print(args.out.read_text(encoding="utf-8"))


if __name__ == "__main__":
    main()
