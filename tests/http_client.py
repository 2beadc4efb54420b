"""A small HTTP client and server harness for the API tests: a real uvicorn server on 127.0.0.1 (port 0),
a real ``ConsultService`` over the slice KB with a SQLite checkpoint in the test's directory, and urllib.
"""

from __future__ import annotations

import json
import sqlite3
import urllib.error
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from langchain_core.language_models import BaseChatModel

from agent.frontends.http_api import ApiServer
from agent.serving import ConsultService, ServeSettings
from graphs.kb import KnowledgeBase
from graphs.model.settings import Settings

GOUT = "What is the treatment for gout?"
FOLLOW_UP = "What medicines lower uric acid?"


@dataclass
class Response:
    status: int
    body: Any
    headers: dict[str, str]
    text: str = ""


@dataclass
class Api:
    server: ApiServer
    settings: Settings

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server.port}"

    @property
    def service(self) -> ConsultService:
        return self.server.service

    def call(
        self,
        method: str,
        path: str,
        body: bytes | dict[str, Any] | None = None,
        headers: dict[str, str] | None = None,
    ) -> Response:
        data = json.dumps(body).encode() if isinstance(body, dict) else body
        request = urllib.request.Request(self.url + path, data=data, method=method, headers=headers or {})
        if data is not None:
            request.add_header("Content-Type", "application/json")
        try:
            with urllib.request.urlopen(request, timeout=300) as response:
                return _parsed(response.status, response.read(), dict(response.headers))
        except urllib.error.HTTPError as exc:
            return _parsed(exc.code, exc.read(), dict(exc.headers))

    def stored_consults(self) -> dict[str, int]:
        """Consult id → number of stored turns, read from the checkpoint file by a separate connection."""
        from langgraph.checkpoint.sqlite import SqliteSaver

        from agent.sessions import list_consults, thread_config

        saver = SqliteSaver(sqlite3.connect(self.settings.checkpoint_path, check_same_thread=False))
        try:
            out = {}
            for cid in list_consults(saver, limit=10_000):
                tup = saver.get_tuple(thread_config(cid))  # type: ignore[arg-type]
                out[cid] = len(tup.checkpoint["channel_values"].get("turns", [])) if tup else 0
            return out
        finally:
            saver.conn.close()


def _parsed(status: int, raw: bytes, headers: dict[str, str]) -> Response:
    text = raw.decode("utf-8", "replace")
    try:
        body = json.loads(text) if text and "json" in headers.get("content-type", "") else None
    except json.JSONDecodeError:
        body = None
    return Response(status, body, headers, text)


def api_settings(kb_root: Path, data_dir: Path) -> Settings:
    return Settings(kb_dir=kb_root, data_dir=data_dir, llm_enabled=False)


@contextmanager
def running_api(
    settings: Settings,
    kb: KnowledgeBase | None = None,
    host: str = "127.0.0.1",
    llm: BaseChatModel | None = None,
    **limits: Any,
) -> Iterator[Api]:
    """The API on a free port, over ``kb`` (or the settings' KB, opened and live-switched by the service)."""
    serve_limits = ServeSettings(_env_file=None, **limits)
    server = ApiServer(lambda lim: ConsultService.open(settings, lim, kb=kb, llm=llm), host, 0, serve_limits)
    server.start()
    try:
        yield Api(server, settings)
    finally:
        server.stop()
