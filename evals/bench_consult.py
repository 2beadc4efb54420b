"""Offline end-to-end consult turn latency on real questions, in a warm process.

Why: the turn is what a person waits for — every node of the consult graph (NER/linking, walks, chains,
evidence rank, sufficiency rounds, extractive answer, citations, the SQLite checkpoint after each step), not
only the retrieval tools (evals/bench_tools.py). Target: p50 ≤ 1 s per turn, warm, offline (no LLM).

Questions: a fixed, evenly spread selection of BioASQ and MedQA-USMLE question texts from
``Settings().shared_data_dir/eval`` (half each; ``evals.bench_tools.real_questions``). One ``Consultant``
(no LLM) answers one warm-up question that is not counted, then each question as a NEW consult. The
checkpoint goes to a temp data dir (``Settings(data_dir=tmp, kb_dir=<kb root>)``).

Without --kb-root it uses the default KB at ``load_settings().kb_root`` when one exists, else builds the
default core KB into a temp dir first (as evals/bench_kb.py does, in a child process so that this
process's peak RSS is the consult's alone).

Usage: python -m evals.bench_consult [--kb-root DIR] [--n 50] [--out evals/reports/bench_consult.md]
"""

from __future__ import annotations

import argparse
import os
import platform
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from agent.consult import Consultant, TurnResult
from evals.bench_common import percentile, publish
from evals.bench_kb import REPO_ROOT
from evals.bench_tools import real_questions
from graphs.disk.layout import CURRENT
from graphs.model.settings import Settings, load_settings

TARGET_P50_S = 1.0
WARM_UP_QUESTION = "What is the first-line treatment for type 2 diabetes?"
BUILD_IN_CHILD = (
    "import sys; from pathlib import Path; from evals.bench_kb import fresh_build; "
    "fresh_build(Path(sys.argv[1]), 'core')"
)


@dataclass
class Turn:
    source: str
    seconds: float
    rounds: int
    status: str
    llm_calls: int
    task: str


def to_turn(source: str, result: TurnResult) -> Turn:
    """The measured facts of one turn; rounds = sufficiency checks in the trace (one per retrieval round)."""
    return Turn(
        source=source,
        seconds=result.seconds,
        rounds=sum(1 for step in result.trace if step.get("step") == "sufficiency"),
        status=str(result.answer.get("status", "?")),
        llm_calls=result.llm_calls,
        task=str(result.answer.get("task", "?")),
    )


def resolve_kb_root(kb_root: Path | None, scratch: Path) -> tuple[Path, str]:
    """The KB to consult and how it was chosen (built into ``scratch`` when there is no default KB)."""
    if kb_root is not None:
        return kb_root, f"--kb-root {kb_root}"
    default = load_settings().kb_root
    if (default / CURRENT).exists():
        return default, f"default KB at {default}"
    data_dir = scratch / "built"
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join(filter(None, [str(REPO_ROOT), os.environ.get("PYTHONPATH")])),
    }
    started = time.perf_counter()
    subprocess.run([sys.executable, "-c", BUILD_IN_CHILD, str(data_dir)], check=True, cwd=REPO_ROOT, env=env)
    return data_dir / "kb", (
        f"no default KB at {default}: the default core KB was built into a temp dir first "
        f"({time.perf_counter() - started:.0f} s)"
    )


def render(
    turns: list[Turn],
    kb_version: str,
    kb_note: str,
    startup_s: float,
    warm_up_s: float,
    load_start: tuple[float, float, float],
    peak_rss_mb: float,
) -> str:
    seconds = [t.seconds for t in turns]
    p50 = percentile(seconds, 50)
    statuses = Counter(t.status for t in turns)
    rounds = Counter(t.rounds for t in turns)
    load_end = os.getloadavg()
    lines = [
        "# Consult turn latency, offline (evals/bench_consult.py)",
        "",
        f"KB `{kb_version}` ({kb_note}). {len(turns)} questions (BioASQ + MedQA-USMLE, fixed selection), "
        "each a new consult, one warm `Consultant` without LLM, SQLite checkpoint in a temp data dir. "
        f"Python {platform.python_version()}, {platform.machine()}, {os.cpu_count()} CPUs. Load average "
        f"(1/5/15 min) at start {'/'.join(f'{x:.1f}' for x in load_start)}, at end "
        f"{'/'.join(f'{x:.1f}' for x in load_end)} (other processes compete for the CPUs when it exceeds "
        "the CPU count).",
        "",
        f"Consultant start-up (open KB, graph, checkpointer): {startup_s:.2f} s; warm-up turn (not counted, "
        f"loads the dictionary and the embedding model): {warm_up_s:.2f} s.",
        "",
        "| measure | value |",
        "| --- | --- |",
        f"| turn seconds p50 | {p50:.3f} |",
        f"| turn seconds p95 | {percentile(seconds, 95):.3f} |",
        f"| turn seconds mean | {statistics.fmean(seconds):.3f} |",
        f"| turn seconds max | {max(seconds):.3f} |",
        f"| rounds per turn, mean (distribution) | {statistics.fmean(t.rounds for t in turns):.2f} "
        f"({', '.join(f'{k}: {v}' for k, v in sorted(rounds.items()))}) |",
        f"| answered | {statuses.get('answered', 0)} "
        f"({100.0 * statuses.get('answered', 0) / len(turns):.0f} %) |",
        f"| insufficient | {statuses.get('insufficient', 0)} "
        f"({100.0 * statuses.get('insufficient', 0) / len(turns):.0f} %) |",
        f"| LLM calls (total) | {sum(t.llm_calls for t in turns)} |",
        f"| peak RSS of the process (ru_maxrss) | {peak_rss_mb:,.0f} MB |",
        f"| target p50 ≤ {TARGET_P50_S:.0f} s warm | **{'met' if p50 <= TARGET_P50_S else 'NOT met'}** |",
        "",
        "By question source:",
        "",
        "| source | n | tasks | p50 s | p95 s | mean rounds | answered |",
        "| --- | --- | --- | --- | --- | --- | --- |",
    ]
    for source in sorted({t.source for t in turns}):
        picked = [t for t in turns if t.source == source]
        tasks = Counter(t.task for t in picked)
        lines.append(
            f"| {source} | {len(picked)} | {', '.join(f'{k} {v}' for k, v in sorted(tasks.items()))} "
            f"| {percentile([t.seconds for t in picked], 50):.3f} "
            f"| {percentile([t.seconds for t in picked], 95):.3f} "
            f"| {statistics.fmean(t.rounds for t in picked):.2f} "
            f"| {sum(t.status == 'answered' for t in picked)}/{len(picked)} |"
        )
    return "\n".join(lines) + "\n"


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--kb-root", type=Path, default=None)
    parser.add_argument("--n", type=int, default=50)
    parser.add_argument("--out", type=Path, default=None, help="also write the markdown report here")
    args = parser.parse_args(argv)
    if args.n < 50:
        parser.error("use at least 50 questions (p95 over fewer is noise)")
    load_start = os.getloadavg()
    questions = real_questions(Settings().shared_data_dir / "eval", args.n)
    with tempfile.TemporaryDirectory(prefix="evigraph-bench-consult-") as tmp:
        kb_root, note = resolve_kb_root(args.kb_root, Path(tmp))
        settings = Settings(data_dir=Path(tmp) / "data", kb_dir=kb_root)
        started = time.perf_counter()
        consultant = Consultant(settings, use_llm=False)
        startup_s = time.perf_counter() - started
        warm_up_s = consultant.ask(WARM_UP_QUESTION).seconds
        turns = [to_turn(source, consultant.ask(question)) for source, question in questions]
        peak_rss_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0
        report = render(turns, consultant.kb.version, note, startup_s, warm_up_s, load_start, peak_rss_mb)
        consultant.kb.close()
    publish(report, args.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
