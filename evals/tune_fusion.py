"""Choose evidence_rank's fusion constants (tools/fusion.py) on the dev sets only.

  python -m evals.tune_fusion [--datasets bioasq-dev,medquad-consumer,pubmedqa] [--out evals/reports]

Graph candidates (ner_link → walk → path evidence) are computed once per question; every grid point then
reruns evidence_rank alone with the fusion constants set, and is scored with the harness's metrics (twins
as one slot). The search is coordinate-wise (fragment gate, then BM25 base weight, slope over query
rarity, question-index weight) to keep it to a few minutes on a shared 2-core machine. The objective is
the mean over the dev sets of (recall@10 + success@1) / 2: recall for the reader's evidence, success@1
because the first passage is what a clinician reads first. ``bioasq-test`` and ``bioasq-full`` are never
read here.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from collections.abc import Sequence
from pathlib import Path

import numpy as np

import tools.fusion as fusion
from evals.baselines.base import EvidencePool
from evals.baselines.evigraph import EviGraphConfig, EviGraphRetriever
from evals.kb_cache import DEFAULT_CACHE_DIR, REPO, open_task_kb
from evals.scoring import Gold, resolve_gold, run_system, score_run
from graphs.model.settings import Settings

DEV_SETS = ("bioasq-dev", "medquad-consumer", "pubmedqa")
FORBIDDEN = ("bioasq-test", "bioasq-full")
KS = (1, 10)


class Cached(EviGraphRetriever):
    """The default EviGraph retriever with graph candidates remembered per question."""

    memo: dict[str, tuple[list[str], dict[str, float]]]

    def candidates(self, question: str) -> tuple[list[str], dict[str, float]]:
        if question not in self.memo:
            self.memo[question] = super().candidates(question)
        return self.memo[question]


def _say(message: str) -> None:
    sys.stderr.write(message + "\n")
    sys.stderr.flush()


class DevSet:
    def __init__(self, name: str, settings: Settings) -> None:
        from evals.datasets.registry import get_dataset

        if name in FORBIDDEN:
            raise SystemExit(f"{name} is held out: tune on {', '.join(DEV_SETS)}")
        self.name = name
        spec = get_dataset(name)
        self.dataset = spec.load(None)
        recipe = spec.recipe or spec.standin  # medquad-consumer: the default KB's stand-in in the cache
        assert recipe is not None
        self.kb = open_task_kb(recipe(settings), DEFAULT_CACHE_DIR, settings.embedding_backend).kb
        self.pool = EvidencePool(self.kb)
        golds: dict[str, Gold] = {}
        for question in self.dataset.questions:
            gold = resolve_gold(self.dataset, self.pool, question)
            if gold is not None:
                golds[question.id] = gold
        self.golds = golds
        self.questions = [q for q in self.dataset.questions if q.id in golds]
        self.system = Cached(self.kb, "evigraph", "", EviGraphConfig())
        self.system.memo = {}

    def score(self) -> dict[str, float]:
        """Means over ``self.questions`` (all of the set, or one fold of it)."""
        run = run_system(self.system, self.questions, max(KS), 0.0)
        golds = {q.id: self.golds[q.id] for q in self.questions}
        means = score_run(run, self.dataset, self.pool, golds, KS, {}).means["passage"]
        return {"recall@10": means["recall@10"], "success@1": means["success@1"]}


Point = tuple[int, float, float, float, float, float]
"""(MIN_FRAGMENTS, LEXICAL_BASE, LEXICAL_SLOPE, QUESTION_WEIGHT, LEXICAL_WHEN_QUESTIONS,
QUESTION_DENSE_WEIGHT)."""


def _set(point: Point) -> None:
    (
        fusion.MIN_FRAGMENTS,
        fusion.LEXICAL_BASE,
        fusion.LEXICAL_SLOPE,
        fusion.QUESTION_WEIGHT,
        fusion.LEXICAL_WHEN_QUESTIONS,
        fusion.QUESTION_DENSE_WEIGHT,
    ) = point


def evaluate(
    sets: Sequence[DevSet], point: Point, table: list[tuple[Point, dict[str, dict[str, float]]]]
) -> float:
    _set(point)
    scores = {s.name: s.score() for s in sets}
    table.append((point, scores))
    objective = float(np.mean([(v["recall@10"] + v["success@1"]) / 2 for v in scores.values()]))
    _say(
        f"{point}: objective {objective:.4f}  "
        + "  ".join(f"{n} r@10 {v['recall@10']:.3f} s@1 {v['success@1']:.3f}" for n, v in scores.items())
    )
    return objective


def search(sets: Sequence[DevSet]) -> tuple[Point, list[tuple[Point, dict[str, dict[str, float]]]]]:
    table: list[tuple[Point, dict[str, dict[str, float]]]] = []
    seen: dict[Point, float] = {}

    def best_of(points: Sequence[Point]) -> Point:
        for point in points:
            if point not in seen:
                seen[point] = evaluate(sets, point, table)
        return max(points, key=lambda p: (seen[p], -p[1] - p[2] - p[3] - p[5]))

    best: Point = (1, 0.3, 0.0, 0.2, 1.0, 0.0)
    best = best_of([(f, *best[1:]) for f in (1, 2, 99)])
    best = best_of([(best[0], b, *best[2:]) for b in (0.0, 0.1, 0.2, 0.3, 0.4)])
    best = best_of([(*best[:2], s, *best[3:]) for s in (0.0, 0.15, 0.3)])
    best = best_of([(*best[:3], q, *best[4:]) for q in (0.0, 0.1, 0.2, 0.3)])
    best = best_of([(*best[:4], x, best[5]) for x in (1.0, 0.5, 0.0)])
    best = best_of([(*best[:5], d) for d in (0.0, 0.1, 0.2, 0.3, 0.4)])
    best = best_of([(best[0], b, *best[2:]) for b in (max(0.0, best[1] - 0.05), best[1], best[1] + 0.05)])
    return best, table


def render(best: Point, table: list[tuple[Point, dict[str, dict[str, float]]]], names: Sequence[str]) -> str:
    head = (
        "| fragments from | BM25 base | slope | question | BM25 factor when a question matches | "
        "dense question | " + " | ".join(f"{n} r@10 | {n} s@1" for n in names) + " |"
    )
    lines = [
        "# Fusion constants chosen on the dev sets (tools/fusion.py)",
        "",
        "Command: `python -m evals.tune_fusion`. Graph candidates computed once per question; each row "
        "reruns "
        "evidence_rank with the constants set; twins count as one slot. Objective: mean over the dev sets "
        "of (recall@10 + success@1) / 2. bioasq-test and bioasq-full were not read.",
        "",
        f"Chosen: MIN_FRAGMENTS {best[0]}, LEXICAL_BASE {best[1]}, LEXICAL_SLOPE {best[2]}, "
        f"QUESTION_WEIGHT {best[3]}, LEXICAL_WHEN_QUESTIONS {best[4]}, QUESTION_DENSE_WEIGHT {best[5]}. "
        f"Load average during the run: {os.getloadavg()[0]:.1f}.",
        "",
        head,
        "| " + " | ".join(["---"] * (6 + 2 * len(names))) + " |",
    ]
    for point, scores in table:
        cells = [str(point[0]), *(f"{x:.2f}" for x in point[1:])]
        for n in names:
            cells += [f"{scores[n]['recall@10']:.3f}", f"{scores[n]['success@1']:.3f}"]
        mark = " **chosen**" if point == best else ""
        lines.append("| " + " | ".join(cells) + f" |{mark}")
    return "\n".join(lines) + "\n"


DENSE_GRID = (0.0, 0.1, 0.2, 0.3, 0.4)


def cross_validate(dev: DevSet, base: Point) -> str:
    """Two-fold check of the dense question weight on one set: choose on one half, score on the other.

    Why: medquad-consumer is both where the weight is chosen and where its target is measured; a weight
    that only fits the questions it was chosen on would show up here as a drop on the held-out half.
    """
    everything = dev.questions
    folds = [everything[0::2], everything[1::2]]
    scores: dict[tuple[int, float], dict[str, float]] = {}
    for weight in DENSE_GRID:
        _set((*base[:5], weight))
        for n, fold in enumerate(folds):
            dev.questions = fold
            scores[n, weight] = dev.score()
    dev.questions = everything
    _set(base)

    def objective(v: dict[str, float]) -> float:
        return (v["recall@10"] + v["success@1"]) / 2

    lines = [
        f"## Two-fold check on {dev.name} (dense question weight)",
        "",
        "Questions split by position (even / odd); the weight is chosen on one half and scored on the other.",
        "",
        "| held-out half | weight chosen on the other half | held-out r@10 | held-out s@1 | "
        "held-out r@10 at 0 | held-out s@1 at 0 |",
        "| --- | --- | --- | --- | --- | --- |",
    ]
    for held in (0, 1):
        chosen = max(DENSE_GRID, key=lambda w: (objective(scores[1 - held, w]), -w))
        got, zero = scores[held, chosen], scores[held, 0.0]
        lines.append(
            f"| {'even' if held == 0 else 'odd'} ({len(folds[held])}) | {chosen} | {got['recall@10']:.3f} | "
            f"{got['success@1']:.3f} | {zero['recall@10']:.3f} | {zero['success@1']:.3f} |"
        )
    lines += ["", "Every half and weight (r@10 / s@1):", ""]
    lines.append("| weight | even half | odd half |")
    lines.append("| --- | --- | --- |")
    for weight in DENSE_GRID:
        a, b = scores[0, weight], scores[1, weight]
        lines.append(
            f"| {weight} | {a['recall@10']:.3f} / {a['success@1']:.3f} | "
            f"{b['recall@10']:.3f} / {b['success@1']:.3f} |"
        )
    return "\n".join(lines) + "\n"


def _point(text: str) -> Point:
    """'f,base,slope,question,factor[,dense]' (dense 0 when left out, as before it existed)."""
    f, base, slope, question, factor, *dense = (x.strip() for x in text.split(","))
    weight = float(dense[0]) if dense else 0.0
    return (int(f), float(base), float(slope), float(question), float(factor), weight)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--datasets", default=",".join(DEV_SETS))
    parser.add_argument("--out", type=Path, default=REPO / "evals" / "reports")
    parser.add_argument(
        "--points",
        default="",
        help="evaluate only these points instead of the search: 'f,base,slope,question,factor[,dense];…'",
    )
    parser.add_argument(
        "--cv",
        default="",
        help="also check the dense question weight two-fold on this dev set (appended to the report)",
    )
    args = parser.parse_args(argv)
    settings = Settings()
    started = time.perf_counter()
    sets = [DevSet(name, settings) for name in args.datasets.split(",") if name]
    if args.points:
        points = [_point(text) for text in args.points.split(";") if text.strip()]
        table: list[tuple[Point, dict[str, dict[str, float]]]] = []
        objective = {p: evaluate(sets, p, table) for p in points}
        best = max(points, key=lambda p: objective[p])
    else:
        best, table = search(sets)
    path = args.out / f"fusion_dev_{'_'.join(s.name for s in sets)}.md"
    report = render(best, table, [s.name for s in sets])
    for dev in sets:
        if dev.name == args.cv:
            report += "\n" + cross_validate(dev, best)
    path.write_text(report, encoding="utf-8")
    _say(f"chosen {best}; {path} ({time.perf_counter() - started:.0f} s)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
