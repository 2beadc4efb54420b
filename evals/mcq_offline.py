"""Offline MCQ: accuracy and coverage of the gated option pick per dev set, with a calibration/held-out split.

Why: offline, the consult names an exam option only when the evidence separates it by a margin
(:mod:`agent.nodes.mcq`). That margin decides what a clinician is told, so it is chosen on a calibration split
only and reported on a held-out split: coverage (share answered), accuracy among answered with a 95 % Wilson
interval, chance level, and the accuracy of the un-gated pick (always take the top option) for comparison.

Each item goes through the product's own judge (:func:`agent.nodes.mcq.judge_options` on the default KB,
the item written as a user pastes it: stem, then one option a line, so the parser is exercised too); the
judge does its own retrieval, so these are the numbers the offline answer shows. Signals are cached per
item (``--cache``) so that re-running the calibration costs nothing.

Calibration (:mod:`evals.mcq_gate`): for each weighting of the signals in ``WEIGHT_GRID`` and each
threshold on the lead of the top option over the runner-up, the pooled calibration items (all sets) give
coverage and accuracy; the gate kept is the one with the highest coverage whose Wilson 95 % lower bound on
accuracy is at least chance + ``REQUIRED_LIFT`` (0.05) with at least ``MIN_ANSWERED`` (20) answered. When
no gate qualifies, the product must abstain always offline (``MARGIN = inf``), and the report says so
with the numbers.

Splits: ``evals/data/mcq_offline_splits.json`` (fixed; ``--make-splits`` rewrites it): per set, a seeded
random sample of item ids, the first half calibration, the second held-out. Items come from
``Settings().shared_data_dir/eval`` (MedQA-USMLE test, MedMCQA dev, MMLU medical test; see
``../shared/data/PROVENANCE.md`` §2.4–2.6 for sources and licenses — only ids are committed here).

Usage:
  python -m evals.mcq_offline [--n 150] [--out evals/reports/mcq_offline.md]
  python -m evals.mcq_offline --set medqa --split heldout     # one set's numbers with the shipped gate
"""

from __future__ import annotations

import argparse
import json
import os
import random
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from agent.deps import ConsultDeps
from agent.nodes import mcq
from agent.nodes.mcq_parse import parse_mcq
from evals.bench_common import publish
from evals.datasets.answers import MCQ_FILES, load_mcq
from evals.datasets.schema import McqItem
from evals.mcq_gate import (
    MIN_ANSWERED,
    REQUIRED_LIFT,
    WEIGHT_GRID,
    Row,
    calibrate,
    closest_gate,
    gate_stats,
)
from graphs.kb import open_kb
from graphs.model.settings import Settings, load_settings

SPLITS_FILE = Path(__file__).parent / "data" / "mcq_offline_splits.json"
SEED = 10


def question_text(item: McqItem) -> str:
    """The item as a user pastes it: the stem, then one option a line."""
    return item.question.strip() + "\n" + "\n".join(f"{k}. {v}" for k, v in item.options.items())


def make_splits(eval_dir: Path, n: int) -> dict[str, dict[str, list[str]]]:
    splits: dict[str, dict[str, list[str]]] = {}
    for name in MCQ_FILES:
        ids = sorted(item.id for item in load_mcq(name, eval_dir))
        random.Random(f"{SEED}:{name}").shuffle(ids)
        splits[name] = {"calibration": sorted(ids[:n]), "heldout": sorted(ids[n : 2 * n])}
    return splits


def collect(deps: ConsultDeps, items: list[McqItem], cache: Path) -> list[Row]:
    """Signals of every item, from the cache or from the product's judge (appended to the cache)."""
    done: dict[tuple[str, str], Row] = {}
    if cache.exists():
        for line in cache.read_text(encoding="utf-8").splitlines():
            row = Row(**json.loads(line))
            done[(row.set, row.id)] = row
    with cache.open("a", encoding="utf-8") as out:
        for item in items:
            if (item.source, item.id) in done:
                continue
            started = time.perf_counter()
            judged = mcq.judge_options(deps, question_text(item))
            seconds = time.perf_counter() - started
            options = judged.options if judged else []
            row = Row(
                set=item.source,
                id=item.id,
                gold=item.gold[0],
                options=[{"letter": o.letter, "kg": o.kg, "ir": o.ir, "dense": o.dense} for o in options],
                negated=mcq.negated_stem(judged.stem if judged else ""),
                parsed=[o.letter for o in options] == list(item.options),
                product_choice=judged.chosen if judged else None,
                seconds=round(seconds, 4),
            )
            out.write(json.dumps(row.__dict__) + "\n")
            out.flush()
            done[(row.set, row.id)] = row
    rows = [done[(item.source, item.id)] for item in items]
    for row, item in zip(rows, items, strict=True):
        refresh_graph_signals(deps, row, item)
    return rows


def refresh_graph_signals(deps: ConsultDeps, row: Row, item: McqItem) -> None:
    """Recompute the cheap, rule-based parts (negated stem, KG facts) so that a cache of the slow vector
    signals stays valid when those rules change."""
    parsed = parse_mcq(question_text(item))
    row.negated = mcq.negated_stem(parsed.stem)
    scores = [mcq.OptionScore(k, v) for k, v in parsed.options.items()]
    mcq.kg_signals(deps.kb, parsed.stem, scores)
    kg = {s.letter: s.kg for s in scores}
    for option in row.options:
        option["kg"] = kg.get(option["letter"], 0.0)


def _brief(stats: dict[str, Any]) -> str:
    if not stats["answered"]:
        return f"0 of {stats['n']} answered"
    low, high = stats["ci"]
    return (
        f"{stats['answered']} of {stats['n']} answered, accuracy {stats['accuracy']:.3f} "
        f"[{low:.3f}, {high:.3f}] vs chance {stats['chance']:.3f}"
    )


def _fmt(stats: dict[str, Any]) -> str:
    acc = "—" if stats["accuracy"] is None else f"{stats['accuracy']:.3f}"
    low, high = stats["ci"]
    ci = "—" if stats["accuracy"] is None else f"[{low:.3f}, {high:.3f}]"
    ulow, uhigh = stats["ungated_ci"]
    return (
        f"| {stats['n']} | {stats['answered']} | {stats['coverage']:.3f} | {acc} | {ci} | "
        f"{stats['chance']:.3f} | {stats['majority_letter']:.3f} | "
        f"{stats['ungated']:.3f} [{ulow:.3f}, {uhigh:.3f}] | {stats['negated']} |"
    )


HEADER = [
    "| set | split | gate | n | answered | coverage | accuracy among answered | 95 % Wilson CI | chance "
    "| most frequent gold letter | un-gated pick accuracy [95 % CI] | NOT/EXCEPT stems (never answered) |",
    "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |",
]


def render(
    rows: dict[tuple[str, str], list[Row]],
    chosen: tuple[dict[str, float], float] | None,
    load: tuple[tuple[float, ...], tuple[float, ...]],
    kb_version: str,
    calibrated: bool = True,
) -> str:
    calibration = [r for (_, split), rs in rows.items() if split == "calibration" for r in rs]
    lines = [
        "# Offline MCQ: coverage and accuracy of the gated pick (evals/mcq_offline.py)",
        "",
        f"KB `{kb_version}` (default core KB), the offline judge of `agent/nodes/mcq.py` (no LLM). "
        "Load average (1/5/15 min) at start "
        f"{'/'.join(f'{x:.1f}' for x in load[0])}, at end {'/'.join(f'{x:.1f}' for x in load[1])} "
        f"(2 CPUs shared). Items per split: see `n`. Splits: `evals/data/mcq_offline_splits.json` "
        f"(seed {SEED}).",
        "",
        "Calibration rule: the highest-coverage gate (signal weights × lead threshold) whose Wilson 95 % "
        f"lower bound on accuracy among answered is ≥ chance + {REQUIRED_LIFT:.2f}, with ≥ {MIN_ANSWERED} "
        "answered, on the pooled calibration items of all three sets. Weightings tried: "
        + "; ".join(json.dumps(w) for w in WEIGHT_GRID)
        + ".",
        "",
    ]
    if not calibrated:
        lines += ["Not all sets were run, so no gate was calibrated: the table shows the shipped gate.", ""]
        gate_w, gate_m = mcq.WEIGHTS, mcq.MARGIN
    elif chosen is None:
        lines += [
            "**Result: no gate qualifies on calibration, so the product abstains always offline "
            "(`MARGIN = inf` in `agent/nodes/mcq.py`): no option is named, the answer says the evidence "
            "does not decide and shows the per-option evidence.** The table shows the shipped behaviour "
            "(coverage 0) and what the un-gated top option would score.",
            "",
        ]
        gate_w, gate_m = mcq.WEIGHTS, mcq.MARGIN
    else:
        gate_w, gate_m = chosen
        lines += [f"**Gate chosen on calibration:** weights {json.dumps(gate_w)}, margin {gate_m:.4f}.", ""]
    shipped = (gate_w, gate_m) == (mcq.WEIGHTS, mcq.MARGIN)
    lines += [
        f"Shipped in `agent/nodes/mcq.py`: weights {json.dumps(mcq.WEIGHTS)}, margin {mcq.MARGIN}"
        f"{'' if shipped else ' — **differs from the calibrated gate: update the constants**'}.",
        "",
        *HEADER,
    ]
    label = "calibrated" if calibrated and chosen is not None else "shipped"
    pooled = {
        ("all sets", split): [r for (_, sp), rs in rows.items() if sp == split for r in rs]
        for split in sorted({split for _, split in rows})
    }
    for (name, split), rs in [*sorted(rows.items()), *pooled.items()]:
        lines.append(f"| {name} | {split} | {label} " + _fmt(gate_stats(rs, gate_w, gate_m)))
    lines += [
        "",
        f"The un-gated column takes the top option under the gate's weights {json.dumps(gate_w)} for every "
        "item (ties credited 1/t): what showing the top option as an answer would score.",
        "",
        "Each signal alone, un-gated (top option by that signal; ties credited 1/t), and how often the KG "
        "fires (some option has a KG fact of the asked kind):",
        "",
        "| set | split | kg | ir | dense | items where the KG fires |",
        "| --- | --- | --- | --- | --- | --- |",
    ]
    for (name, split), rs in sorted(rows.items()):
        alone = {
            k: gate_stats(rs, {"kg": 0.0, "ir": 0.0, "dense": 0.0, k: 1.0}, float("inf"))["ungated"]
            for k in ("kg", "ir", "dense")
        }
        fires = sum(any(o["kg"] for o in r.options) for r in rs)
        lines.append(
            f"| {name} | {split} | {alone['kg']:.3f} | {alone['ir']:.3f} | {alone['dense']:.3f} | {fires} |"
        )
    near = closest_gate(calibration)
    if near is not None:
        weights, margin, stats = near
        lines += [
            "",
            f"Closest gate on calibration (highest Wilson lower bound, ≥ {MIN_ANSWERED} answered; qualifying "
            f"or not): weights {json.dumps(weights)}, margin {margin:.4f} — calibration "
            + _brief(stats)
            + "; the same gate on the held-out items: "
            + _brief(
                gate_stats([r for (_, sp), rs in rows.items() if sp == "heldout" for r in rs], *near[:2])
            )
            + ".",
        ]
    lines += [
        "",
        "Median judge seconds per item (timed when the item was first scored into the cache, on the shared "
        "2-core machine; the load then is not this run's): "
        + ", ".join(
            f"{name}/{split} {sorted(r.seconds for r in rs)[len(rs) // 2]:.2f}"
            for (name, split), rs in sorted(rows.items())
        )
        + ".",
        "",
    ]
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--set", choices=list(MCQ_FILES), action="append", dest="sets")
    parser.add_argument("--split", choices=["calibration", "heldout"], action="append", dest="splits")
    parser.add_argument("--n", type=int, default=150, help="items per split and set (with --make-splits)")
    parser.add_argument("--make-splits", action="store_true", help=f"rewrite {SPLITS_FILE.name}")
    parser.add_argument("--cache", type=Path, default=None, help="per-item signal cache (JSONL)")
    parser.add_argument("--out", type=Path, default=None, help="also write the markdown report here")
    args = parser.parse_args(argv)
    eval_dir = Settings().shared_data_dir / "eval"
    if args.make_splits or not SPLITS_FILE.exists():
        SPLITS_FILE.write_text(json.dumps(make_splits(eval_dir, args.n), indent=1) + "\n", encoding="utf-8")
    splits = json.loads(SPLITS_FILE.read_text(encoding="utf-8"))
    sets, wanted = args.sets or list(MCQ_FILES), args.splits or ["calibration", "heldout"]
    load_start = os.getloadavg()
    settings = load_settings()
    cache = args.cache or settings.data_dir / "mcq_offline_signals.jsonl"
    kb = open_kb(settings)
    started = time.perf_counter()
    rows: dict[tuple[str, str], list[Row]] = {}
    for name in sets:
        items = {item.id: item for item in load_mcq(name, eval_dir)}
        for split in ("calibration", "heldout"):
            if split in wanted or split == "calibration":
                rows[(name, split)] = collect(ConsultDeps(kb), [items[i] for i in splits[name][split]], cache)
    kb_version = kb.version
    kb.close()
    calibration = [r for (_, split), rs in rows.items() if split == "calibration" for r in rs]
    every_set = set(sets) == set(MCQ_FILES)
    chosen = calibrate(calibration) if every_set else None
    rows = {key: rs for key, rs in rows.items() if key[1] in wanted}
    report = render(rows, chosen, (load_start, os.getloadavg()), kb_version, calibrated=every_set)
    publish(report + f"\nWall time {time.perf_counter() - started:.0f} s.\n", args.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
