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
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np

import tools.evidence_rank as evidence_rank
import tools.reader_rerank as rerank
from evals.baselines.evigraph import EviGraphConfig
from evals.kb_cache import REPO
from evals.tune_fusion import DEV_SETS, DevSet
from graphs.model.settings import Settings
from graphs.vectors.reader import get_reader
from tools.evidence_rank import DEFAULT_METHODS
from tools.evidence_scoring import ScoreBreakdown

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


def skip_when_questions(read: Callable[..., int]) -> Callable[..., int]:
    """``read`` (tools/reader_rerank.py), except that nothing is read when one of the ``READER_K`` best
    candidates matched the question index (BM25 or dense): the reader sees a passage without the question
    its document answers, which that index already matched (evals/reports/passage_reranker.md)."""

    def gated(
        reader: object, question: str, breakdowns: list[ScoreBreakdown], ids: list[str], *rest: object
    ) -> int:
        top = sorted(range(len(ids)), key=lambda i: (-breakdowns[i].relevance, ids[i]))[: rerank.READER_K]
        if any((breakdowns[i].question or 0) > 0 or (breakdowns[i].question_match or 0) > 0 for i in top):
            return 0
        return read(reader, question, breakdowns, ids, *rest)

    return gated


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--datasets", default=",".join(DEV_SETS))
    parser.add_argument("--out", type=Path, default=REPO / "evals" / "reports")
    parser.add_argument(
        "--model-dir",
        type=Path,
        default=None,
        help="read with this model (e.g. data/reranker), not the reader",
    )
    parser.add_argument("--name", default="reader_dev", help="the report's file name, without .md")
    parser.add_argument(
        "--skip-when-questions",
        action="store_true",
        help="do not read when a read candidate matched by the question index (a gate, measured only)",
    )
    args = parser.parse_args(argv)
    if args.skip_when_questions:
        evidence_rank.rerank_with_reader = skip_when_questions(rerank.rerank_with_reader)
    settings = Settings()
    started = time.perf_counter()
    sets = [DevSet(name, settings) for name in args.datasets.split(",") if name]
    for dev in sets:
        reader = dev.kb.reader if args.model_dir is None else get_reader(args.model_dir)
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
        f"Command: `python -m evals.tune_reader --datasets {','.join(names)}"
        + (f" --model-dir {args.model_dir} --name {args.name}" if args.model_dir else "")
        + (" --skip-when-questions" if args.skip_when_questions else "")
        + "`. Objective: mean over the dev "
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
    path = args.out / f"{args.name}.md"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    sys.stderr.write(f"chosen K {best[0]} weight {best[1]}; wrote {path}\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
