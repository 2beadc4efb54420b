"""Markdown report, JSON numbers and PNG plots of one retrieval evaluation.

Files written to the output directory, named after the dataset: ``retrieval_<dataset>.md``,
``retrieval_<dataset>.json``, ``retrieval_<dataset>_recall.png`` (passage recall@K per system) and
``retrieval_<dataset>_spread.png`` (cluster spread vs K).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt

from evals.scoring import SystemScores


@dataclass
class ReportContext:
    """Everything a reader needs to reproduce the numbers."""

    dataset: str
    dataset_description: str
    command: str
    kb_version: str
    kb_root: str
    kb_counts: dict[str, Any]
    kb_seconds: float
    kb_built: bool
    settings: dict[str, Any]
    questions_total: int
    questions_scored: int
    questions_skipped: list[str]
    hint_misses: int
    clusters: int
    ks: list[int]
    pool_seconds: float
    notes: list[str] = field(default_factory=list)
    sections: list[str] = field(default_factory=list)


def _fmt(value: float) -> str:
    return f"{value:.3f}"


def _table(headers: Sequence[str], rows: Sequence[Sequence[str]]) -> list[str]:
    lines = ["| " + " | ".join(headers) + " |", "|" + "|".join(" --- " for _ in headers) + "|"]
    lines += ["| " + " | ".join(row) + " |" for row in rows]
    return lines


def metric_table(scores: Sequence[SystemScores], level: str, metric: str, ks: Sequence[int]) -> list[str]:
    headers = ["system", *(f"@{k}" for k in ks)]
    rows = [[s.system, *(_fmt(s.means[level].get(f"{metric}@{k}", 0.0)) for k in ks)] for s in scores]
    return _table(headers, rows)


def summary_table(scores: Sequence[SystemScores], ks: Sequence[int]) -> list[str]:
    k10 = 10 if 10 in ks else ks[-1]
    headers = [
        "system",
        f"recall@{k10}",
        f"success@{k10}",
        f"nDCG@{k10}",
        "MRR",
        f"doc recall@{k10}",
        f"spread@{ks[-1]}",
        "returned",
        "empty",
        "p50 ms",
        "errors",
    ]
    rows = [
        [
            s.system,
            _fmt(s.means["passage"].get(f"recall@{k10}", 0.0)),
            _fmt(s.means["passage"].get(f"success@{k10}", 0.0)),
            _fmt(s.means["passage"].get(f"ndcg@{k10}", 0.0)),
            _fmt(s.means["passage"].get("mrr", 0.0)),
            _fmt(s.means["document"].get(f"recall@{k10}", 0.0)),
            f"{s.spread.get(ks[-1], 0.0):.1f}",
            f"{s.mean_returned:.1f}",
            str(s.empty_results),
            f"{s.latency_p50_ms:.0f}",
            str(s.errors),
        ]
        for s in scores
    ]
    return _table(headers, rows)


def render_markdown(context: ReportContext, scores: Sequence[SystemScores], plots: Sequence[str]) -> str:
    ks = context.ks
    lines = [
        f"# Retrieval evaluation — {context.dataset}",
        "",
        f"{context.dataset_description}.",
        "",
        f"Command: `{context.command}`",
        "",
        "## Setup",
        "",
        f"* KB version `{context.kb_version}` at `{context.kb_root}` "
        f"({'built now' if context.kb_built else 'opened from cache'} in {context.kb_seconds:.1f} s); "
        f"counts: {', '.join(f'{k} {v:,}' for k, v in context.kb_counts.items())}.",
        f"* Questions: {context.questions_scored} scored of {context.questions_total}"
        + (
            f"; skipped (no gold document in this KB): {', '.join(context.questions_skipped)}"
            if context.questions_skipped
            else ""
        )
        + ".",
        f"* K = {', '.join(map(str, ks))} evidence units retrieved. Spread: k-means with "
        f"k = {context.clusters} over all evidence vectors (seed 002 §4.2). Pool load + cluster setup: "
        f"{context.pool_seconds:.1f} s.",
        f"* Settings: {', '.join(f'{k}={v}' for k, v in context.settings.items())}.",
    ]
    if context.hint_misses:
        lines.append(
            f"* {context.hint_misses} passage hint(s) straddled a chunk boundary: whole document used."
        )
    lines += [f"* {note}" for note in context.notes]
    lines += [
        "",
        "Levels: **passage** = the unit a reader cites (a snippet for BioASQ/PubMedQA, a paragraph for "
        "MedQuAD); **document** = the article (PMID) or QA pair. precision@K counts distinct units among "
        "the top-K evidence (evals/metrics/retrieval.py).",
        "",
        "## Summary",
        "",
        *summary_table(scores, ks),
        "",
    ]
    for level in ("passage", "document"):
        for metric in ("recall", "precision", "success", "ndcg"):
            lines += [f"## {level.capitalize()} {metric}@K", "", *metric_table(scores, level, metric, ks), ""]
    lines += ["## Cluster spread@K", ""]
    lines += _table(
        ["system", *(f"@{k}" for k in ks)], [[s.system, *(f"{s.spread[k]:.1f}" for k in ks)] for s in scores]
    )
    lines += ["", *context.sections]
    lines += ["## Systems", ""]
    lines += _table(
        ["system", "what it does", "setup s", "mean ms/question"],
        [[s.system, s.description, f"{s.setup_s:.1f}", f"{s.latency_mean_ms:.0f}"] for s in scores],
    )
    lines += ["", "## Plots", "", *(f"![{p}]({p})" for p in plots), ""]
    return "\n".join(lines)


def plot_curves(
    scores: Sequence[SystemScores], ks: Sequence[int], path: Path, title: str, spread: bool = False
) -> None:
    figure, axis = plt.subplots(figsize=(10, 5.5))
    colours = plt.get_cmap("tab20")
    for index, s in enumerate(scores):
        values = (
            [s.spread[k] for k in ks] if spread else [s.means["passage"].get(f"recall@{k}", 0.0) for k in ks]
        )
        style = "-" if s.system.startswith("evigraph") else "--"
        axis.plot(
            ks,
            values,
            style,
            marker="o",
            label=s.system,
            linewidth=1.4,
            markersize=3,
            color=colours(index % 20),
        )
    axis.set_xscale("log")
    axis.set_xticks(list(ks))
    axis.set_xticklabels([str(k) for k in ks])
    axis.set_xlabel("K (evidence units retrieved)")
    axis.set_ylabel("clusters touched" if spread else "passage recall@K")
    axis.set_title(title)
    axis.grid(True, alpha=0.3)
    axis.legend(fontsize=7, loc="center left", bbox_to_anchor=(1.01, 0.5))
    figure.tight_layout()
    figure.savefig(path, dpi=110)
    plt.close(figure)


def write_report(out_dir: Path, context: ReportContext, scores: Sequence[SystemScores]) -> Path:
    """Write the markdown, JSON and plots; return the markdown path."""
    out_dir.mkdir(parents=True, exist_ok=True)
    stem = f"retrieval_{context.dataset}"
    recall_png, spread_png = f"{stem}_recall.png", f"{stem}_spread.png"
    plot_curves(scores, context.ks, out_dir / recall_png, f"{context.dataset}: passage recall@K")
    plot_curves(scores, context.ks, out_dir / spread_png, f"{context.dataset}: cluster spread@K", spread=True)
    (out_dir / f"{stem}.json").write_text(
        json.dumps({"context": asdict(context), "systems": [asdict(s) for s in scores]}, indent=1),
        encoding="utf-8",
    )
    path = out_dir / f"{stem}.md"
    path.write_text(render_markdown(context, scores, [recall_png, spread_png]), encoding="utf-8")
    return path
