"""Evaluation runner (``evigraph eval …`` runs this module in a subprocess; keep the argv stable).

  python -m evals.run retrieval --dataset DATASET  (python -m evals.run list: bioasq-dev, bioasq-test, …)
                      [--systems all|baselines|bm25,vector,…] [--k 1,5,10,20,50] [--kb-root DIR]
                      [--out evals/reports] [--cache-dir DIR] [--limit N] [--no-diagnose]
  python -m evals.run answers --dataset medqa|medmcqa|mmlu-medical|expertqa|medicationqa
                      [--retrieval none|evigraph] [--kb-root DIR] [--limit N] [--out DIR]
                      [--judge]  (long-form only: key-point coverage + advantage, same LLM as judge)
  python -m evals.run build-kb --dataset NAME [--cache-dir DIR] [--embedding-cache FILE]
      (for medquad-consumer: a stand-in for the default KB, same sources and builder, in the cache)
  python -m evals.run bm25-reference [--out DIR]
  python -m evals.run list

Exit codes: 0 done; 1 bad arguments or missing KB/data; 2 an LLM is needed and none is configured.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import sys
import time
from collections.abc import Sequence
from pathlib import Path

from evals.baselines.base import EvidencePool
from evals.baselines.registry import SYSTEMS, expand, make_system
from evals.datasets.registry import DATASETS, get_dataset
from evals.diagnostics import diagnose, render_diagnosis
from evals.kb_cache import DEFAULT_CACHE_DIR, REPO, open_task_kb
from evals.report import ReportContext, write_report
from evals.scoring import Gold, cluster_map, resolve_gold, run_system, score_run
from graphs.disk.layout import CURRENT, KBError
from graphs.kb import KnowledgeBase
from graphs.model.settings import Settings

DEFAULT_OUT = REPO / "evals" / "reports"
DEFAULT_KS = "1,5,10,20,50"


class UsageError(RuntimeError):
    """A problem the user fixes with another argument or a build step; printed without a traceback."""


def say(message: str) -> None:
    """Progress and results for the person running the command (this is a CLI, not library code)."""
    sys.stderr.write(message + "\n")
    sys.stderr.flush()


class BuildProgress:
    """Prints a KB build's stages and every 10 % of a long stage (builds take minutes on a laptop)."""

    def __init__(self) -> None:
        self.stage = ""
        self.shown = -1

    def __call__(self, stage: str, done: int, total: int) -> None:
        decile = (10 * done) // max(total, 1)
        if stage != self.stage or decile != self.shown:
            self.stage, self.shown = stage, decile
            say(f"  build: {stage} {done:,}/{total:,}")


def parse_ks(text: str) -> list[int]:
    try:
        ks = sorted({int(x) for x in text.split(",") if x.strip()})
    except ValueError as exc:
        raise UsageError(f"--k must be a comma list of integers, got {text!r}") from exc
    if not ks or ks[0] < 1:
        raise UsageError("--k needs positive integers")
    return ks


def open_kb(
    dataset: str, kb_root: Path | None, cache_dir: Path, settings: Settings
) -> tuple[KnowledgeBase, Path, bool, float]:
    """The KB a dataset is evaluated on: ``--kb-root``, else its cached task KB, else the default KB."""
    spec = get_dataset(dataset)
    started = time.perf_counter()
    if kb_root is None and spec.recipe is not None:
        say(f"opening (or building) the {dataset} KB under {cache_dir} …")
        task = open_task_kb(
            spec.recipe(settings), cache_dir, settings.embedding_backend, progress=BuildProgress()
        )
        return task.kb, task.root, task.built, task.seconds
    root = kb_root or settings.kb_root
    try:
        kb = KnowledgeBase.open(root)
    except KBError as exc:
        hint = (
            " Build the default KB with `evigraph kb build`, pass --kb-root, or run the CI subset "
            "(--dataset medquad-consumer-ci) on the test-slice KB."
            if dataset == "medquad-consumer"
            else ""
        )
        raise UsageError(f"{exc}{hint}") from exc
    return kb, root, False, round(time.perf_counter() - started, 2)


def kb_notes(on_default: bool, kb_root: Path | None, kb: KnowledgeBase, settings: Settings) -> list[str]:
    """Say plainly when a dataset meant for the default KB ran on another one."""
    notes: list[str] = []
    if on_default and kb_root is not None:
        built = (settings.kb_root / CURRENT).exists()
        notes.append(
            f"Run on --kb-root, not on the default KB at {settings.kb_root} "
            f"({'which exists' if built else 'which is not built on this machine'})."
        )
    if kb.manifest.data.get("eval_recipe") == "default-core":
        notes.append(
            "This KB is the evaluation stand-in for the default KB: the same sources (MedQuAD core profile, "
            "unified KG, Disease Ontology) and builder, built by "
            "`python -m evals.run build-kb --dataset medquad-consumer`."
        )
    return notes


def cmd_retrieval(args: argparse.Namespace, settings: Settings) -> int:
    ks = parse_ks(args.k)
    names = expand(args.systems)
    spec = get_dataset(args.dataset)
    dataset = spec.load(args.limit)
    kb, root, built, kb_seconds = open_kb(args.dataset, args.kb_root, args.cache_dir, settings)
    started = time.perf_counter()
    pool = EvidencePool(kb)
    kb.embedder.embed(["warm-up"])  # model load is not a per-question cost
    golds: dict[str, Gold] = {}
    skipped: list[str] = []
    for question in dataset.questions:
        gold = resolve_gold(dataset, pool, question)
        if gold is None:
            skipped.append(question.id)
        else:
            golds[question.id] = gold
    if not golds:
        raise UsageError(f"No question of {args.dataset} has a gold document in the KB at {root}.")
    cluster_of, clusters = cluster_map(pool)
    pool_seconds = time.perf_counter() - started
    questions = [q for q in dataset.questions if q.id in golds]
    scores = []
    for name in names:
        kb.embedder.forget()  # query vectors remembered for an earlier system must not speed up this one
        setup_started = time.perf_counter()
        system = make_system(name, kb, pool)
        setup = time.perf_counter() - setup_started
        run = run_system(system, questions, max(ks), setup)
        result = score_run(run, dataset, pool, golds, ks, cluster_of)
        scores.append(result)
        k10 = 10 if 10 in ks else ks[-1]
        say(
            f"{name:24s} recall@{k10} {result.means['passage'].get(f'recall@{k10}', 0):.3f}  "
            f"success@{k10} {result.means['passage'].get(f'success@{k10}', 0):.3f}  "
            f"p50 {result.latency_p50_ms:.0f} ms" + (f"  errors {result.errors}" if result.errors else "")
        )
        for question_id, error in list(run.errors.items())[:3]:
            say(f"  error on {question_id}: {error}")
    context = ReportContext(
        dataset=args.dataset,
        dataset_description=dataset.description,
        command="python -m evals.run " + " ".join(args.argv),
        kb_version=kb.version,
        kb_root=str(root),
        kb_counts=dict(kb.manifest.data.get("counts", {})),
        kb_seconds=kb_seconds,
        kb_built=built,
        settings={
            "embedding_backend": kb.manifest.data.get("embedding_backend", "?"),
            "embedder": kb.manifest.data.get("embedder", "?"),
            "graph_backend": type(kb.store).__name__,
            "llm": "off (offline retrieval)",
            "walk_seed": 0,
            "load_average": f"{os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs",
            "cluster_seed": 2,
        },
        questions_total=len(dataset.questions),
        questions_scored=len(golds),
        questions_skipped=skipped,
        hint_misses=sum(g.hint_misses for g in golds.values()),
        clusters=clusters,
        ks=ks,
        pool_seconds=round(pool_seconds, 1),
    )
    context.notes = kb_notes(spec.recipe is None, args.kb_root, kb, settings)
    if args.diagnose:
        say("diagnosing where gold evidence is lost along the graph pipeline …")
        context.sections = render_diagnosis(diagnose(dataset, pool, golds))
    path = write_report(args.out, context, scores)
    say(f"report: {path}")
    kb.close()
    return 0


def cmd_answers(args: argparse.Namespace, settings: Settings) -> int:
    from evals.answers import LongFormResult, McqResult, evaluate_long_form, evaluate_mcq, openai_ask
    from evals.datasets.answers import LONG_FORM_FILES, MCQ_FILES, load_long_form, load_mcq

    if args.dataset not in MCQ_FILES and args.dataset not in LONG_FORM_FILES:
        raise UsageError(
            f"unknown answer dataset {args.dataset!r}; known: {', '.join([*MCQ_FILES, *LONG_FORM_FILES])}"
        )
    if args.judge and args.dataset not in LONG_FORM_FILES:
        raise UsageError(
            f"--judge scores long-form answers ({', '.join(LONG_FORM_FILES)}); {args.dataset} is multiple "
            "choice and is scored by EM / PCR without a judge"
        )
    if not settings.llm_configured:
        say(
            "Answer-level evaluation needs an LLM and none is configured, so nothing was run. Set "
            "EVIGRAPH_LLM_BASE_URL and/or OPENAI_API_KEY (see README), then run this command again. "
            "Retrieval evaluation (`python -m evals.run retrieval …`) needs no LLM."
        )
        return 2
    eval_dir = settings.shared_data_dir / "eval"
    retrieve = None
    kb = None
    if args.retrieval == "evigraph":
        kb = KnowledgeBase.open(args.kb_root or settings.kb_root)
        # The passages the product would hand its LLM: folded near-duplicates stay folded.
        system = make_system("evigraph-strict-ids", kb, EvidencePool(kb))
        records = kb.store

        def retrieve(question: str) -> list[str]:
            ids = system.retrieve(question, args.evidence_k)
            found = records.get_evidence(ids)
            return [found[i].text for i in ids if i in found]

    ask = openai_ask(settings)
    if args.dataset in MCQ_FILES:
        result: McqResult | LongFormResult = evaluate_mcq(
            load_mcq(args.dataset, eval_dir, args.limit), ask, retrieve
        )
    else:
        items = load_long_form(args.dataset, eval_dir, args.limit)
        result = evaluate_long_form(items, ask, retrieve, judge=ask if args.judge else None)
    args.out.mkdir(parents=True, exist_ok=True)
    path = args.out / f"answers_{args.dataset}_{args.retrieval}.json"
    payload: dict[str, object] = {
        "dataset": args.dataset,
        "retrieval": args.retrieval,
        "model": settings.llm_model,
        **dataclasses.asdict(result),
    }
    if args.judge:
        payload["judge"] = judge_note(settings, args.retrieval)
    path.write_text(json.dumps(payload, indent=1), encoding="utf-8")
    say(json.dumps(payload))
    if kb is not None:
        kb.close()
    return 0


def judge_note(settings: Settings, retrieval: str) -> dict[str, str]:
    """What judged the answers, said in the output: a model judging its own answers may favour them."""
    note = {
        "model": settings.llm_model,
        "note": "the same configured LLM that wrote the answers judged them (self-judging; no separate "
        "judge model). Key points are extracted from each reference by the judge (EbmKG eq. 11); the "
        "advantage (eq. 12-13) compares the answer with EviGraph evidence against the same model without "
        "evidence, judged in both answer orders (a win or loss only when both orders agree).",
    }
    if retrieval == "none":
        note["advantage"] = "not computed: --retrieval none has no evidence-grounded answer to compare"
    return note


def cmd_build_kb(args: argparse.Namespace, settings: Settings) -> int:
    spec = get_dataset(args.dataset)
    recipe = spec.recipe or spec.standin
    if recipe is None:
        raise UsageError(f"{args.dataset} runs on the default KB: build it with `evigraph kb build`.")
    if spec.recipe is None:
        say(
            f"{args.dataset} runs on the default KB; building a stand-in from the same sources into the cache"
        )
    task = open_task_kb(
        recipe(settings), args.cache_dir, settings.embedding_backend, args.embedding_cache, BuildProgress()
    )
    say(f"{'built' if task.built else 'cached'}: {task.root} ({task.kb.version}) in {task.seconds:.1f} s")
    task.kb.close()
    return 0


def cmd_bm25_reference(args: argparse.Namespace, settings: Settings) -> int:
    from evals.reference import full_pool_bm25

    dev_ids = [q.id for q in get_dataset("bioasq-dev").load(None).questions]
    rows = {
        "all 7b–10b questions": full_pool_bm25(settings.shared_data_dir),
        "bioasq-dev questions": full_pool_bm25(settings.shared_data_dir, dev_ids),
    }
    lines = [
        "# BM25 on the full BioASQ snippet pool (PROVENANCE §4 check)",
        "",
        "Command: `python -m evals.run bm25-reference`. bm25s, k1 1.2, b 0.75, lower-cased alphanumeric "
        "tokens minus a small stop list, raw snippet text. Reference (7b–11b, 2,310 questions): success@1 "
        "0.75, @10 0.91, @100 0.98; snippet recall@10 0.63, @100 0.89.",
        "",
        "| questions | n | pool | success@1 | success@10 | success@100 | recall@10 | recall@100 | MRR |",
        "| --- | --- | --- | --- | --- | --- | --- | --- | --- |",
    ]
    for label, r in rows.items():
        lines.append(
            f"| {label} | {r['questions']:.0f} | {r['pool']:,.0f} | {r['success@1']:.3f} | "
            f"{r['success@10']:.3f} | "
            f"{r['success@100']:.3f} | {r['recall@10']:.3f} | {r['recall@100']:.3f} | {r['mrr']:.3f} |"
        )
    args.out.mkdir(parents=True, exist_ok=True)
    path = args.out / "bm25_reference.md"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    say("\n".join(lines[-3:]))
    say(f"report: {path}")
    return 0


def cmd_list(args: argparse.Namespace, settings: Settings) -> int:
    say("datasets: " + ", ".join(DATASETS))
    say("systems:  " + ", ".join(SYSTEMS))
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m evals.run", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    sub = parser.add_subparsers(dest="command", required=True)
    retrieval = sub.add_parser("retrieval", help="retrieval metrics of every system on one dataset")
    retrieval.add_argument("--dataset", required=True, choices=sorted(DATASETS))
    retrieval.add_argument("--systems", default="all")
    retrieval.add_argument("--k", default=DEFAULT_KS)
    retrieval.add_argument("--kb-root", type=Path, default=None)
    retrieval.add_argument("--out", type=Path, default=DEFAULT_OUT)
    retrieval.add_argument("--cache-dir", type=Path, default=DEFAULT_CACHE_DIR)
    retrieval.add_argument("--limit", type=int, default=None)
    retrieval.add_argument("--diagnose", action=argparse.BooleanOptionalAction, default=True)
    answers = sub.add_parser("answers", help="answer-level metrics (needs an LLM)")
    answers.add_argument("--dataset", required=True)
    answers.add_argument("--retrieval", choices=("none", "evigraph"), default="evigraph")
    answers.add_argument("--evidence-k", type=int, default=5)
    answers.add_argument("--kb-root", type=Path, default=None)
    answers.add_argument("--limit", type=int, default=100)
    answers.add_argument("--out", type=Path, default=DEFAULT_OUT)
    answers.add_argument(
        "--judge",
        action="store_true",
        help="long-form sets: also key-point coverage and advantage score, judged by the configured LLM",
    )
    build = sub.add_parser("build-kb", help="build (or find) a dataset's cached KB")
    build.add_argument("--dataset", required=True, choices=sorted(DATASETS))
    build.add_argument("--cache-dir", type=Path, default=DEFAULT_CACHE_DIR)
    build.add_argument("--embedding-cache", type=Path, default=None)
    reference = sub.add_parser("bm25-reference", help="BM25 on the full BioASQ pool (no KB)")
    reference.add_argument("--out", type=Path, default=DEFAULT_OUT)
    sub.add_parser("list", help="datasets and systems")
    return parser


COMMANDS = {
    "retrieval": cmd_retrieval,
    "answers": cmd_answers,
    "build-kb": cmd_build_kb,
    "bm25-reference": cmd_bm25_reference,
    "list": cmd_list,
}


def main(argv: Sequence[str] | None = None) -> int:
    raw = list(sys.argv[1:] if argv is None else argv)
    args = build_parser().parse_args(raw)
    args.argv = raw
    try:
        return COMMANDS[args.command](args, Settings())
    except (UsageError, ValueError) as exc:
        say(f"error: {exc}")
        return 1


if __name__ == "__main__":
    sys.exit(main())
