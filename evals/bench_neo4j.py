"""Benchmark: Neo4j bulk-load throughput and per-operation latency of both graph stores, in one run.

Usage::

    python -m evals.bench_neo4j [--kb-root ~/.local/share/evigraph/kb] [--neo4j-uri bolt://127.0.0.1:7697]

Uses the KB published under ``--kb-root`` (the default-sized KB when you have built one); without one it
builds the test slice KB (tests/conftest.py ``slice_config``) into a temporary directory. When nothing
answers on the local test port it starts the bundled Neo4j (graphs/neo4j/server) and stops it afterwards.

Measured: a fresh bulk load (after clearing EviGraph's nodes) and an idempotent re-run of the same load
(every MERGE finds its node), as nodes/s and relationships/s; then p50/p95 latency of single-id calls of
each store operation on both stores over the same sampled real ids, with their ratio. Every Neo4j answer is
also compared with the embedded store's, so the table is only printed next to a mismatch count.
"""

from __future__ import annotations

import argparse
import random
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any
from urllib.parse import urlparse

from evals.bench_common import percentile
from graphs.building.builder import build_kb
from graphs.disk.layout import current_build, read_manifest
from graphs.neo4j.connection import Neo4jConnection
from graphs.neo4j.loader import clear_graph, load_into_neo4j
from graphs.neo4j.store import Neo4jGraphStore
from graphs.stores.base import GraphStore
from graphs.stores.embedded import EmbeddedGraphStore
from tests.conftest import slice_config
from tests.neo4j_fixture import SERVER_SCRIPT, port_answers, run_server_script

Operation = Callable[[GraphStore, int], object]


def resolve_kb(kb_root: Path | None, scratch: Path) -> tuple[Path, str]:
    """The build to benchmark and a label saying where it came from."""
    if kb_root is not None and (kb_root / "current").exists():
        return current_build(kb_root), f"{kb_root} ({read_manifest(current_build(kb_root)).version})"
    root = scratch / "slice-kb"
    build_kb(root, slice_config())
    return current_build(root), "test slice KB (no KB at --kb-root)"


def sample_ids(store: EmbeddedGraphStore, n: int, seed: int) -> dict[str, list[str]]:
    """Real ids: connected entities (and their names), topics and evidence units."""
    rng = random.Random(seed)
    adj = store.adjacency
    degree = adj.degrees()
    connected = [str(e) for e, d in zip(adj.entity_ids.tolist(), degree.tolist(), strict=True) if d > 0]
    entities = rng.sample(connected, min(n, len(connected)))
    topics = rng.sample([str(t) for t in adj.topic_ids.tolist()], min(n, len(adj.topic_ids)))
    evidence = sorted({e for t in store.get_topics(topics).values() for e in t.evidence_ids})
    names = [store.get_entities([e])[e].name for e in entities]
    return {
        "entities": entities,
        "names": names,
        "topics": topics,
        "evidence": rng.sample(evidence, min(n, len(evidence))),
    }


def operations(ids: dict[str, list[str]]) -> dict[str, tuple[int, Operation]]:
    """Each benchmarked call, with how many distinct inputs it has."""
    ent, names, top, ev = ids["entities"], ids["names"], ids["topics"], ids["evidence"]
    return {
        "get_entities": (len(ent), lambda s, i: s.get_entities([ent[i]])),
        "find_entities": (len(names), lambda s, i: s.find_entities(names[i])),
        "neighbors": (len(ent), lambda s, i: s.neighbors([ent[i]])),
        "k_hop(k=2)": (len(ent), lambda s, i: s.k_hop([ent[i]], 2)),
        "entity_topics": (len(ent), lambda s, i: s.entity_topics([ent[i]])),
        "topic_entities": (len(top), lambda s, i: s.topic_entities([top[i]])),
        "get_evidence": (len(ev), lambda s, i: s.get_evidence([ev[i]])),
        "entity_evidence": (len(ent), lambda s, i: s.entity_evidence([ent[i]])),
    }


def time_calls(
    store: GraphStore, count: int, op: Operation, repeats: int
) -> tuple[list[float], list[object]]:
    """Latencies in ms of every call (after one warm-up pass) and the first pass's results."""
    results = [op(store, i) for i in range(count)]
    times: list[float] = []
    for _ in range(repeats):
        for i in range(count):
            started = time.perf_counter()
            op(store, i)
            times.append((time.perf_counter() - started) * 1000)
    return times, results


def run(args: argparse.Namespace) -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="evigraph-bench-") as scratch:
        build_dir, kb_label = resolve_kb(args.kb_root, Path(scratch))
        conn = Neo4jConnection(args.neo4j_uri)
        started = time.perf_counter()
        cleared = clear_graph(conn, args.batch_size)
        clear_s = time.perf_counter() - started
        conn.close()
        fresh = load_into_neo4j(build_dir, args.neo4j_uri, batch_size=args.batch_size)
        rerun = load_into_neo4j(build_dir, args.neo4j_uri, batch_size=args.batch_size)
        embedded = EmbeddedGraphStore(build_dir)
        neo = Neo4jGraphStore(args.neo4j_uri)
        ids = sample_ids(embedded, args.samples, args.seed)
        latency: dict[str, dict[str, float]] = {}
        mismatches: dict[str, int] = {}
        for name, (count, op) in operations(ids).items():
            emb_times, emb_results = time_calls(embedded, count, op, args.repeats)
            neo_times, neo_results = time_calls(neo, count, op, args.repeats)
            mismatches[name] = sum(a != b for a, b in zip(emb_results, neo_results, strict=True))
            latency[name] = {
                "n": count,
                "emb_p50": percentile(emb_times, 50),
                "emb_p95": percentile(emb_times, 95),
                "neo_p50": percentile(neo_times, 50),
                "neo_p95": percentile(neo_times, 95),
            }
        counts = embedded.counts()
        neo.close()
        embedded.close()
    return {
        "kb": kb_label,
        "counts": counts,
        "cleared_nodes_and_rels": cleared,
        "clear_s": clear_s,
        "fresh": fresh,
        "rerun": rerun,
        "latency": latency,
        "mismatches": mismatches,
    }


def render(report: dict[str, Any]) -> str:
    fresh, rerun = report["fresh"], report["rerun"]
    lines = [
        f"KB: {report['kb']} — {report['counts']}",
        "",
        "| load | seconds | nodes | relationships | nodes/s | relationships/s |",
        "|---|---:|---:|---:|---:|---:|",
    ]
    for label, r in (("fresh (empty graph)", fresh), ("re-run (idempotent MERGE)", rerun)):
        lines.append(
            f"| {label} | {r['seconds']:.1f} | {r['nodes']} | {r['relationships']} | "
            f"{r['nodes_per_s']:.0f} | {r['edges_per_s']:.0f} |"
        )
    lines += [
        f"\n(clearing the previous graph: {report['clear_s']:.1f} s)\n",
        "| operation | ids | embedded p50 ms | embedded p95 ms | neo4j p50 ms | neo4j p95 ms | ratio p50 | "
        "ratio p95 | mismatches |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for name, m in report["latency"].items():
        lines.append(
            f"| {name} | {m['n']} | {m['emb_p50']:.3f} | {m['emb_p95']:.3f} | {m['neo_p50']:.2f} | "
            f"{m['neo_p95']:.2f} | {m['neo_p50'] / max(m['emb_p50'], 1e-6):.0f}x | "
            f"{m['neo_p95'] / max(m['emb_p95'], 1e-6):.0f}x | {report['mismatches'][name]} |"
        )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--kb-root", type=Path, default=None, help="KB root holding `current` (default KB)")
    parser.add_argument("--neo4j-uri", default="bolt://127.0.0.1:7697")
    parser.add_argument("--batch-size", type=int, default=5000)
    parser.add_argument("--samples", type=int, default=60, help="distinct real ids per operation (>= 50)")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    port = urlparse(args.neo4j_uri).port or 7687
    started_here = False
    if not port_answers(port):
        run_server_script(SERVER_SCRIPT, "start", port, 600)
        started_here = True
    try:
        report = run(args)
    finally:
        if started_here:
            run_server_script(SERVER_SCRIPT, "stop", port, 120)
    sys.stdout.write(render(report) + "\n")
    return 1 if any(report["mismatches"].values()) else 0


if __name__ == "__main__":
    raise SystemExit(main())
