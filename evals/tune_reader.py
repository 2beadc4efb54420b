"""Choose how evidence_rank uses the evidence reader (tools/reader_rerank.py) on the dev sets only.

  python -m evals.tune_reader [--datasets bioasq-dev,medquad-consumer,pubmedqa] [--out evals/reports]

Grid: the number of fused candidates the reader reads (``READER_K``) × the reader's share of the reranked
relevance (``READER_WEIGHT``; 0 = the ranking without the reader). Graph candidates are computed once per
question and the reader's probability once per (question, passage), so the grid costs one reading of the
largest K. Objective as for the fusion constants: mean over the dev sets of (recall@10 + success@1) / 2.
``bioasq-test`` and ``bioasq-full`` are never read here (tools/evidence_rank's held-out targets).
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from collections.abc import Sequence
from pathlib import Path

import numpy as np

import tools.reader_rerank as rerank
from evals.baselines.evigraph import EviGraphConfig
from evals.kb_cache import REPO
from evals.tune_fusion import DEV_SETS, DevSet
from graphs.model.settings import Settings
from tools.evidence_rank import DEFAULT_METHODS

KS = (10, 20, 30, 50)
WEIGHTS = (0.0, 0.3, 0.5, 0.7, 0.85, 1.0)


class MemoReader:
    """The KB's reader with its probabilities remembered per (question, passage)."""

    def __init__(self, inner: object) -> None:
        self.inner = inner
        self.memo: dict[tuple[str, str], float] = {}

    def probabilities(self, question: str, passages: Sequence[str]) -> np.ndarray:
        todo = [p for p in dict.fromkeys(passages) if (question, p) not in self.memo]
        if todo:
            fresh = self.inner.probabilities(question, todo)  # type: ignore[attr-defined]
            self.memo.update({(question, p): float(v) for p, v in zip(todo, fresh, strict=True)})
        return np.array([self.memo[question, p] for p in passages], dtype=np.float32)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--datasets", default=",".join(DEV_SETS))
    parser.add_argument("--out", type=Path, default=REPO / "evals" / "reports")
    args = parser.parse_args(argv)
    settings = Settings()
    started = time.perf_counter()
    sets = [DevSet(name, settings) for name in args.datasets.split(",") if name]
    for dev in sets:
        reader = dev.kb.reader
        if reader is None:
            raise SystemExit(dev.kb.reader_warning or "no evidence reader")
        dev.kb._reader = MemoReader(reader)  # type: ignore[assignment]
        dev.system.config = EviGraphConfig(methods=(*DEFAULT_METHODS, "reader"))
    rows: list[tuple[int, float, dict[str, dict[str, float]]]] = []
    for k in sorted(KS, reverse=True):
        for weight in WEIGHTS:
            if weight == 0.0 and k != max(KS):
                continue
            rerank.READER_K, rerank.READER_WEIGHT = k, weight
            scores = {s.name: s.score() for s in sets}
            rows.append((k, weight, scores))
            sys.stderr.write(
                f"K {k} w {weight}: "
                + "  ".join(
                    f"{n} r@10 {v['recall@10']:.3f} s@1 {v['success@1']:.3f}" for n, v in scores.items()
                )
                + "\n"
            )

    def objective(row: tuple[int, float, dict[str, dict[str, float]]]) -> float:
        return float(np.mean([(v["recall@10"] + v["success@1"]) / 2 for v in row[2].values()]))

    best = max(rows, key=lambda r: (round(objective(r), 4), -r[0]))
    names = [s.name for s in sets]
    lines = [
        "# Evidence reader in evidence_rank: K and weight chosen on the dev sets (tools/reader_rerank.py)",
        "",
        f"Command: `python -m evals.tune_reader --datasets {','.join(names)}`. Objective: mean over the dev "
        "sets of (recall@10 + success@1) / 2; twins count as one slot; weight 0 is the ranking without the "
        "reader. bioasq-test and bioasq-full were not read.",
        "",
        f"Chosen: READER_K {best[0]}, READER_WEIGHT {best[1]} (objective {objective(best):.4f}; without the "
        f"reader {objective(next(r for r in rows if r[1] == 0.0)):.4f}). Load average at the end: "
        f"{os.getloadavg()[0]:.1f}; {time.perf_counter() - started:.0f} s.",
        "",
        "| K | weight | " + " | ".join(f"{n} r@10 | {n} s@1" for n in names) + " | objective |",
        "| " + " | ".join(["---"] * (3 + 2 * len(names))) + " |",
    ]
    for row in rows:
        cells = [str(row[0]), f"{row[1]:.2f}"]
        for n in names:
            cells += [f"{row[2][n]['recall@10']:.3f}", f"{row[2][n]['success@1']:.3f}"]
        mark = " **chosen**" if row is best else ""
        lines.append("| " + " | ".join(cells) + f" | {objective(row):.4f} |{mark}")
    path = args.out / "reader_dev.md"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    sys.stderr.write(f"chosen K {best[0]} weight {best[1]}; wrote {path}\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
