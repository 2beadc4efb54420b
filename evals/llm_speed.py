"""Local llama-server speed (run by hand): start time to healthy, prompt and generation tokens/s per thread
count, each the median of several requests, with the load average beside it.

    python -m evals.llm_speed --threads 1 2 --runs 3

Uses the same start/stop code as ``evigraph llm serve`` (agent.local_llm_server) and llama-server's own
``timings`` (prompt_per_second, predicted_per_second) from each chat completion.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import time
from pathlib import Path
from typing import Any

import httpx

PROMPT = (
    "A 55-year-old man has recurrent painful swelling of the big toe joint and a high serum uric acid. "
    "Explain in three sentences how acute gout flares are treated and how uric acid is lowered long term."
)


def measure(threads: int, runs: int, port: int) -> dict[str, Any]:
    from agent.local_llm import cache_root
    from agent.local_llm_server import start_server, stop_server

    root = cache_root()
    load_before = os.getloadavg()
    started = time.perf_counter()
    info = start_server(root, port=port, threads=threads, wait_s=600)
    start_s = time.perf_counter() - started
    prompt_tps: list[float] = []
    gen_tps: list[float] = []
    try:
        for _ in range(runs):
            reply = httpx.post(
                f"{info.base_url}/chat/completions",
                json={
                    "messages": [{"role": "user", "content": PROMPT}],
                    "max_tokens": 64,
                    "temperature": 0,
                    "cache_prompt": False,
                },
                timeout=600,
            ).json()
            timings = reply.get("timings", {})
            prompt_tps.append(float(timings.get("prompt_per_second", 0.0)))
            gen_tps.append(float(timings.get("predicted_per_second", 0.0)))
    finally:
        stop_server(root)
    return {
        "threads": threads,
        "start_to_healthy_s": round(start_s, 1),
        "prompt_tokens_per_s": round(statistics.median(prompt_tps), 1),
        "generation_tokens_per_s": round(statistics.median(gen_tps), 2),
        "runs": runs,
        "load_average_before": [round(x, 2) for x in load_before],
        "load_average_after": [round(x, 2) for x in os.getloadavg()],
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--threads", type=int, nargs="+", default=[1, 2])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--port", type=int, default=8091)
    parser.add_argument(
        "--out", type=Path, default=Path(__file__).resolve().parent / "reports" / "llm_speed.json"
    )
    args = parser.parse_args()
    rows = []
    for t in args.threads:
        rows.append(measure(t, args.runs, args.port))
        print(json.dumps(rows[-1]), flush=True)
    args.out.write_text(json.dumps(rows, indent=2))


if __name__ == "__main__":
    main()
