"""Benchmark the two embedding backends of all-MiniLM-L6-v2 on real medical text; prints a markdown table.

Why: this decides the default backend. Speed and memory matter for a CLI that loads the model on every
start; agreement matters because the int8 ONNX export must rank evidence like the fp32 reference.

Each backend runs in its own fresh subprocess (``--worker``) so that load time includes the imports
(torch's are the big cost), and the peak RSS (VmHWM) is that backend's alone. Workers alternate
(onnx, st, onnx, st, ...) so that noise from other load on the machine hits both alike; timings are
medians over ``--repeats`` runs. Quality numbers are computed once from vectors the workers save.

    python -m evals.bench_embedders --n 1000 --repeats 3
"""

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

from graphs.model.settings import Settings

DATA = Settings().shared_data_dir  # EVIGRAPH_SHARED_DATA_DIR, like every other command
MEDQUAD = DATA / "corpus" / "medquad_answered.jsonl"
BIOASQ_EVAL = DATA / "eval" / "bioasq_taskb_golden_7b_10b.jsonl"
BIOASQ_SNIPPETS = DATA / "corpus" / "bioasq_snippets.jsonl"
BACKENDS = ("onnx", "sentence-transformers")
PASSAGE_WORDS = 120
LATENCY_QUERIES = 100
RETRIEVAL_QUESTIONS = 200
TOP_K = 10


def _read_jsonl(path: Path) -> list[dict[str, Any]]:
    with path.open(encoding="utf-8") as lines:
        return [json.loads(line) for line in lines if line.strip()]


def build_workload(passage_count: int) -> dict[str, Any]:
    """Real passages (first ~120 words of MedQuAD answers, spread evenly over the whole corpus so every
    source is represented), real short queries (BioASQ questions) and the retrieval task."""
    answers = [record["answer"] for record in _read_jsonl(MEDQUAD) if record.get("answer")]
    stride = max(1, len(answers) // passage_count)
    passages = [" ".join(answer.split()[:PASSAGE_WORDS]) for answer in answers[::stride][:passage_count]]
    snippet_text = {record["id"]: record["text"] for record in _read_jsonl(BIOASQ_SNIPPETS)}
    questions = [
        record
        for record in _read_jsonl(BIOASQ_EVAL)
        if any(snippet_id in snippet_text for snippet_id in record.get("gold_snippet_ids", []))
    ]
    retrieval_questions = questions[:RETRIEVAL_QUESTIONS]
    pooled_ids = sorted(
        {sid for record in retrieval_questions for sid in record["gold_snippet_ids"] if sid in snippet_text}
    )
    return {
        "passages": passages,
        "latency_queries": [record["question"] for record in questions[-LATENCY_QUERIES:]],
        "questions": [record["question"] for record in retrieval_questions],
        "gold": [record["gold_snippet_ids"] for record in retrieval_questions],
        "snippet_ids": pooled_ids,
        "snippets": [snippet_text[sid] for sid in pooled_ids],
    }


def _rss_kib(field: str) -> int:
    """VmRSS / VmHWM from /proc (Linux); ru_maxrss is the same peak where /proc is missing."""
    status = Path("/proc/self/status")
    if status.exists():
        for line in status.read_text().splitlines():
            if line.startswith(f"{field}:"):
                return int(line.split()[1])
    return int(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)


def run_worker(backend: str, workload_path: Path, out_dir: Path, save_vectors: bool) -> dict[str, Any]:
    """Measure one backend in this (fresh) process."""
    workload = json.loads(workload_path.read_text(encoding="utf-8"))
    baseline_kib = _rss_kib("VmRSS")
    started = time.perf_counter()
    from graphs.vectors.embedding import get_embedder

    embedder = get_embedder(backend)
    load_s = time.perf_counter() - started
    first_started = time.perf_counter()
    embedder.embed_one("warm-up query")
    first_query_s = time.perf_counter() - first_started

    passages = workload["passages"]
    load_average = os.getloadavg()[0]
    started, cpu_started = time.perf_counter(), time.process_time()
    passage_vectors = embedder.embed(passages, batch_size=64)
    throughput = len(passages) / (time.perf_counter() - started)
    cpu_throughput = len(passages) / (time.process_time() - cpu_started)

    latencies = []
    for query in workload["latency_queries"]:
        started = time.perf_counter()
        embedder.embed_one(query)
        latencies.append(time.perf_counter() - started)

    if save_vectors:
        np.save(out_dir / f"{backend}-passages.npy", passage_vectors)
        np.save(out_dir / f"{backend}-questions.npy", embedder.embed(workload["questions"]))
        np.save(out_dir / f"{backend}-snippets.npy", embedder.embed(workload["snippets"]))
    return {
        "backend": backend,
        "name": embedder.name,
        "load_s": load_s,
        "first_query_s": first_query_s,
        "passages_per_s": throughput,
        "passages_per_cpu_s": cpu_throughput,
        "load_average": load_average,
        "query_p50_ms": 1000 * statistics.median(latencies),
        "peak_rss_delta_mib": (_rss_kib("VmHWM") - baseline_kib) / 1024,
    }


def _spawn_worker(backend: str, workload_path: Path, out_dir: Path, save_vectors: bool) -> dict[str, Any]:
    command = [sys.executable, "-m", "evals.bench_embedders", "--worker", backend]
    command += ["--workload", str(workload_path), "--out", str(out_dir)]
    if save_vectors:
        command.append("--save-vectors")
    project_root = Path(__file__).resolve().parents[1]
    completed = subprocess.run(command, cwd=project_root, capture_output=True, text=True, check=False)
    if completed.returncode != 0:
        raise RuntimeError(f"worker {backend} failed:\n{completed.stderr[-3000:]}")
    result: dict[str, Any] = json.loads(completed.stdout.strip().splitlines()[-1])
    return result


def retrieval_scores(
    question_vectors: np.ndarray, snippet_vectors: np.ndarray, workload: dict[str, Any]
) -> Any:
    """Snippet recall@10 per question (gold found in top 10 / gold count) and the top-10 id lists."""
    similarities = question_vectors @ snippet_vectors.T
    top = np.argsort(-similarities, axis=1, kind="stable")[:, :TOP_K]
    ids = workload["snippet_ids"]
    recalls, top_lists = [], []
    for row, gold in zip(top, workload["gold"], strict=True):
        retrieved = {ids[index] for index in row}
        findable = set(gold) & set(ids)
        recalls.append(len(retrieved & findable) / len(findable))
        top_lists.append(retrieved)
    return float(np.mean(recalls)), top_lists


def quality(out_dir: Path, workload: dict[str, Any]) -> dict[str, float]:
    onnx_name, st_name = BACKENDS
    passages_a = np.load(out_dir / f"{onnx_name}-passages.npy")
    passages_b = np.load(out_dir / f"{st_name}-passages.npy")
    questions_a = np.load(out_dir / f"{onnx_name}-questions.npy")
    questions_b = np.load(out_dir / f"{st_name}-questions.npy")
    cosines = np.concatenate([(passages_a * passages_b).sum(axis=1), (questions_a * questions_b).sum(axis=1)])
    recall_a, top_a = retrieval_scores(questions_a, np.load(out_dir / f"{onnx_name}-snippets.npy"), workload)
    recall_b, top_b = retrieval_scores(questions_b, np.load(out_dir / f"{st_name}-snippets.npy"), workload)
    overlap = float(np.mean([len(a & b) / TOP_K for a, b in zip(top_a, top_b, strict=True)]))
    return {
        "cos_mean": float(cosines.mean()),
        "cos_min": float(cosines.min()),
        "cos_passages_mean": float((passages_a * passages_b).sum(axis=1).mean()),
        "recall_onnx": recall_a,
        "recall_st": recall_b,
        "top10_overlap": overlap,
    }


def render(runs: dict[str, list[dict[str, Any]]], scores: dict[str, float], workload: dict[str, Any]) -> str:
    def median(backend: str, key: str) -> float:
        return statistics.median(run[key] for run in runs[backend])

    repeats = len(runs[BACKENDS[0]])
    lines = [
        f"Embedding backends — all-MiniLM-L6-v2; medians of {repeats} runs, one fresh process per run; "
        f"{os.cpu_count()} CPU cores; 1-min load average at the runs' start: "
        f"{statistics.median(run['load_average'] for backend in BACKENDS for run in runs[backend]):.1f}",
        "",
        "| metric | onnx (int8) | sentence-transformers (fp32) |",
        "| --- | --- | --- |",
        f"| name | `{runs['onnx'][0]['name']}` | `{runs['sentence-transformers'][0]['name']}` |",
    ]
    rows = [
        ("load s (imports + model)", "load_s", "{:.2f}"),
        ("first query s (after load)", "first_query_s", "{:.3f}"),
        (
            f"passages/s ({len(workload['passages'])} x ≤{PASSAGE_WORDS} words, batch 64)",
            "passages_per_s",
            "{:.0f}",
        ),
        (
            "passages per CPU-second (all threads; less sensitive to other load)",
            "passages_per_cpu_s",
            "{:.1f}",
        ),
        (f"single short query p50 ms ({LATENCY_QUERIES} BioASQ questions)", "query_p50_ms", "{:.1f}"),
        ("peak RSS delta MiB", "peak_rss_delta_mib", "{:.0f}"),
    ]
    for label, key, fmt in rows:
        values = [fmt.format(median(backend, key)) for backend in BACKENDS]
        lines.append(f"| {label} | {values[0]} | {values[1]} |")
    question_count, snippet_count = len(workload["questions"]), len(workload["snippets"])
    lines += [
        f"| snippet recall@{TOP_K} ({question_count} BioASQ questions, {snippet_count} pooled gold snippets) "
        f"| {scores['recall_onnx']:.3f} | {scores['recall_st']:.3f} |",
        "",
        "| agreement onnx vs sentence-transformers | value |",
        "| --- | --- |",
        f"| cosine, same text: mean (passages + questions) | {scores['cos_mean']:.4f} |",
        f"| cosine, same text: min | {scores['cos_min']:.4f} |",
        f"| cosine, passages only: mean | {scores['cos_passages_mean']:.4f} |",
        f"| top-{TOP_K} overlap (mean fraction shared) | {scores['top10_overlap']:.3f} |",
        "",
        "runs (load s / passages/s / p50 ms / peak MiB): "
        + "; ".join(
            f"{backend}: "
            + ", ".join(
                f"{run['load_s']:.2f}/{run['passages_per_s']:.0f}/{run['query_p50_ms']:.1f}/"
                f"{run['peak_rss_delta_mib']:.0f}"
                for run in runs[backend]
            )
            for backend in BACKENDS
        ),
    ]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--n", type=int, default=1000, help="number of passages for the throughput run")
    parser.add_argument("--repeats", type=int, default=3, help="fresh-process runs per backend")
    parser.add_argument("--worker", choices=BACKENDS, help=argparse.SUPPRESS)
    parser.add_argument("--workload", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--out", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--save-vectors", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)

    if args.worker:
        result = run_worker(args.worker, args.workload, args.out, args.save_vectors)
        print(json.dumps(result))
        return

    workload = build_workload(args.n)
    with tempfile.TemporaryDirectory(prefix="bench-embedders-") as scratch:
        out_dir = Path(scratch)
        workload_path = out_dir / "workload.json"
        workload_path.write_text(json.dumps(workload), encoding="utf-8")
        runs: dict[str, list[dict[str, Any]]] = {backend: [] for backend in BACKENDS}
        for repeat in range(args.repeats):
            for backend in BACKENDS:
                runs[backend].append(_spawn_worker(backend, workload_path, out_dir, save_vectors=repeat == 0))
        scores = quality(out_dir, workload)
    print(render(runs, scores, workload))


if __name__ == "__main__":
    main()
