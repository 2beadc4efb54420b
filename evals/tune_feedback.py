"""Choose the search query's pseudo-relevance feedback (tools/query_feedback.py) on the dev sets only.

  python -m evals.tune_feedback [--datasets bioasq-dev,bioasq-dev-full,medquad-consumer,pubmedqa]

Grid: the nearest passages the query moves towards (``FEEDBACK_DOCS``; 0 = no feedback) × how far
(``FEEDBACK_WEIGHT``). Objective as for the fusion constants (evals/tune_fusion.py): mean over the dev sets
of (recall@10 + success@1) / 2. ``bioasq-test`` and ``bioasq-full`` are never read here; they are measured
after the choice, by ``python -m evals.run retrieval`` (evals/reports/retrieval_*.md).
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from collections.abc import Sequence
from pathlib import Path

import numpy as np

import tools.query_feedback as feedback
from evals.kb_cache import REPO
from evals.tune_fusion import DevSet
from graphs.model.settings import Settings

DATASETS = ("bioasq-dev", "bioasq-dev-full", "medquad-consumer", "pubmedqa")
GRID = ((0, 0.0), *((d, w) for d in (1, 2, 3, 5) for w in (0.3, 0.5, 0.8)))

Row = tuple[int, float, dict[str, dict[str, float]]]


def objective(row: Row) -> float:
    return float(np.mean([(v["recall@10"] + v["success@1"]) / 2 for v in row[2].values()]))


def report(rows: list[Row], names: list[str], best: Row, seconds: float) -> str:
    load = ", ".join(f"{x:.2f}" for x in os.getloadavg())
    lines = [
        "# Pseudo-relevance feedback for the search query, chosen on the dev sets (tools/query_feedback.py)",
        "",
        f"Command: `python -m evals.tune_feedback --datasets {','.join(names)}`. Objective: mean over the "
        "dev sets of (recall@10 + success@1) / 2; twins count as one slot; docs 0 is the ranking without "
        "feedback. bioasq-test and bioasq-full were not read.",
        "",
        f"Chosen: FEEDBACK_DOCS {best[0]}, FEEDBACK_WEIGHT {best[1]} (objective {objective(best):.4f}; "
        f"without feedback {objective(rows[0]):.4f}). {seconds:.0f} s; load average at the end {load}.",
        "",
        "| docs | weight | " + " | ".join(f"{n} r@10 | {n} s@1" for n in names) + " | objective |",
        "| --- | --- | " + " | ".join("--- | ---" for _ in names) + " | --- |",
    ]
    for row in rows:
        cells = " | ".join(f"{row[2][n]['recall@10']:.3f} | {row[2][n]['success@1']:.3f}" for n in names)
        mark = " **chosen**" if row is best else ""
        lines.append(f"| {row[0]} | {row[1]:.1f} | {cells} | {objective(row):.4f} |{mark}")
    return "\n".join(lines) + "\n"


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--datasets", default=",".join(DATASETS))
    parser.add_argument("--out", type=Path, default=REPO / "evals" / "reports" / "query_feedback.md")
    args = parser.parse_args(argv)
    settings = Settings()
    started = time.perf_counter()
    sets = [DevSet(name, settings) for name in args.datasets.split(",") if name]
    rows: list[Row] = []
    for docs, weight in GRID:
        feedback.FEEDBACK_DOCS, feedback.FEEDBACK_WEIGHT = docs, weight
        scores = {s.name: s.score() for s in sets}
        rows.append((docs, weight, scores))
        sys.stderr.write(
            f"docs {docs} w {weight}: "
            + "  ".join(f"{n} r@10 {v['recall@10']:.3f} s@1 {v['success@1']:.3f}" for n, v in scores.items())
            + "\n"
        )
    best = max(rows, key=lambda r: (round(objective(r), 4), -r[0], -r[1]))
    args.out.write_text(report(rows, [s.name for s in sets], best, time.perf_counter() - started), "utf-8")
    sys.stderr.write(f"report: {args.out}\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
