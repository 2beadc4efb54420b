"""A hung LLM endpoint against the per-turn deadline and the circuit breaker (issue 12, item 3).

A TCP server on 127.0.0.1 accepts connections and never answers (the worst case: no error, no timeout
until the client's own). With ``llm_turn_deadline_s = D`` and the default client timeout (60 s) and
retries (2), one consult turn must end within D + 1 s with offline fallbacks; an offline consult run at
the same time in another thread must take about as long as it takes alone. Then, within the breaker's
cool-down, a second turn must not touch the endpoint at all. Medians of ``--runs`` runs; load average
beside every number.

    python -m evals.bench_llm_deadline --deadline 5 --runs 3
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import statistics
import threading
import time
from pathlib import Path
from typing import Any

QUESTION = "What is the treatment for gout?"
OTHER = "What are the symptoms of hypothyroidism?"


def hung_server() -> tuple[str, threading.Event, list[socket.socket]]:
    """Accept connections, read nothing back, never reply."""
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(64)
    stop = threading.Event()
    held: list[socket.socket] = []

    def serve() -> None:
        listener.settimeout(0.2)
        while not stop.is_set():
            try:
                conn, _ = listener.accept()
                held.append(conn)
            except TimeoutError:
                continue
        listener.close()

    threading.Thread(target=serve, daemon=True).start()
    return f"http://127.0.0.1:{listener.getsockname()[1]}/v1", stop, held


def run(deadline: float, runs: int) -> dict[str, Any]:
    from agent.context import ConsultContext
    from agent.frontends.cli_kb import open_consultant
    from agent.llm_guard import reset_breakers
    from graphs.model.settings import load_settings

    url, stop, held = hung_server()
    llm = open_consultant(
        load_settings(
            llm_base_url=url,
            llm_api_key="x",
            llm_turn_deadline_s=deadline,
            llm_structured="json_schema",
            llm_breaker_cooldown_s=600,
        )
    )
    offline = open_consultant(load_settings(), offline=True)
    offline.ask(OTHER)  # warm-up: embedder and KB caches of both consultants
    llm.ask(QUESTION, context=ConsultContext(llm_enabled=False))
    alone = []
    for _ in range(runs):
        started = time.perf_counter()
        offline.ask(OTHER)
        alone.append(time.perf_counter() - started)
    hung, beside, fallbacks, connections = [], [], [], []
    for _ in range(runs):
        reset_breakers()
        held.clear()
        other: list[float] = []

        def other_consult(other: list[float] = other) -> None:
            time.sleep(0.5)
            started = time.perf_counter()
            offline.ask(OTHER)
            other.append(time.perf_counter() - started)

        worker = threading.Thread(target=other_consult)
        worker.start()
        started = time.perf_counter()
        result = llm.ask(QUESTION)
        hung.append(time.perf_counter() - started)
        worker.join()
        beside.append(other[0])
        fallbacks.append(sum(1 for s in result.trace if s.get("fallback")))
        connections.append(len(held))
    # A second failing turn in a row opens the breaker; within the cool-down the next turn skips the
    # endpoint without a connection.
    llm.ask(QUESTION)
    before = len(held)
    started = time.perf_counter()
    second = llm.ask(OTHER)
    breaker_turn = time.perf_counter() - started
    stop.set()
    return {
        "deadline_s": deadline,
        "hung_turn_s_median": round(statistics.median(hung), 2),
        "hung_turn_s_max": round(max(hung), 2),
        "within_deadline_plus_1s": max(hung) <= deadline + 1,
        "fallback_steps_per_turn": fallbacks,
        "connections_per_turn": connections,
        "other_consult_alone_s_median": round(statistics.median(alone), 2),
        "other_consult_beside_hung_s_median": round(statistics.median(beside), 2),
        "turn_within_breaker_cooldown_s": round(breaker_turn, 2),
        "connections_within_cooldown": len(held) - before,
        "breaker_fallback": next((s["fallback"] for s in second.trace if s.get("fallback")), ""),
        "runs": runs,
        "load_average": [round(x, 2) for x in os.getloadavg()],
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--deadline", type=float, default=5.0)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument(
        "--out", type=Path, default=Path(__file__).resolve().parent / "reports" / "bench_llm_deadline.json"
    )
    args = parser.parse_args()
    summary = run(args.deadline, args.runs)
    args.out.write_text(json.dumps(summary, indent=2))
    print(json.dumps(summary, indent=2))


if __name__ == "__main__":
    main()
