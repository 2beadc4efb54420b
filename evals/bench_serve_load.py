"""Load on the HTTP API (``evigraph serve --offline``), traffic only to 127.0.0.1, bounded in count and time.

Why: issue 12 found resets under a burst of 20 POSTs and lost turns with two writers on one consult. This
measures, against a real server process:

1. **Single**: the turn time of one consult at a time (median of ``--single`` sequential new consults,
   after two warm-up turns) — the baseline of the same run.
2. **Burst**: ``--burst`` (50) simultaneous ``POST /v1/consults`` (one thread each, released together),
   repeated ``--rounds`` times: connection resets, errors, every consult read back with exactly one stored
   turn, and the p50/p95 of the client-side latency against the single turn time (goal: p95 ≤ 5 × single).
3. **Two writers**: two processes × ``--writer-rounds`` (10) turns on ONE consult — an HTTP client process and
   a CLI-style process (a sync ``Consultant``, what ``evigraph ask --consult ID`` runs) writing the same
   checkpoint store at the same time. Every turn must be stored, or refused loudly (409).

Questions: BioASQ/MedQA question texts (``evals.bench_tools.real_questions``). The server runs in its own
process (so the load generator does not share its GIL), on a temp data dir, over the KB at ``--kb-root``
(default: the default KB, built first if missing by ``evigraph ask``).

Usage: python -m evals.bench_serve_load [--kb-root DIR] [--burst 50] [--rounds 3] [--parallel 4] [--workers 1]
       [--out evals/reports/bench_serve_load.md]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from evals.bench_common import percentile, publish
from evals.bench_kb import REPO_ROOT
from evals.bench_tools import real_questions
from graphs.model.settings import load_settings

REQUEST_TIMEOUT_S = 300.0
START_TIMEOUT_S = 300.0
GOAL_RATIO = 5.0
WRITER = (
    "import sys; from agent.consult import Consultant; from graphs.model.settings import load_settings\n"
    "s = load_settings(kb_dir=sys.argv[1], llm_enabled=False)\n"
    "c = Consultant(s, use_llm=False)\n"
    "ok = 0\n"
    "for i in range(int(sys.argv[3])):\n"
    "    c.ask(f'cli writer turn {i}: what lowers uric acid?', consult_id=sys.argv[2]); ok += 1\n"
    "print(ok)\n"
)


@dataclass
class Call:
    status: int
    seconds: float
    body: dict[str, Any] = field(default_factory=dict)
    error: str = ""


def call(base: str, method: str, path: str, body: dict[str, Any] | None = None) -> Call:
    data = json.dumps(body).encode() if body is not None else None
    request = urllib.request.Request(base + path, data=data, method=method)
    request.add_header("Content-Type", "application/json")
    started = time.perf_counter()
    try:
        with urllib.request.urlopen(request, timeout=REQUEST_TIMEOUT_S) as response:
            return Call(response.status, time.perf_counter() - started, json.loads(response.read()))
    except urllib.error.HTTPError as exc:
        return Call(exc.code, time.perf_counter() - started, json.loads(exc.read() or b"{}"))
    except (OSError, urllib.error.URLError) as exc:  # resets, refused connections, timeouts
        return Call(0, time.perf_counter() - started, error=f"{type(exc).__name__}: {exc}")


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def start_server(
    kb_root: Path, data_dir: Path, port: int, parallel: int, workers: int
) -> subprocess.Popen[bytes]:
    env = {**os.environ, "EVIGRAPH_DATA_DIR": str(data_dir), "PYTHONPATH": str(REPO_ROOT)}
    command = [sys.executable, "-c", "from agent.frontends.cli import app; app()", "serve", "--offline"]
    command += ["--port", str(port), "--kb-dir", str(kb_root), "--parallel", str(parallel)]
    command += ["--workers", str(workers)]
    server = subprocess.Popen(command, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    end = time.monotonic() + START_TIMEOUT_S
    while time.monotonic() < end:
        if server.poll() is not None:
            raise RuntimeError(f"the server exited with {server.returncode} before it answered")
        if call(f"http://127.0.0.1:{port}", "GET", "/readyz").status == 200:
            return server
        time.sleep(0.2)
    server.kill()
    raise RuntimeError(f"the server did not become ready within {START_TIMEOUT_S:g} s")


def burst(base: str, questions: Sequence[str]) -> list[Call]:
    """All questions POSTed at once (threads released by one barrier)."""
    results: list[Call | None] = [None] * len(questions)
    gate = threading.Barrier(len(questions))

    def one(i: int) -> None:
        gate.wait()
        results[i] = call(base, "POST", "/v1/consults", {"question": questions[i]})

    threads = [threading.Thread(target=one, args=(i,)) for i in range(len(questions))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return [r for r in results if r is not None]


def stored_turns(base: str, consult_id: str) -> int:
    reply = call(base, "GET", f"/v1/consults/{consult_id}")
    return len(reply.body.get("turns", [])) if reply.status == 200 else -1


def two_writers(base: str, kb_root: Path, data_dir: Path, rounds: int) -> dict[str, Any]:
    """An HTTP client process and a CLI-style process each add ``rounds`` turns to one consult at once."""
    consult_id = call(base, "POST", "/v1/consults", {"question": "What is the treatment for gout?"}).body[
        "consult_id"
    ]
    env = {**os.environ, "EVIGRAPH_DATA_DIR": str(data_dir), "PYTHONPATH": str(REPO_ROOT)}
    http_client = (
        "import json, sys, urllib.request, urllib.error\n"
        "codes = []\n"
        "for i in range(int(sys.argv[3])):\n"
        "    body = json.dumps({'question': f'http writer turn {i}: what lowers uric acid?'}).encode()\n"
        "    url = sys.argv[1] + '/v1/consults/' + sys.argv[2] + '/turns'\n"
        "    req = urllib.request.Request(url, data=body,\n"
        "        method='POST', headers={'Content-Type': 'application/json'})\n"
        "    try:\n"
        "        codes.append(urllib.request.urlopen(req, timeout=300).status)\n"
        "    except urllib.error.HTTPError as exc:\n"
        "        codes.append(exc.code)\n"
        "print(json.dumps(codes))\n"
    )
    started = time.perf_counter()
    commands = [[http_client, base], [WRITER, str(kb_root)]]
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", *command, consult_id, str(rounds)], env=env, stdout=subprocess.PIPE
        )
        for command in commands
    ]
    outputs = [proc.communicate(timeout=1800)[0].decode() for proc in procs]
    codes = json.loads(outputs[0].strip().splitlines()[-1]) if outputs[0].strip() else []
    cli_ok = int(outputs[1].strip().splitlines()[-1]) if outputs[1].strip() else 0
    return {
        "consult_id": consult_id,
        "http_codes": codes,
        "http_exit": procs[0].returncode,
        "cli_ok": cli_ok,
        "cli_exit": procs[1].returncode,
        "stored": stored_turns(base, consult_id) - 1,  # minus the opening turn
        "asked": 2 * rounds,
        "seconds": time.perf_counter() - started,
    }


def render(
    kb_root: Path,
    parallel: int,
    workers: int,
    single: list[float],
    rounds: list[dict[str, Any]],
    writers: dict[str, Any],
    load_start: tuple[float, ...],
) -> str:
    single_s = statistics.median(single)
    load_end = os.getloadavg()
    lines = [
        "# Serving under load (evals/bench_serve_load.py)",
        "",
        f"Server: `evigraph serve --offline --parallel {parallel} --workers {workers}` (own processes) "
        "over the KB at "
        f"`{kb_root}`; clients on 127.0.0.1. Python {platform.python_version()}, {os.cpu_count()} CPUs. "
        f"Load average (1/5/15 min) at start {'/'.join(f'{x:.1f}' for x in load_start)}, at end "
        f"{'/'.join(f'{x:.1f}' for x in load_end)} (the machine is shared: other processes compete for the "
        "CPUs when the load exceeds the CPU count).",
        "",
        f"Single-consult turn time (median of {len(single)} sequential new consults, client side): "
        f"**{single_s:.2f} s** (min {min(single):.2f}, max {max(single):.2f}).",
        "",
        "## Burst of simultaneous new consults",
        "",
        "| round | requests | 201 | resets/conn. errors | other errors | stored with 1 turn | p50 s | p95 s "
        "| max s | p95 / single |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for i, r in enumerate(rounds, 1):
        lines.append(
            f"| {i} | {r['n']} | {r['created']} | {r['resets']} | {r['errors']} | {r['stored']} | "
            f"{r['p50']:.2f} | {r['p95']:.2f} | {r['max']:.2f} | {r['p95'] / single_s:.1f}× |"
        )
    p95s = [r["p95"] for r in rounds]
    ratio = statistics.median(p95s) / single_s
    lines += [
        "",
        f"Median over rounds: p50 {statistics.median([r['p50'] for r in rounds]):.2f} s, "
        f"p95 {statistics.median(p95s):.2f} s = **{ratio:.1f} × single** (goal ≤ {GOAL_RATIO:g} ×: "
        f"{'met' if ratio <= GOAL_RATIO else 'NOT met'}). A burst of N turns that each need the CPU for "
        f"about the single turn time cannot all finish before ≈ N × single / CPUs, so on "
        f"{os.cpu_count()} CPUs the last of {rounds[0]['n']} ends near "
        f"{rounds[0]['n'] * single_s / (os.cpu_count() or 1):.1f} s at best: the bound is throughput, not "
        "the server.",
        "",
        "## Two writers on one consult",
        "",
        f"An HTTP client process and a CLI-style process (sync `Consultant.ask --consult`) each asked "
        f"{writers['asked'] // 2} turns of consult `{writers['consult_id']}` at the same time "
        f"({writers['seconds']:.1f} s): HTTP statuses {dict(Counter(writers['http_codes']))}, CLI turns "
        f"{writers['cli_ok']} (exit {writers['cli_exit']}); "
        f"**{writers['stored']} of {writers['asked']} turns stored** "
        f"(refused loudly: {writers['http_codes'].count(409)}).",
        "",
    ]
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--kb-root", type=Path, default=None)
    parser.add_argument("--burst", type=int, default=50)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--single", type=int, default=10)
    parser.add_argument("--writer-rounds", type=int, default=10)
    parser.add_argument("--parallel", type=int, default=4)
    parser.add_argument("--workers", type=int, default=1, help="server processes (evigraph serve --workers)")
    parser.add_argument("--out", type=Path, default=None)
    args = parser.parse_args(argv)
    settings = load_settings()
    kb_root = args.kb_root or settings.kb_root
    wanted = args.burst + args.single + 2
    questions = [q for _, q in real_questions(settings.shared_data_dir / "eval", wanted)]
    load_start = os.getloadavg()
    with tempfile.TemporaryDirectory(prefix="evigraph-serve-load-") as scratch:
        data_dir = Path(scratch)
        port = free_port()
        server = start_server(kb_root, data_dir, port, args.parallel, args.workers)
        base = f"http://127.0.0.1:{port}"
        try:
            for question in questions[:2]:
                call(base, "POST", "/v1/consults", {"question": question})
            single = [
                call(base, "POST", "/v1/consults", {"question": q}).seconds
                for q in questions[2 : 2 + args.single]
            ]
            rounds = []
            for _ in range(args.rounds):
                results = burst(base, questions[2 + args.single :][: args.burst])
                created = [r for r in results if r.status == 201]
                latencies = [r.seconds for r in created]
                rounds.append(
                    {
                        "n": len(results),
                        "created": len(created),
                        "resets": sum(1 for r in results if r.status == 0),
                        "errors": sum(1 for r in results if r.status not in (0, 201)),
                        "stored": sum(stored_turns(base, r.body["consult_id"]) == 1 for r in created),
                        "p50": percentile(latencies, 50),
                        "p95": percentile(latencies, 95),
                        "max": max(latencies, default=float("nan")),
                    }
                )
            writers = two_writers(base, kb_root, data_dir, args.writer_rounds)
        finally:
            server.terminate()
            server.wait(timeout=60)
    publish(render(kb_root, args.parallel, args.workers, single, rounds, writers, load_start), args.out)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
