"""``evigraph mcp``: serve the MCP server over stdio (for an MCP client that starts it) or streamable HTTP.

Kept apart from ``mcp_server`` so the ``evigraph`` command starts without importing the MCP SDK.
On stdio, standard output belongs to the protocol: everything else (KB build progress, logs) goes to stderr.
"""

from __future__ import annotations

import ipaddress
import logging
import socket
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console

from agent.errors import UserError, user_errors
from graphs.model.settings import load_settings

TRANSPORTS = ("stdio", "http")


def mcp(
    transport: Annotated[
        str, typer.Option(help="stdio (an MCP client starts this command) | http")
    ] = "stdio",
    host: Annotated[str, typer.Option(help="HTTP: address to listen on.")] = "127.0.0.1",
    port: Annotated[int, typer.Option(help="HTTP: port to listen on.")] = 8765,
    offline: Annotated[bool, typer.Option("--offline", help="Do not use an LLM even if configured.")] = False,
    kb_dir: Annotated[Path | None, typer.Option("--kb-dir", help="Knowledge-base root.")] = None,
) -> None:
    """MCP server: the four retrieval tools and `consult`, for any MCP client (stdio or streamable HTTP)."""
    from agent.frontends.cli_serve import open_runner

    err = Console(stderr=True)
    logging.basicConfig(level=logging.WARNING, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    settings = load_settings(kb_dir=kb_dir)
    with user_errors():
        if transport not in TRANSPORTS:
            raise UserError(f"Unknown transport '{transport}'. Choose stdio or http.")
        if transport == "http":
            check_port_free(host, port)
        from agent.frontends.mcp_server import MCP_PATH, build_mcp_server

        runner = open_runner(settings, offline)
    try:
        server = build_mcp_server(runner)
        if transport == "stdio":
            server.run("stdio")
            return
        if not is_loopback(host):
            err.print(
                f"[yellow]Warning: the MCP server on {host} has no authentication; keep it behind a proxy."
            )
        err.print(f"[dim]EviGraph MCP at http://{host}:{port}{MCP_PATH} · Ctrl-C to stop")
        try:
            server.run("streamable-http", host=host, port=port, streamable_http_path=MCP_PATH)
        except KeyboardInterrupt:
            err.print("[dim]stopped.")
    finally:
        runner.close()


def is_loopback(host: str) -> bool:
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return host == "localhost"


def check_port_free(host: str, port: int) -> None:
    """A busy port or unknown host as a one-line error, before the KB is loaded."""
    try:
        with socket.create_server((host, port)):
            pass
    except OSError as exc:
        raise UserError(
            f"Cannot listen on {host}:{port} ({exc.strerror or exc}). Choose another --port."
        ) from None
