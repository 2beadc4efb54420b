"""Default-KB build cost, size on disk, and load time for a first question.

Why: a fresh install builds the default KB on its first ``evigraph ask`` and every later process loads it
before it can answer, so both are user-visible waits. Target: loading the default KB for a query (open +
entity dictionary + embedding model + one vector query) ≤ 2 s.

Build: ``build_default_kb`` with a ``Settings`` whose ``data_dir`` is a fresh temp dir, exactly as a first
``evigraph ask`` does (``source_data_dir`` is the repo's ``data/``, which ships the embedding cache).
With ``--kb-root`` the build is skipped and an existing KB is measured; its stage timings are then the ones
recorded in its manifest when it was built.

Load: each repeat runs in a FRESH Python subprocess (nothing imported, nothing cached in the process; the
OS page cache is warm, as it is for a user's second process). It times the imports, (a)
``KnowledgeBase.open`` alone, then (b) the rest of what a first question needs: dictionary matcher, embedder
load, one question embedded and searched against the evidence vectors; and reports its peak RSS.

Usage: python -m evals.bench_kb [--profile core|full] [--kb-root DIR] [--repeats 5]
       [--keep-data-dir DIR] [--out evals/reports/bench_kb.md]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from evals.bench_common import publish
from graphs.building.default_kb import PROFILES, build_default_kb
from graphs.disk.layout import current_build, dir_size, read_manifest
from graphs.model.settings import load_settings

TARGET_LOAD_FOR_QUERY_S = 2.0
REPO_ROOT = Path(__file__).resolve().parent.parent
PROBE_QUESTION = "What is the first-line treatment for type 2 diabetes?"
KB_PARTS = ("kb.sqlite", "adjacency.npz", "matcher.pkl", "vectors")

LOAD_PROBE = """
import json, resource, sys, time
from pathlib import Path
def peak_rss_mb():
    # VmHWM is this process's own high-water mark; ru_maxrss can carry the parent's over a vfork+exec.
    try:
        for line in open("/proc/self/status"):
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024.0
    except OSError:
        return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0  # no /proc: best available
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0
t0 = time.perf_counter()
from graphs.kb import KnowledgeBase
from graphs.disk.layout import current_build, read_manifest, verify_build
t1 = time.perf_counter()
build = current_build(Path(sys.argv[1]))
verify_build(build, read_manifest(build))
t_integrity = time.perf_counter() - t1
t1 = time.perf_counter()
kb = KnowledgeBase.open(Path(sys.argv[1]))
t2 = time.perf_counter()
matcher = kb.matcher
t3 = time.perf_counter()
embedder = kb.embedder
t4 = time.perf_counter()
question = sys.argv[2]
mentions = matcher.find(question)
hits = kb.vectors.search("evidence", kb.embed([question])[0], 10)
t5 = time.perf_counter()
kb.close()
print(json.dumps({
    "import": t1 - t0 - t_integrity, "integrity": t_integrity,
    "open": t2 - t1, "matcher": t3 - t2, "embedder": t4 - t3, "query": t5 - t4,
    "for_query": t5 - t1, "mentions": len(mentions), "hits": len(hits),
    "peak_rss_mb": peak_rss_mb(),
    "ru_maxrss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0,
}))
"""
"""Run with ``python -c``: argv[1] the KB root, argv[2] the probe question; prints one JSON line."""


@dataclass
class BuildRun:
    """A fresh build as a first ``evigraph ask`` does it, or None fields when an existing KB is measured."""

    kb_root: Path
    wall_seconds: float | None
    note: str


def fresh_build(data_dir: Path, profile: str) -> BuildRun:
    """Build the default KB into ``data_dir/kb`` exactly as a first ``evigraph ask`` would."""
    settings = load_settings(data_dir=data_dir, kb_dir=data_dir / "kb")
    started = time.perf_counter()
    build_default_kb(settings, profile)
    wall = time.perf_counter() - started
    return BuildRun(settings.kb_root, wall, f"fresh `{profile}` build into a new data dir ({data_dir})")


def probe_load(kb_root: Path) -> dict[str, float]:
    """One fresh-subprocess load measurement (see ``LOAD_PROBE``)."""
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join(filter(None, [str(REPO_ROOT), os.environ.get("PYTHONPATH")])),
    }
    started = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-c", LOAD_PROBE, str(kb_root), PROBE_QUESTION],
        capture_output=True,
        text=True,
        check=False,
        cwd=REPO_ROOT,
        env=env,
    )
    if done.returncode != 0:
        raise RuntimeError(f"load probe failed:\n{done.stderr[-2000:]}")
    row: dict[str, float] = json.loads(done.stdout.strip().splitlines()[-1])
    row["process"] = time.perf_counter() - started
    return row


def probe_verify(kb_root: Path) -> dict[str, float]:
    """One ``evigraph kb verify`` (every byte: SHA-256, SQLite integrity_check, every vector) in a fresh
    subprocess; wall seconds from process start to exit."""
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join(filter(None, [str(REPO_ROOT), os.environ.get("PYTHONPATH")])),
    }
    started = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-m", "agent.frontends.cli", "kb", "verify", "--kb-dir", str(kb_root)],
        capture_output=True,
        text=True,
        check=False,
        cwd=REPO_ROOT,
        env=env,
    )
    if done.returncode != 0:
        raise RuntimeError(f"kb verify failed:\n{done.stderr[-2000:]}")
    return {"verify": time.perf_counter() - started}


def part_sizes(build_dir: Path) -> dict[str, int]:
    """Bytes per top-level file or directory of a build (the named KB parts first)."""
    sizes: dict[str, int] = {}
    for name in KB_PARTS:
        path = build_dir / name
        if path.exists():
            sizes[name] = dir_size(path) if path.is_dir() else path.stat().st_size
    for path in sorted(build_dir.iterdir()):
        if path.name not in sizes:
            sizes[path.name] = dir_size(path) if path.is_dir() else path.stat().st_size
    return sizes


def mb(n_bytes: float) -> str:
    return f"{n_bytes / 1e6:,.1f}"


def median(rows: Sequence[dict[str, float]], key: str) -> float:
    return statistics.median(r[key] for r in rows)


def render(
    run: BuildRun,
    manifest: dict[str, Any],
    sizes: dict[str, int],
    loads: list[dict[str, float]],
    verifies: list[dict[str, float]],
    load_start: tuple[float, float, float],
    load_end: tuple[float, float, float],
) -> str:
    counts: dict[str, int] = dict(manifest.get("counts", {}))
    build_s = float(manifest.get("build_seconds", 0.0)) or 1e-9
    cache = dict(manifest.get("embedding_cache", {}))
    hits, misses = int(cache.get("hits", 0)), int(cache.get("misses", 0))
    for_query = median(loads, "for_query")
    with_imports = statistics.median(r["import"] + r["for_query"] for r in loads)
    lines = [
        "# Default KB: build, size, load (evals/bench_kb.py)",
        "",
        f"KB `{manifest.get('kb_version')}` (profile `{manifest.get('profile', '?')}`; {run.note}). "
        f"Python {platform.python_version()}, {platform.machine()}, {os.cpu_count()} CPUs. Load average "
        f"(1/5/15 min) at start {'/'.join(f'{x:.1f}' for x in load_start)}, at end "
        f"{'/'.join(f'{x:.1f}' for x in load_end)} (other processes compete for the CPUs when it exceeds "
        "the CPU count).",
        "",
        "Counts: " + ", ".join(f"{k} {v:,}" for k, v in counts.items()) + ".",
        "",
        "## Build",
        "",
        "| measure | value |",
        "| --- | --- |",
        f"| build seconds (manifest) | {build_s:.1f} |",
    ]
    if run.wall_seconds is not None:
        lines.append(f"| wall seconds around build_default_kb (incl. core subset) | {run.wall_seconds:.1f} |")
    else:
        lines.append("| wall seconds | — (existing KB: build not run here) |")
    lines += [
        f"| throughput, evidence units (passages) / s | {counts.get('evidence', 0) / build_s:,.0f} |",
        f"| throughput, entities / s | {counts.get('entities', 0) / build_s:,.0f} |",
        f"| embedding cache hits / misses | {hits:,} / {misses:,} "
        f"({100.0 * hits / max(1, hits + misses):.1f} % hits) |",
        "",
        "| stage | seconds | share |",
        "| --- | --- | --- |",
    ]
    timings: dict[str, float] = dict(manifest.get("timings_s", {}))
    for stage, seconds in timings.items():
        lines.append(f"| {stage} | {seconds:.1f} | {100.0 * seconds / build_s:.0f} % |")
    lines += [
        "",
        "## Size on disk",
        "",
        "| part | MB |",
        "| --- | --- |",
        *(f"| {name} | {mb(size)} |" for name, size in sizes.items()),
        f"| **total** | **{mb(sum(sizes.values()))}** |",
        "",
        f"## Load (median of {len(loads)} fresh subprocesses)",
        "",
        "| step | median s | min s | max s |",
        "| --- | --- | --- | --- |",
    ]
    steps = [
        ("import graphs.kb", "import"),
        ("integrity check at open alone (sizes + XXH3 of every file + vector sample)", "integrity"),
        ("(a) KnowledgeBase.open (includes that integrity check)", "open"),
        ("dictionary matcher (kb.matcher)", "matcher"),
        ("embedder load (kb.embedder)", "embedder"),
        ("one question: NER + embed + evidence vector search", "query"),
        ("(b) open + matcher + embedder + query", "for_query"),
        ("whole subprocess, interpreter start to exit", "process"),
        ("`evigraph kb verify` (full check), whole subprocess", "verify"),
    ]
    for label, key in steps:
        values = [r[key] for r in loads if key in r] or [r[key] for r in verifies]
        lines.append(f"| {label} | {statistics.median(values):.3f} | {min(values):.3f} | {max(values):.3f} |")
    met = "met" if for_query <= TARGET_LOAD_FOR_QUERY_S else "NOT met"
    met_imports = "met" if with_imports <= TARGET_LOAD_FOR_QUERY_S else "NOT met"
    lines += [
        "",
        f"Target: loading the default KB for a query ≤ {TARGET_LOAD_FOR_QUERY_S:.0f} s — (b) median "
        f"{for_query:.2f} s: **{met}**; with the imports of graphs.kb ({with_imports:.2f} s): "
        f"**{met_imports}**.",
        f"Peak RSS of the load subprocess (its own VmHWM): median {median(loads, 'peak_rss_mb'):,.0f} MB, "
        f"max {max(r['peak_rss_mb'] for r in loads):,.0f} MB. (Its ru_maxrss, median "
        f"{median(loads, 'ru_maxrss_mb'):,.0f} MB, is not used: Linux carries the parent's high-water mark "
        "into a child started by vfork + exec: after a build here it reports the build's peak.)",
    ]
    return "\n".join(lines) + "\n"


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--profile", choices=PROFILES, default="core")
    parser.add_argument("--kb-root", type=Path, default=None, help="measure this KB; skip the build")
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument(
        "--keep-data-dir",
        type=Path,
        default=None,
        help="build into this (new or empty) data dir and keep it, e.g. for bench_consult --kb-root DIR/kb",
    )
    parser.add_argument("--out", type=Path, default=None, help="also write the markdown report here")
    args = parser.parse_args(argv)
    if args.repeats < 1:
        parser.error("--repeats must be at least 1")
    load_start = os.getloadavg()
    with tempfile.TemporaryDirectory(prefix="evigraph-bench-kb-") as tmp:
        if args.kb_root is not None:
            run = BuildRun(args.kb_root, None, f"existing KB at {args.kb_root}")
        else:
            data_dir = args.keep_data_dir or Path(tmp) / "data"
            if data_dir.exists() and any(data_dir.iterdir()):
                parser.error(f"{data_dir} is not empty: a fresh build needs a new data dir")
            run = fresh_build(data_dir, args.profile)
        build_dir = current_build(run.kb_root)
        manifest = read_manifest(build_dir).data
        sizes = part_sizes(build_dir)
        loads = [probe_load(run.kb_root) for _ in range(args.repeats)]
        verifies = [probe_verify(run.kb_root) for _ in range(max(1, args.repeats // 2))]
        report = render(run, manifest, sizes, loads, verifies, load_start, os.getloadavg())
    publish(report, args.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
