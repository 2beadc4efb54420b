"""Throughput and memory of the real-format importers, and ``kb add`` of 1,000 PubMed records into the
default KB (issue 21's targets: records/s and peak memory per format on a stress file; ``kb add`` of 1,000
PubMed records ≤ 60 s; no crash on a 50 MB record).

    python -m evals.bench_importers [--runs 3] [--work DIR] [--max-load 1.5] [--out FILE.md]

Loader only: each run reads one stress file through its detected loader in a fresh Python process
(evals/importer_stress.py ``probe``): detection, then every document streamed out of the loader — no
chunking, linking or embedding. Records are what the file holds (articles, labels, files), documents what the
loader yields (a label gives one per section). Peak memory is the growth of the process's peak resident set
(``VmHWM``, i.e. ``ru_maxrss`` of the process's own memory; why not ``ru_maxrss`` itself: importer_stress.py)
from after the imports and detection to the end of the read. Median of ``--runs``.

Files (written by evals/importer_stress.py with ``full=True``, records shaped like real ones): PubMed XML of
100,000 articles; openFDA drug labels, 20,000, as an API/bulk download (``{"results": [...]}``) and as JSON
Lines; DailyMed SPL, one label per file as DailyMed ships them, so a folder of 2,000 SPL files read as
``kb add FOLDER`` reads it (the folder loader detects each file's format); a folder of 10,000 notes,
Markdown and HTML in turn.

``kb add``: the default KB is built once (``evigraph kb build --kb-dir DIR``, timed), copied before every
run, and ``evigraph kb add pubmed_1000.xml --kb-dir COPY`` timed as a subprocess (wall clock, Python start
included: what a user waits), with its peak resident memory. One 50 MB record of each kind — an openFDA
label whose adverse reactions are 50 MB, a PubMed article whose abstract is 50 MB, each beside one normal
record — is read by the loader (timed, peak memory) and given to ``kb add`` once.

Load: the machine has 2 cores shared with other jobs. Before starting, the script waits until the 1-minute
load average is below ``--max-load`` (polled every 30 s, at most 20 minutes), and it records the load
average (1, 5, 15 min) before and after every timed run, next to the timing in the report.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from datetime import datetime
from pathlib import Path
from typing import Any

from evals.bench_common import publish
from evals.importer_stress import (
    REPO,
    probe,
    write_openfda,
    write_pubmed,
    write_spl_folder,
    write_text_folder,
)
from graphs.building.incremental import MAX_DOCUMENT_CHARS
from graphs.disk.layout import current_build, dir_size

BIG_CHARS = 50_000_000
KB_ADD_TARGET_S = 60.0
STAGE = re.compile(r"^(.+?) ━+ \d+/\d+ (\d+:\d\d:\d\d)$")
"""A finished stage of the progress bar (evigraph kb …): its name and elapsed time."""
MB = 1e6
KB_ADD = """
import atexit, runpy, sys
def peak(path):
    with open(path, "w") as out:
        out.write(next((l.split()[1] for l in open("/proc/self/status") if l.startswith("VmHWM:")), "0"))
atexit.register(peak, sys.argv[1])
sys.argv = ["evigraph", *sys.argv[2:]]
runpy.run_module("agent.frontends.cli", run_name="__main__")
"""
"""``evigraph …`` in this Python, writing its peak resident memory (kB) to argv[1] as it exits."""


def loadavg() -> list[float]:
    return [round(x, 2) for x in os.getloadavg()]


def wait_for_quiet(max_load: float, poll_s: float = 30, limit_s: float = 1200) -> dict[str, Any]:
    """Wait until the 1-minute load average is below ``max_load`` (or ``limit_s`` has passed)."""
    started = time.monotonic()
    while os.getloadavg()[0] >= max_load and time.monotonic() - started < limit_s:
        print(f"load {loadavg()} ≥ {max_load}: waiting", file=sys.stderr, flush=True)
        time.sleep(poll_s)
    quiet = os.getloadavg()[0] < max_load
    return {"waited_s": round(time.monotonic() - started), "load": loadavg(), "below_threshold": quiet}


def with_load(run: Callable[[], dict[str, Any]]) -> dict[str, Any]:
    before = loadavg()
    result = run()
    return {**result, "load_before": before, "load_after": loadavg()}


def size_of(path: Path) -> int:
    return dir_size(path) if path.is_dir() else path.stat().st_size


def stress_files(work: Path, scale: float = 1.0) -> dict[str, dict[str, Any]]:
    """name → {path, records} of every stress file, written under ``work`` (generation time recorded);
    ``scale`` < 1 makes them smaller (a quick check of the script itself)."""
    articles, labels, spls, notes = (max(2, int(n * scale)) for n in (100_000, 20_000, 2_000, 10_000))
    specs: dict[str, tuple[Callable[[Path], Path], str, int]] = {
        "pubmed XML": (lambda p: write_pubmed(p, articles, full=True), "pubmed.xml", articles),
        "openFDA JSON": (lambda p: write_openfda(p, labels, full=True), "drug-label.json", labels),
        "openFDA JSONL": (
            lambda p: write_openfda(p, labels, full=True, lines=True),
            "drug-label.jsonl",
            labels,
        ),
        "DailyMed SPL folder": (lambda p: write_spl_folder(p, spls), "spl_labels", spls),
        "folder (Markdown + HTML)": (lambda p: write_text_folder(p, notes), "notes", notes),
    }
    files: dict[str, dict[str, Any]] = {}
    for name, (write, filename, records) in specs.items():
        started = time.perf_counter()
        path = write(work / filename)
        seconds = time.perf_counter() - started
        files[name] = {"path": path, "records": records, "bytes": size_of(path), "write_s": round(seconds, 1)}
        print(f"wrote {name}: {files[name]['bytes'] / MB:.0f} MB in {seconds:.0f} s", file=sys.stderr)
    return files


def loader_runs(path: Path, records: int, runs: int) -> dict[str, Any]:
    size = size_of(path)
    out = []
    for _ in range(runs):
        r = with_load(lambda: probe(path))
        seconds = r["detect_seconds"] + r["seconds"]
        r["records_per_s"] = round(records / seconds, 1)
        r["documents_per_s"] = round(r["documents"] / seconds, 1)
        r["mb_per_s"] = round(size / MB / seconds, 2)
        r["rss_growth_mb"] = round((r["rss_peak"] - r["rss_before"]) / MB, 1)
        out.append(r)
        print(
            f"  {path.name}: {seconds:.1f} s, +{r['rss_growth_mb']} MB, load {r['load_before']}",
            file=sys.stderr,
        )
    median = {
        k: statistics.median(r[k] for r in out)
        for k in ("seconds", "records_per_s", "documents_per_s", "mb_per_s", "rss_growth_mb")
    }
    median["rss_peak_mb"] = round(statistics.median(r["rss_peak"] for r in out) / MB, 1)
    return {"path": path.name, "bytes": size, "records": records, "runs": out, "median": median}


def cli(args: list[str], env: dict[str, str], timeout: float = 3600) -> dict[str, Any]:
    """``evigraph ARGS`` in a subprocess: wall seconds, exit code, peak RSS (MB), stderr's last lines."""
    with tempfile.NamedTemporaryFile(suffix=".peak") as peak:
        started = time.perf_counter()
        run = subprocess.run(
            [sys.executable, "-c", KB_ADD, peak.name, *args],
            capture_output=True,
            text=True,
            cwd=REPO,
            env=env,
            timeout=timeout,
            check=False,
        )
        seconds = time.perf_counter() - started
        kb = Path(peak.name).read_text().strip() or "0"
    lines = [" ".join(line.split()) for line in run.stderr.splitlines() if line.strip()]
    stages = [STAGE.match(line) for line in lines]
    return {
        "seconds": round(seconds, 2),
        "exit": run.returncode,
        "rss_peak_mb": round(int(kb) * 1024 / MB, 1),
        "stages": {m[1]: _seconds(m[2]) for m in stages if m},
        "output": [line for line, m in zip(lines, stages, strict=True) if not m][-6:],
    }


def _seconds(clock: str) -> int:
    h, m, s = (int(x) for x in clock.split(":"))
    return 3600 * h + 60 * m + s


def slowest(stages: dict[str, int], n: int = 3) -> str:
    top = sorted(stages.items(), key=lambda kv: -kv[1])[:n]
    return ", ".join(f"{name} {s} s" for name, s in top)


def kb_add(default_kb: Path, path: Path, env: dict[str, str], work: Path) -> dict[str, Any]:
    copy = work / "kb-copy"
    shutil.rmtree(copy, ignore_errors=True)
    shutil.copytree(default_kb, copy, symlinks=True)
    try:
        result = with_load(lambda: cli(["kb", "add", str(path), "--kb-dir", str(copy)], env))
    finally:
        shutil.rmtree(copy, ignore_errors=True)
    print(f"  kb add {path.name}: {result['seconds']} s, exit {result['exit']}", file=sys.stderr)
    return result


def fmt_load(run: dict[str, Any]) -> str:
    return f"{run['load_before'][0]:.2f}→{run['load_after'][0]:.2f}"


def report(data: dict[str, Any]) -> str:
    lines = [
        "# Importers: throughput, memory and `kb add` (evals/bench_importers.py)",
        "",
        f"Run {data['date']} on {data['machine']}. Load average (1, 5, 15 min) at the start "
        f"{data['start']['load']} after waiting {data['start']['waited_s']} s for it to fall below "
        f"{data['max_load']}; each timing below is shown with the 1-minute load average before→after its "
        "run.",
        "",
        f"## Loader only (fresh process per run, median of {data['runs']})",
        "",
        "| format | file | records | documents | records/s | documents/s | MB/s | peak RSS growth | "
        "peak RSS | load per run |",
        "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |",
    ]
    for name, r in data["loaders"].items():
        m = r["median"]
        lines.append(
            f"| {name} | `{r['path']}` {r['bytes'] / MB:.0f} MB | {r['records']:,} | "
            f"{r['runs'][0]['documents']:,} | {m['records_per_s']:,.0f} | {m['documents_per_s']:,.0f} | "
            f"{m['mb_per_s']:.1f} | {m['rss_growth_mb']:.1f} MB | {m['rss_peak_mb']:.0f} MB | "
            + ", ".join(fmt_load(x) for x in r["runs"])
            + " |"
        )
    build, add = data["default_kb"], data["kb_add"]
    lines += [
        "",
        f"## `kb add` of {add['records']:,} PubMed records into the default KB (target for 1,000: ≤ "
        f"{KB_ADD_TARGET_S:.0f} s)",
        "",
        f"Default KB built once by `evigraph kb build --kb-dir DIR`: {build['seconds']:.0f} s (load "
        f"{fmt_load(build)}), {build['size_mb']:.0f} MB. The file: `{add['path']}`, "
        f"{add['bytes'] / MB:.1f} MB. Median {add['median_s']:.1f} s: "
        f"{'within' if add['median_s'] <= KB_ADD_TARGET_S else 'over'} the target.",
        "",
        "| run | seconds | peak RSS | exit | load | slowest stages (progress bar) | what it printed |",
        "| --- | --- | --- | --- | --- | --- | --- |",
    ]
    for n, run in enumerate(add["runs"], start=1):
        said = "; ".join(run["output"][-1:])
        lines.append(
            f"| {n} | {run['seconds']:.1f} | {run['rss_peak_mb']:.0f} MB | {run['exit']} | {fmt_load(run)} | "
            f"{slowest(run['stages'])} | {said} |"
        )
    lines += [
        "",
        f"## One {data['big_chars'] / MB:.0f} MB record ({data['big_chars']:,} characters) beside one normal "
        "record",
        "",
        f"Loader: median of {data['runs']}; `kb add`: one run on a fresh copy of the default KB "
        f"(`MAX_DOCUMENT_CHARS` = {MAX_DOCUMENT_CHARS:,}).",
        "",
        "| record | file | load s | peak RSS growth | documents | load | `kb add` s | peak RSS | exit | load "
        "| what `kb add` printed |",
        "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |",
    ]
    for name, r in data["big"].items():
        m, k = r["loader"]["median"], r["kb_add"]
        said = " / ".join(k["output"][-3:]).replace("|", "\\|")
        lines.append(
            f"| {name} | {r['loader']['bytes'] / MB:.0f} MB | {m['seconds']:.1f} | "
            f"{m['rss_growth_mb']:.0f} MB | {r['loader']['runs'][0]['documents']} | "
            + ", ".join(fmt_load(x) for x in r["loader"]["runs"])
            + f" | {k['seconds']:.1f} | {k['rss_peak_mb']:.0f} MB | {k['exit']} | {fmt_load(k)} | {said} |"
        )
    sizes = ", ".join(
        f"{name} {r['bytes'] / r['records'] / 1e3:.1f} kB" for name, r in data["loaders"].items()
    )
    lines += [
        "",
        "Reading the numbers:",
        "",
        f"- The records are synthetic (evals/importer_stress.py), per record: {sizes}. Real openFDA labels "
        "and SPL files are often tens of kB, so compare formats by MB/s, not records/s.",
        "- The load average counts this benchmark's own process: a loader run keeps one core busy, a "
        "`kb add` both (embedding), so the 1-minute figure climbs during a run on this 2-core machine.",
        "- `kb add` seconds are wall clock from Python's start to its exit (imports, KB checks and copy "
        "included); the stages are the progress bar's.",
        "- How it was measured: the docstring of evals/bench_importers.py.",
        "",
    ]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument(
        "--work", type=Path, default=None, help="Where to write the files (default: a temp dir)."
    )
    parser.add_argument("--max-load", type=float, default=1.5)
    parser.add_argument("--scale", type=float, default=1.0, help="< 1: smaller files, to check the script.")
    parser.add_argument("--out", type=Path, default=REPO / "evals" / "reports" / "bench_importers.md")
    args = parser.parse_args(argv)
    work = Path(tempfile.mkdtemp(prefix="bench-importers-", dir=args.work))
    env = {**os.environ, "EVIGRAPH_DATA_DIR": str(work / "data"), "COLUMNS": "1000"}
    try:
        start = wait_for_quiet(args.max_load)
        data: dict[str, Any] = {
            "date": datetime.now().astimezone().isoformat(timespec="seconds"),
            "machine": f"{platform.platform()}, {os.cpu_count()} CPUs, Python {platform.python_version()}",
            "max_load": args.max_load,
            "start": start,
            "runs": args.runs,
            "scale": args.scale,
            "big_chars": int(BIG_CHARS * args.scale),
        }
        files = stress_files(work, args.scale)
        data["loaders"] = {n: loader_runs(f["path"], f["records"], args.runs) for n, f in files.items()}
        for name, f in files.items():
            data["loaders"][name]["write_s"] = f["write_s"]
        kb_root = work / "default-kb"
        build = with_load(lambda: cli(["kb", "build", "--kb-dir", str(kb_root)], env))
        build["size_mb"] = round(dir_size(current_build(kb_root)) / MB, 1)
        data["default_kb"] = build
        pubmed = write_pubmed(work / "pubmed_1000.xml", max(2, int(1000 * args.scale)), full=True)
        big_chars = int(BIG_CHARS * args.scale)
        runs = [kb_add(kb_root, pubmed, env, work) for _ in range(args.runs)]
        data["kb_add"] = {
            "path": pubmed.name,
            "records": max(2, int(1000 * args.scale)),
            "bytes": pubmed.stat().st_size,
            "runs": runs,
            "median_s": statistics.median(r["seconds"] for r in runs),
        }
        big_files = {
            f"openFDA label, {big_chars / MB:.0f} MB adverse reactions": write_openfda(
                work / "big_label.json", 2, full=True, big_chars=big_chars
            ),
            f"PubMed article, {big_chars / MB:.0f} MB abstract": write_pubmed(
                work / "big_article.xml", 2, full=True, big_abstract_chars=big_chars
            ),
        }
        data["big"] = {
            name: {"loader": loader_runs(path, 2, args.runs), "kb_add": kb_add(kb_root, path, env, work)}
            for name, path in big_files.items()
        }
        data["end_load"] = loadavg()
    finally:
        shutil.rmtree(work, ignore_errors=True)
    publish(report(data), args.out)
    args.out.with_suffix(".json").write_text(json.dumps(data, indent=1, default=str) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
