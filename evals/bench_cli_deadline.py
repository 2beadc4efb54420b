"""How long `evigraph ask` takes to exit against a hung LLM endpoint (issue 23: ≤ deadline + 2 s).

    python -m evals.bench_cli_deadline [--deadline 10] [--runs 5] [--kb-root DIR]

A TCP server that accepts and never answers (evals/bench_llm_deadline.py ``hung_server``); each run is a
fresh ``evigraph ask --json`` process (so it pays Python start-up and opening the KB, measured separately
with ``--offline``), in both structured-output modes. Median and max of ``--runs`` wall times.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from evals.bench_llm_deadline import QUESTION, hung_server

REPO = Path(__file__).resolve().parent.parent


def timed(env: dict[str, str], kb_root: Path | None, offline: bool = False) -> float:
    cmd = [sys.executable, "-m", "agent.frontends.cli", "ask", "--json", QUESTION]
    if kb_root is not None:
        cmd += ["--kb-dir", str(kb_root)]
    if offline:
        cmd.append("--offline")
    started = time.perf_counter()
    run = subprocess.run(cmd, capture_output=True, env=env, timeout=900)
    took = time.perf_counter() - started
    if run.returncode != 0:
        raise SystemExit(run.stderr.decode()[-2000:])
    return took


def run(deadline: float, runs: int, kb_root: Path | None) -> dict[str, Any]:
    url, stop, _ = hung_server()
    out: dict[str, Any] = {"deadline_s": deadline, "runs": runs}
    with tempfile.TemporaryDirectory() as data_dir:
        base = {**os.environ, "EVIGRAPH_DATA_DIR": data_dir}
        offline = [timed(base, kb_root, offline=True) for _ in range(runs)]
        out["offline_process_s"] = {
            "median": round(statistics.median(offline), 2),
            "max": round(max(offline), 2),
        }
        for mode in ("json_schema", "auto"):
            env = {
                **base,
                "EVIGRAPH_LLM_BASE_URL": url,
                "EVIGRAPH_LLM_STRUCTURED": mode,
                "EVIGRAPH_LLM_TURN_DEADLINE_S": str(deadline),
            }
            times = [timed(env, kb_root) for _ in range(runs)]
            out[f"hung_{mode}_process_s"] = {
                "median": round(statistics.median(times), 2),
                "max": round(max(times), 2),
                "within_deadline_plus_2s_median": statistics.median(times) <= deadline + 2,
            }
    stop.set()
    out["load_average"] = [round(x, 2) for x in os.getloadavg()]
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--deadline", type=float, default=10.0)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--kb-root", type=Path, default=None)
    parser.add_argument("--out", type=Path, default=REPO / "evals" / "reports" / "bench_cli_deadline.json")
    args = parser.parse_args()
    summary = run(args.deadline, args.runs, args.kb_root)
    args.out.write_text(json.dumps(summary, indent=2) + "\n")
    print(json.dumps(summary, indent=2))


if __name__ == "__main__":
    main()
