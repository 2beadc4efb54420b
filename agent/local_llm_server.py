"""Start, watch and stop the local llama-server (experimental; see :mod:`agent.local_llm` for setup).

The server listens on 127.0.0.1 only, with a thread count chosen from the machine's idle cores; its pid,
port and threads are recorded in ``server.json`` under the cache directory so ``status``/``stop`` and
``EVIGRAPH_LLM_BASE_URL=local`` find it from any process.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

import httpx

from agent.local_llm import DEFAULT_PORT, LocalLLMError, model_path, server_path, state_path, verified_model


@dataclass(frozen=True)
class ServerInfo:
    """A running server as recorded in ``server.json``."""

    pid: int
    port: int
    threads: int
    model: str

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"


def choose_threads(cpus: int | None = None, load: float | None = None) -> int:
    """Threads for generation: the idle cores, at least 1.

    Why not all cores: on a shared 2-core machine with another busy process, ``-t 2`` collapsed below
    1 token/s while ``-t 1`` kept 4–6 (llama.cpp threads spin-wait on each other)."""
    cpus = cpus or os.cpu_count() or 1
    load = os.getloadavg()[0] if load is None else load
    return max(1, min(cpus, 8, round(cpus - load)))


def port_free(port: int) -> bool:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        # as the server binds: connections of a stopped server left in TIME_WAIT do not make it "taken"
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            sock.bind(("127.0.0.1", port))
        except OSError:
            return False
    return True


def read_state(root: Path | None = None) -> ServerInfo | None:
    try:
        data = json.loads(state_path(root).read_text())
        return ServerInfo(int(data["pid"]), int(data["port"]), int(data["threads"]), str(data["model"]))
    except (OSError, ValueError, KeyError, TypeError):
        return None


def _is_our_server(pid: int) -> bool:
    """The pid is alive and is a llama-server (a pid file can outlive its process and the pid be reused)."""
    try:
        cmdline = Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return False
    return b"llama-server" in cmdline


def healthy(port: int, timeout_s: float = 2.0) -> bool:
    try:
        return httpx.get(f"http://127.0.0.1:{port}/health", timeout=timeout_s).status_code == 200
    except httpx.HTTPError:
        return False


def running(root: Path | None = None) -> ServerInfo | None:
    """The recorded server if its process is still alive."""
    info = read_state(root)
    return info if info is not None and _is_our_server(info.pid) else None


def _log_tail(log: Path, lines: int = 8) -> str:
    try:
        return "\n".join(log.read_text(errors="replace").splitlines()[-lines:])
    except OSError:
        return ""


def start_server(
    root: Path,
    port: int = DEFAULT_PORT,
    threads: int | None = None,
    context: int = 8192,
    wait_s: float = 180.0,
    binary: Path | None = None,
    model: Path | None = None,
) -> ServerInfo:
    """Start llama-server on 127.0.0.1 and wait until ``/health`` answers; clear errors otherwise."""
    current = running(root)
    if current is not None:
        raise LocalLLMError(
            f"a local LLM server is already running (pid {current.pid}, port {current.port}); "
            "`evigraph llm stop` first."
        )
    binary = binary or (
        Path(os.environ["EVIGRAPH_LLAMA_SERVER"])
        if os.environ.get("EVIGRAPH_LLAMA_SERVER")
        else server_path(root)
    )
    if not binary.is_file():
        raise LocalLLMError(f"llama-server binary missing ({binary}); run `evigraph llm setup` to build it.")
    model = model or model_path(root)
    if not verified_model(model):
        raise LocalLLMError(f"model missing or not verified ({model}); run `evigraph llm setup`.")
    if not port_free(port):
        raise LocalLLMError(f"port {port} on 127.0.0.1 is taken by another process; pass --port N.")
    threads = threads or choose_threads()
    log = root / "server.log"
    cmd = [
        str(binary),
        "-m",
        str(model),
        "--host",
        "127.0.0.1",
        "--port",
        str(port),
        "-t",
        str(threads),
        "-c",
        str(context),
        "-np",
        "1",
        "--alias",
        "evigraph-local",
    ]
    with log.open("ab") as out:
        proc = subprocess.Popen(
            cmd, stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, start_new_session=True
        )
    info = ServerInfo(proc.pid, port, threads, str(model))
    state_path(root).write_text(json.dumps({**info.__dict__, "started": time.time()}))
    deadline = time.monotonic() + wait_s
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            state_path(root).unlink(missing_ok=True)
            raise LocalLLMError(
                f"llama-server exited with code {proc.returncode} while starting; last log "
                f"lines ({log}):\n{_log_tail(log)}"
            )
        if healthy(port):
            return info
        time.sleep(0.5)
    stop_server(root)
    raise LocalLLMError(f"llama-server did not become healthy within {wait_s:.0f} s; see {log}.")


def stop_server(root: Path | None = None, wait_s: float = 15.0) -> int | None:
    """Stop the recorded server (SIGTERM, then SIGKILL); returns its pid, or None if none was running."""
    info = running(root)
    state_path(root).unlink(missing_ok=True)
    if info is None:
        return None
    os.kill(info.pid, signal.SIGTERM)
    deadline = time.monotonic() + wait_s
    while time.monotonic() < deadline and _is_our_server(info.pid):
        _reap(info.pid)
        time.sleep(0.2)
    if _is_our_server(info.pid):
        os.kill(info.pid, signal.SIGKILL)
    _reap(info.pid)
    return info.pid


def _reap(pid: int) -> None:
    """Collect the exit status when this process started the server (else it lingers as a zombie)."""
    try:
        os.waitpid(pid, os.WNOHANG)
    except ChildProcessError:
        return
