"""Calibrate the offline sufficiency rule on labelled questions and report precision/recall of "answered".

Why: "answered" is what tells a clinician the evidence covers the question; an off-topic answer labelled
answered is the worst defect the product can have. The rule (agent/nodes/sufficiency_rule.py) has two
thresholds — ``MIN_ANSWERING`` passages about the focus and carrying the asked aspect among the top 8, and
``MIN_RELEVANCE`` for the best of them — chosen here on the calibration half of evals/data/sufficiency.jsonl
(evals/datasets/sufficiency.py) and reported on the held-out half:

* each question runs as a new offline consult on the default KB; the features the rule reads
  (``sufficiency_features``) are recorded from the turn's final evidence, with the agent's own status;
* the sweep picks, among the threshold pairs whose calibration precision of "answered" is ≥ ``TARGET_P``
  and whose out-of-KB insufficient share is ≥ ``TARGET_OOK``, the one with the best recall of answerable
  questions (ties: the stricter pair);
* held-out precision, recall and out-of-KB share are reported with Wilson 95 % intervals (scipy).

Caveat, stated in the report: a turn that is insufficient retrieves again (up to 3 rounds), so the final
evidence depends on the thresholds the agent ran with; the features are those of that final evidence.

Usage: python -m evals.sufficiency_calibration [--features FILE] [--reuse] [--out evals/reports/…md]
"""

from __future__ import annotations

import argparse
import json
import os
import time
from collections import defaultdict
from collections.abc import Callable
from pathlib import Path
from typing import Any

from langgraph.checkpoint.memory import InMemorySaver
from scipy.stats import binomtest

from agent.consult import Consultant
from agent.deps import ConsultDeps
from agent.nodes import sufficiency_rule
from agent.sessions import thread_config
from evals.datasets.sufficiency import OUT as DATASET
from graphs.model.settings import load_settings

REPORTS = Path(__file__).resolve().parent / "reports"
FEATURES = REPORTS / "sufficiency_features.jsonl"
TARGET_P = 0.95
TARGET_OOK = 0.90
GRID_ANSWERING = (1, 2, 3, 4)
GRID_RELEVANCE = tuple(round(0.40 + 0.05 * i, 2) for i in range(9))


def collect(out: Path) -> list[dict[str, Any]]:
    """Run every question as a new offline consult; one feature row per question (written as we go)."""
    questions = [json.loads(line) for line in DATASET.read_text(encoding="utf-8").splitlines() if line]
    consultant = Consultant(load_settings(), use_llm=False, checkpointer=InMemorySaver())
    deps = ConsultDeps(consultant.kb)
    rows: list[dict[str, Any]] = []
    with out.open("w", encoding="utf-8") as handle:
        for q in questions:
            result = consultant.ask(q["question"])
            state = consultant.graph.get_state(thread_config(result.consult_id)).values  # type: ignore[arg-type]
            row = {
                **q,
                **sufficiency_rule.sufficiency_features(deps, state),
                "status": result.answer.get("status"),
                "seconds": result.seconds,
                "ran_with": [sufficiency_rule.MIN_ANSWERING, sufficiency_rule.MIN_RELEVANCE],
            }
            rows.append(row)
            handle.write(json.dumps(row) + "\n")
            handle.flush()
    return rows


def wilson(k: int, n: int) -> tuple[float, float]:
    if n == 0:
        return (0.0, 1.0)
    ci = binomtest(k, n).proportion_ci(confidence_level=0.95, method="wilson")
    return (float(ci.low), float(ci.high))


def rates(rows: list[dict[str, Any]], decide: Callable[[dict[str, Any]], bool]) -> dict[str, Any]:
    """Counts and rates of any "answered" decision over labelled ``rows`` (also evals/reader_sufficiency)."""
    answered = [r for r in rows if decide(r)]
    tp = sum(1 for r in answered if r["answerable"])
    pos = sum(1 for r in rows if r["answerable"])
    neg = [r for r in rows if not r["answerable"]]
    ook = sum(1 for r in neg if not decide(r))
    return {
        "answered": len(answered),
        "tp": tp,
        "precision": tp / len(answered) if answered else 1.0,
        "recall": tp / pos if pos else 0.0,
        "pos": pos,
        "neg": len(neg),
        "ook": ook,
        "ook_share": ook / len(neg) if neg else 1.0,
    }


def scores(rows: list[dict[str, Any]], min_answering: int, min_relevance: float) -> dict[str, Any]:
    """Counts and rates of the rule at these thresholds over ``rows``."""
    return rates(rows, lambda r: sufficiency_rule.decide(r, min_answering, min_relevance))


def choose(rows: list[dict[str, Any]]) -> tuple[int, float, dict[str, Any]]:
    """Best-recall thresholds meeting both targets on ``rows`` (else the most precise pair)."""
    grid = [(a, r, scores(rows, a, r)) for a in GRID_ANSWERING for r in GRID_RELEVANCE]
    ok = [g for g in grid if g[2]["precision"] >= TARGET_P and g[2]["ook_share"] >= TARGET_OOK]
    if ok:
        return max(ok, key=lambda g: (g[2]["recall"], g[0], g[1]))
    return max(grid, key=lambda g: (g[2]["precision"], g[2]["recall"]))


def fmt_ci(k: int, n: int) -> str:
    lo, hi = wilson(k, n)
    return f"{k}/{n} = {k / n if n else 0:.3f} [{lo:.3f}, {hi:.3f}]"


def report(rows: list[dict[str, Any]], load: str) -> str:
    cal = [r for r in rows if r["split"] == "calibration"]
    held = [r for r in rows if r["split"] == "held_out"]
    a, rel, cal_s = choose(cal)
    held_s = scores(held, a, rel)
    current = (sufficiency_rule.MIN_ANSWERING, sufficiency_rule.MIN_RELEVANCE)
    ran_with = tuple(rows[0].get("ran_with", current)) if rows else current
    lines = [
        "# Sufficiency calibration (offline rule)",
        "",
        "Generated by `python -m evals.sufficiency_calibration` (evals/sufficiency_calibration.py); labelled "
        "set evals/data/sufficiency.jsonl (evals/datasets/sufficiency.py), default `core` KB, offline.",
        f"Load average when the consults ran: {load}.",
        "",
        f'Targets: precision of "answered" ≥ {TARGET_P}, out-of-KB questions insufficient ≥ {TARGET_OOK}.',
        f"Chosen on the calibration half: **MIN_ANSWERING = {a}, MIN_RELEVANCE = {rel}** "
        f"(the agent ships MIN_ANSWERING = {current[0]}, MIN_RELEVANCE = {current[1]}).",
        "",
        '| split | questions | precision of "answered" [95 % Wilson] | recall of answerable | '
        "out-of-KB insufficient |",
        "| --- | --- | --- | --- | --- |",
    ]
    for name, part, s in (("calibration", cal, cal_s), ("held-out", held, held_s)):
        lines.append(
            f"| {name} | {len(part)} | {fmt_ci(s['tp'], s['answered'])} | {fmt_ci(s['tp'], s['pos'])} | "
            f"{fmt_ci(s['ook'], s['neg'])} |"
        )
    lines += ["", 'Held-out, by kind of question (share ending "answered" at the chosen thresholds):', ""]
    lines += ["| kind | answerable | questions | answered |", "| --- | --- | --- | --- |"]
    kinds: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for r in held:
        kinds[r["kind"]].append(r)
    for kind, part in sorted(kinds.items()):
        k = sum(1 for r in part if sufficiency_rule.decide(r, a, rel))
        lines.append(f"| {kind} | {part[0]['answerable']} | {len(part)} | {fmt_ci(k, len(part))} |")
    agent_answered = [r for r in held if r["status"] == "answered"]
    agent_tp = sum(1 for r in agent_answered if r["answerable"])
    lines += [
        "",
        f"The agent's own status on the held-out half (as run, thresholds {ran_with}): precision of "
        f'"answered" {fmt_ci(agent_tp, len(agent_answered))}, recall '
        f"{fmt_ci(agent_tp, sum(1 for r in held if r['answerable']))}.",
        "",
        "Sweep on the calibration half (precision / recall / out-of-KB insufficient):",
        "",
        "| MIN_ANSWERING \\ MIN_RELEVANCE | " + " | ".join(str(x) for x in GRID_RELEVANCE) + " |",
        "| --- |" + " --- |" * len(GRID_RELEVANCE),
    ]
    for n in GRID_ANSWERING:
        cells = []
        for x in GRID_RELEVANCE:
            s = scores(cal, n, x)
            cells.append(f"{s['precision']:.2f} / {s['recall']:.2f} / {s['ook_share']:.2f}")
        lines.append(f"| {n} | " + " | ".join(cells) + " |")
    wrong = [r for r in held if not r["answerable"] and sufficiency_rule.decide(r, a, rel)]
    if wrong:
        lines += [
            "",
            'Held-out out-of-KB questions still ending "answered" (read them: label noise or defect):',
            "",
        ]
        lines += [f"- {r['kind']}: {r['question']}" for r in wrong]
    lines += [
        "",
        "Caveat: an insufficient turn retrieves again (up to 3 rounds); the features are those of the turn's "
        "final evidence, which depends on the thresholds the agent ran with.",
        f"Median turn time over the run: {sorted(r['seconds'] for r in rows)[len(rows) // 2]:.2f} s.",
    ]
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--features", type=Path, default=FEATURES)
    parser.add_argument("--reuse", action="store_true", help="sweep the recorded features, run nothing")
    parser.add_argument("--out", type=Path, default=REPORTS / "sufficiency_calibration.md")
    args = parser.parse_args(argv)
    load = ", ".join(f"{x:.2f}" for x in os.getloadavg())
    started = time.perf_counter()
    if args.reuse:
        load = "not measured here (--reuse sweeps features recorded by an earlier run)"
        rows = [json.loads(line) for line in args.features.read_text(encoding="utf-8").splitlines() if line]
    else:
        rows = collect(args.features)
    labels = {q["id"]: q for q in map(json.loads, DATASET.read_text(encoding="utf-8").splitlines())}
    for r in rows:  # the labels of the dataset file rule (a question may be relabelled after reading)
        r.update({k: labels[r["id"]][k] for k in ("answerable", "kind", "split")})
    args.out.write_text(report(rows, load), encoding="utf-8")
    print(f"{len(rows)} questions in {time.perf_counter() - started:.0f} s; report {args.out}")


if __name__ == "__main__":
    main()
