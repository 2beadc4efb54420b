"""``evigraph serve``: the HTTP JSON API (:mod:`agent.frontends.http_app`) on uvicorn.

Why uvicorn with these settings: one asyncio loop serves every connection, so a burst, a slow client or
hundreds of half-open sockets cost memory, not threads; the listen backlog is 2048 (the standard-library
server's 5 reset bursts of 20); ``limit_concurrency`` answers 503 instead of accepting without bound; idle
keep-alive connections close after a few seconds. Turns themselves are bounded by the consult service
(parallel slots + a queue, 429 beyond).

The socket is bound before the server starts, so a busy port is reported at once, ``port=0`` picks a free
port (tests), and ``ApiServer.port`` tells which.
"""

from __future__ import annotations

import ipaddress
import logging
import socket
import threading
from typing import Any

import uvicorn
from fastapi import FastAPI

from agent.frontends.http_app import ServiceOpener, make_app
from agent.serving import ServeSettings

log = logging.getLogger("evigraph.http")

MAX_BODY_BYTES = ServeSettings.model_fields["max_body_bytes"].default
BACKLOG = 2048
MAX_CONNECTIONS = 1024
"""Connections + running requests beyond which uvicorn answers 503 (a bound, far above the turn queue)."""
KEEP_ALIVE_S = 5


UVICORN_OPTIONS: dict[str, Any] = {
    "backlog": BACKLOG,
    "limit_concurrency": MAX_CONNECTIONS,
    "timeout_keep_alive": KEEP_ALIVE_S,
    "log_config": None,
    "access_log": False,
    "lifespan": "on",
}
APP_FACTORY = "agent.frontends.http_app:app_from_env"
"""What each worker process of ``serve --workers N`` imports and calls to build its app."""


def bind_socket(host: str, port: int) -> socket.socket:
    """A listening socket (bound before the server starts, so a busy port is an immediate ``OSError``)."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host, port))
        sock.listen(BACKLOG)
    except OSError:
        sock.close()
        raise
    return sock


def warn_if_open(host: str, limits: ServeSettings) -> None:
    if not is_loopback(host) and limits.api_token is None:
        log.warning(
            "Listening on %s without EVIGRAPH_API_TOKEN: anyone who can reach this address can run "
            "consults and read them. Set EVIGRAPH_API_TOKEN, or bind to 127.0.0.1 behind a TLS proxy.",
            host,
        )


def serve_workers(host: str, port: int, workers: int, limits: ServeSettings) -> None:
    """Serve with ``workers`` processes on one socket (uvicorn's supervisor), in the foreground.

    Why processes: a turn's Python code holds the GIL, so one process uses about one CPU however many turns
    it runs at once. Each worker opens its own KB and consult service from the environment
    (:func:`agent.frontends.http_app.app_from_env`); the per-consult file lock keeps one writer per consult
    across them, and each switches to a newly published KB build on its own.
    """
    from uvicorn.supervisors import Multiprocess

    sock = bind_socket(host, port)
    warn_if_open(host, limits)
    config = uvicorn.Config(APP_FACTORY, factory=True, workers=workers, **UVICORN_OPTIONS)
    Multiprocess(config, sockets=[sock]).run()


def is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


class ApiServer:
    """The app on a bound socket; ``serve()`` in the foreground, or ``start()``/``stop()`` on a thread."""

    def __init__(
        self,
        open_service: ServiceOpener,
        host: str = "127.0.0.1",
        port: int = 8080,
        limits: ServeSettings | None = None,
    ) -> None:
        self.limits = limits or ServeSettings()
        self.app: FastAPI = make_app(open_service, self.limits)
        self.socket = bind_socket(host, port)
        self.host = host
        self.port: int = self.socket.getsockname()[1]
        self.server = uvicorn.Server(uvicorn.Config(self.app, **UVICORN_OPTIONS))
        self._thread: threading.Thread | None = None
        warn_if_open(host, self.limits)

    @property
    def service(self) -> Any:
        """The running ``ConsultService`` (after startup)."""
        return self.app.state.service

    def serve(self) -> None:
        """Serve in the foreground until Ctrl-C / SIGTERM (uvicorn handles both and drains requests)."""
        self.server.run(sockets=[self.socket])

    def start(self) -> ApiServer:
        """Serve on a daemon thread; returns once the app has started (or raises if startup failed)."""
        self._thread = threading.Thread(
            target=self.server.run, kwargs={"sockets": [self.socket]}, daemon=True
        )
        self._thread.start()
        while not self.server.started:
            if not self._thread.is_alive():
                raise RuntimeError("the API server did not start; see the log")
            self._thread.join(0.02)
        return self

    def stop(self) -> None:
        self.server.should_exit = True
        if self._thread is not None:
            self._thread.join(timeout=30)
        self.socket.close()
