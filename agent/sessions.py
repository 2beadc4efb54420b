"""Consult sessions: the checkpointer that makes multi-turn consults survive restarts.

Default: a SQLite file under the data dir (``consults.sqlite``), written with durability ``sync`` so a
process killed mid-turn loses no completed turn. A Postgres URL (``EVIGRAPH_CHECKPOINT_URL=postgresql://…``)
uses ``langgraph-checkpoint-postgres`` when it is installed. One LangGraph thread per consult.
"""

from __future__ import annotations

import sqlite3
import uuid
from pathlib import Path
from typing import Any

from langgraph.checkpoint.base import BaseCheckpointSaver

from agent.errors import UserError
from graphs.settings import Settings


def open_checkpointer(settings: Settings) -> BaseCheckpointSaver[Any]:
    url = settings.checkpoint_url
    if url and url.startswith(("postgresql://", "postgres://")):
        try:
            from langgraph.checkpoint.postgres import PostgresSaver
            from psycopg import Connection
        except ImportError as exc:
            raise UserError(
                "A Postgres checkpoint URL needs `pip install langgraph-checkpoint-postgres "
                "psycopg[binary]`; or unset EVIGRAPH_CHECKPOINT_URL to use SQLite."
            ) from exc
        conn = Connection.connect(url, autocommit=True, prepare_threshold=0)
        saver = PostgresSaver(conn)
        saver.setup()
        return saver
    from langgraph.checkpoint.sqlite import SqliteSaver

    path = Path(url) if url else settings.checkpoint_path
    path.parent.mkdir(parents=True, exist_ok=True)
    conn = sqlite3.connect(path, check_same_thread=False)
    return SqliteSaver(conn)


def new_consult_id() -> str:
    return uuid.uuid4().hex[:10]


def thread_config(consult_id: str) -> dict[str, Any]:
    return {"configurable": {"thread_id": consult_id}}


def consult_exists(checkpointer: BaseCheckpointSaver[Any], consult_id: str) -> bool:
    return checkpointer.get_tuple(thread_config(consult_id)) is not None  # type: ignore[arg-type]


def list_consults(checkpointer: BaseCheckpointSaver[Any], limit: int = 20) -> list[str]:
    seen: list[str] = []
    for item in checkpointer.list(None):
        tid = item.config["configurable"]["thread_id"]
        if tid not in seen:
            seen.append(tid)
        if len(seen) >= limit:
            break
    return seen
