"""Per-tool latency of the four retrieval tools, and of all four in sequence, on a real KB (no LLM).

Target (TOOLS_CONTRACT.md): on the default KB, warm, 2 cores, all four in sequence p50 <= 150 ms.

Questions are real: BioASQ and MedQA-USMLE question texts from ``Settings().shared_data_dir/eval`` (half
each, spread evenly through the files). Each question runs ner_link → hypergraph_walk (PPR) →
reasoning_chain (BCG shortest paths with evidence, when there are 2+ anchors, as the agent) →
evidence_rank through evals/adapters.py as the ``evigraph`` system and the agent's offline round do; each
call is timed, and the whole sequence (including the glue between tools) is timed around them. A warm-up
pass over a few questions runs first (model load, caches): the numbers are a running process's steady state.

Usage: python -m evals.bench_tools [--kb-root DIR] [--questions 60] [--out evals/reports/bench_tools.md]
Without --kb-root it uses the default KB (Settings().kb_root) when it exists, else builds (or reuses) the
test-slice KB in the eval cache and says so.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import sys
import time
from collections.abc import Sequence
from pathlib import Path

from evals.adapters import find_chains, link_entities, rank_evidence, walk_topics
from evals.baselines.evigraph import MAX_ANCHORS, MAX_CANDIDATES, MAX_SEEDS
from evals.bench_common import percentile, publish
from evals.datasets.registry import DATASETS
from evals.kb_cache import DEFAULT_CACHE_DIR, open_task_kb
from graphs.disk.layout import CURRENT
from graphs.kb import KnowledgeBase
from graphs.model.settings import Settings

TARGET_SEQUENCE_P50_MS = 150.0
TOOLS = ("ner_link", "hypergraph_walk", "reasoning_chain", "evidence_rank")
WARM_UP = (
    "What is the first-line treatment for type 2 diabetes?",
    "Which gene is mutated in cystic fibrosis?",
    "A 62-year-old man presents with crushing chest pain radiating to the left arm and sweating for one "
    "hour. Which drug should be given first?",
)
"""Run before measuring (model load, caches), and none of the measured questions: the KB remembers recent
query vectors (graphs/vectors/query_vectors.py), so a measured question must not have been asked before."""
TOP_K = 12
"""The agent's default number of passages handed to the answer (agent/context.py)."""


def _spread(rows: list[str], n: int) -> list[str]:
    if n >= len(rows):
        return rows
    step = len(rows) / n
    return [rows[int(i * step)] for i in range(n)]


def real_questions(eval_dir: Path, n: int) -> list[tuple[str, str]]:
    """``n`` (source, question text) pairs, half BioASQ and half MedQA-USMLE, evenly spaced in each file."""

    def texts(name: str) -> list[str]:
        with (eval_dir / name).open(encoding="utf-8") as handle:
            return [json.loads(line)["question"] for line in handle if line.strip()]

    half = n // 2
    bioasq = _spread(texts("bioasq_taskb_golden_7b_10b.jsonl"), half)
    medqa = _spread(texts("medqa_usmle_test.jsonl"), n - half)
    return [("BioASQ", q) for q in bioasq] + [("MedQA", q) for q in medqa]


def one_question(kb: KnowledgeBase, question: str) -> dict[str, float]:
    """Milliseconds per tool and for the whole sequence, for one question (the agent's offline round:
    PPR walk from up to 20 seeds, BCG shortest paths with evidence between up to 8 anchors, rank)."""
    times: dict[str, float] = {}
    started = time.perf_counter()
    t = time.perf_counter()
    seeds = link_entities(kb, question).positive[:MAX_SEEDS]
    times["ner_link"] = time.perf_counter() - t
    t = time.perf_counter()
    walk = walk_topics(kb, seeds, mode="ppr")
    times["hypergraph_walk"] = time.perf_counter() - t
    t = time.perf_counter()
    anchors = seeds[:MAX_ANCHORS]
    paths = find_chains(kb, anchors, mode="shortest_path", max_evidence=20) if len(anchors) >= 2 else None
    times["reasoning_chain"] = time.perf_counter() - t
    graph = dict(walk.evidence_scores)
    for evidence_id, rank in paths.path_evidence if paths else []:
        graph[evidence_id] = max(graph.get(evidence_id, 0.0), 1.0 / (1.0 + rank))
    best = sorted(graph, key=lambda i: (-graph[i], i))[:MAX_CANDIDATES]
    t = time.perf_counter()
    rank_evidence(kb, question, best, top_k=TOP_K, graph_scores={i: graph[i] for i in best}, entity_ids=seeds)
    times["evidence_rank"] = time.perf_counter() - t
    times["sequence"] = time.perf_counter() - started
    return {**{k: v * 1000.0 for k, v in times.items()}, "words": float(len(question.split()))}


def render(rows: list[dict[str, float]], sources: list[str], kb: KnowledgeBase, kb_note: str, n: int) -> str:
    lines = [
        "# Retrieval tool latency (evals/bench_tools.py)",
        "",
        f"KB `{kb.version}` ({kb_note}); counts: "
        + ", ".join(f"{k} {v:,}" for k, v in dict(kb.manifest.data.get("counts", {})).items())
        + f". {n} questions (BioASQ + MedQA-USMLE), warm process, no LLM, "
        f"Python {platform.python_version()}, {platform.machine()}, {os.cpu_count()} CPUs, "
        f"load average {os.getloadavg()[0]:.1f} at the end of the run "
        f"(other processes compete for the CPUs when it exceeds the CPU count). evidence_rank: tool default "
        f"methods, top_k {TOP_K}, +50 dense candidates.",
        "",
        "| step | p50 ms | p95 ms | mean ms | target | met |",
        "| --- | --- | --- | --- | --- | --- |",
    ]
    for step in (*TOOLS, "sequence"):
        values = [r[step] for r in rows]
        p50 = percentile(values, 50)
        target = f"p50 ≤ {TARGET_SEQUENCE_P50_MS:.0f}" if step == "sequence" else "—"
        met = ("met" if p50 <= TARGET_SEQUENCE_P50_MS else "NOT met") if step == "sequence" else "—"
        label = "all four in sequence" if step == "sequence" else step
        lines.append(
            f"| {label} | {p50:.1f} | {percentile(values, 95):.1f} "
            f"| {statistics.fmean(values):.1f} | {target} | {met} |"
        )
    lines += [
        "",
        "By question source (MedQA vignettes are long: more candidate terms to embed in ner_link, more "
        "fragments in evidence_rank):",
        "",
        "| source | n | mean words | ner_link p50 | evidence_rank p50 | sequence p50 |",
        "| --- | --- | --- | --- | --- | --- |",
    ]
    for source in sorted(set(sources)):
        picked = [r for r, s in zip(rows, sources, strict=True) if s == source]
        lines.append(
            f"| {source} | {len(picked)} | {statistics.fmean(r['words'] for r in picked):.0f} "
            f"| {percentile([r['ner_link'] for r in picked], 50):.1f} "
            f"| {percentile([r['evidence_rank'] for r in picked], 50):.1f} "
            f"| {percentile([r['sequence'] for r in picked], 50):.1f} |"
        )
    return "\n".join(lines) + "\n"


def open_bench_kb(kb_root: Path | None, settings: Settings) -> tuple[KnowledgeBase, str]:
    if kb_root is not None:
        return KnowledgeBase.open(kb_root), f"--kb-root {kb_root}"
    if (settings.kb_root / CURRENT).exists():
        return KnowledgeBase.open(settings.kb_root), f"default KB at {settings.kb_root}"
    recipe = DATASETS["medquad-consumer-ci"].recipe
    if recipe is None:
        raise RuntimeError("the medquad-consumer-ci dataset lost its KB recipe")
    task = open_task_kb(recipe(settings), DEFAULT_CACHE_DIR, settings.embedding_backend)
    return task.kb, f"NO default KB at {settings.kb_root}: the test-slice KB was used instead ({task.root})"


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--kb-root", type=Path, default=None)
    parser.add_argument("--questions", type=int, default=60)
    parser.add_argument("--repeats", type=int, default=3, help="passes over the questions (median per step)")
    parser.add_argument("--out", type=Path, default=None, help="also write the markdown table here")
    args = parser.parse_args(argv)
    if args.questions < 50:
        parser.error("use at least 50 questions (p95 over fewer is noise)")
    settings = Settings()
    kb, note = open_bench_kb(args.kb_root, settings)
    questions = real_questions(settings.shared_data_dir / "eval", args.questions)
    for question in WARM_UP:
        one_question(kb, question)
    passes: list[list[dict[str, float]]] = []
    for _ in range(max(args.repeats, 1)):
        kb.embedder.forget()  # every pass encodes its questions afresh, as a new question would be
        passes.append([one_question(kb, q) for _, q in questions])
    rows = [
        {step: statistics.median(p[i][step] for p in passes) for step in passes[0][i]}
        for i in range(len(questions))
    ]
    per_pass = [percentile([r["sequence"] for r in p], 50) for p in passes]
    table = render(rows, [s for s, _ in questions], kb, note, len(questions))
    table += (
        f"\nEach number is over the per-question median of {len(passes)} passes (query-vector memory cleared "
        f"before each). All four in sequence, p50 of each pass: "
        f"{', '.join(f'{v:.1f}' for v in per_pass)} ms.\n"
    )
    publish(table, args.out)
    kb.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
