"""`evigraph serve` against a hung LLM endpoint (issue 23's server target): concurrent turns end offline
at the deadline, workers are freed, and nothing grows over many turns.

    python -m evals.bench_hung_server [--deadline 10] [--concurrent 20] [--turns 100] [--kb-root DIR]

A TCP server accepts connections and never answers (evals/bench_llm_deadline.py ``hung_server``). The
HTTP API runs in this process (the same ``ApiServer`` as ``evigraph serve``) with that endpoint, the given
turn deadline, ``max_parallel_turns`` = ``--concurrent`` and the circuit breaker effectively off (a
cool-down of 1 ms), so every turn really calls the hung endpoint. Phase 1: ``--concurrent`` new consults
posted at once; each one's wall time, status and mode. Phase 2: ``--turns`` more in waves of
``--concurrent``; the process's threads and open file descriptors (sockets included) before and after,
and how many of the hung server's accepted connections the client has closed.
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import statistics
import tempfile
import threading
import time
import urllib.error
import urllib.request
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from evals.bench_llm_deadline import QUESTION, hung_server

REPO = Path(__file__).resolve().parent.parent


def post(url: str, question: str) -> tuple[int, float, dict[str, Any]]:
    body = json.dumps({"question": question}).encode()
    request = urllib.request.Request(url, data=body, headers={"Content-Type": "application/json"})
    started = time.perf_counter()
    try:
        with urllib.request.urlopen(request, timeout=600) as response:
            return response.status, time.perf_counter() - started, json.loads(response.read())
    except urllib.error.HTTPError as exc:
        return exc.code, time.perf_counter() - started, {}


def open_fds() -> int:
    return len(os.listdir("/proc/self/fd"))


def closed_by_client(held: list[socket.socket]) -> int:
    """Accepted connections the client has closed: the unread request is drained, then a read sees the end
    of the stream (a connection still open has nothing more to read)."""
    closed = 0
    for conn in list(held):
        conn.setblocking(False)
        try:
            while True:
                chunk = conn.recv(65536)
                if chunk == b"":
                    closed += 1
                    break
        except BlockingIOError:
            continue
        except OSError:
            closed += 1
    return closed


def wave(url: str, n: int) -> list[tuple[int, float, dict[str, Any]]]:
    with ThreadPoolExecutor(max_workers=n) as pool:
        return list(pool.map(lambda i: post(url, f"{QUESTION} (consult {i})"), range(n)))


def run(deadline: float, concurrent: int, turns: int, kb_root: Path | None) -> dict[str, Any]:
    from agent.frontends.http_api import ApiServer
    from agent.llm import make_chat_model
    from agent.serving import ConsultService, ServeSettings
    from graphs.model.settings import load_settings

    endpoint, stop, held = hung_server()
    with tempfile.TemporaryDirectory() as data_dir:
        settings = load_settings(
            kb_dir=kb_root,
            data_dir=Path(data_dir),
            llm_base_url=endpoint,
            llm_api_key="x",
            llm_turn_deadline_s=deadline,
            llm_structured="json_schema",
            llm_breaker_cooldown_s=0.001,
        )
        limits = ServeSettings(_env_file=None, max_parallel_turns=concurrent)  # type: ignore[call-arg]
        llm = make_chat_model(settings)  # as `evigraph serve` does (agent/frontends/cli_serve.py)
        server = ApiServer(
            lambda lim: ConsultService.open(settings, lim, llm=llm), "127.0.0.1", 0, limits
        ).start()
        url = f"http://127.0.0.1:{server.port}/v1/consults"
        try:
            warm = post(url, "What are the symptoms of gout?")  # loads the KB, reader and embedder
            time.sleep(1.0)
            threads_before, fds_before = threading.active_count(), open_fds() - len(held)
            first = wave(url, concurrent)
            rest: list[tuple[int, float, dict[str, Any]]] = []
            while len(rest) < turns:
                rest += wave(url, min(concurrent, turns - len(rest)))
            time.sleep(deadline + 2)  # anything abandoned would still be running now
            # the hung server runs in this process: its accepted sockets are not the client's
            threads_after, fds_after = threading.active_count(), open_fds() - len(held)
            closed, accepted = closed_by_client(held), len(held)
            after = post(url, "What is gout?")  # still answering
        finally:
            server.stop()
            stop.set()
    seconds = [s for _, s, _ in first]
    modes = [str(b.get("answer", {}).get("mode")) for _, _, b in first + rest]
    return {
        "deadline_s": deadline,
        "concurrent": concurrent,
        "warm_up_status": warm[0],
        "wave_statuses": sorted({code for code, _, _ in first + rest}),
        "wave_seconds_median": round(statistics.median(seconds), 2),
        "wave_seconds_max": round(max(seconds), 2),
        "wave_within_deadline_plus_2s": max(seconds) <= deadline + 2,
        "turns_after_the_wave": len(rest),
        "modes": {m: modes.count(m) for m in sorted(set(modes))},
        "threads_before_after": [threads_before, threads_after],
        "open_fds_before_after": [fds_before, fds_after],
        "hung_connections_accepted": accepted,
        "hung_connections_closed_by_client": closed,
        "answers_after": [after[0], round(after[1], 2)],
        "load_average": [round(x, 2) for x in os.getloadavg()],
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--deadline", type=float, default=10.0)
    parser.add_argument("--concurrent", type=int, default=20)
    parser.add_argument("--turns", type=int, default=100)
    parser.add_argument("--kb-root", type=Path, default=None)
    parser.add_argument("--out", type=Path, default=REPO / "evals" / "reports" / "bench_hung_server.json")
    args = parser.parse_args()
    summary = run(args.deadline, args.concurrent, args.turns, args.kb_root)
    args.out.write_text(json.dumps(summary, indent=2) + "\n")
    print(json.dumps(summary, indent=2))


if __name__ == "__main__":
    main()
