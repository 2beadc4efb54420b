"""Consult sessions: the checkpointer that makes multi-turn consults survive restarts.

Default: a SQLite file under the data dir (``consults.sqlite``), written with durability ``sync`` so a
process killed mid-turn loses no completed turn. A Postgres URL (``EVIGRAPH_CHECKPOINT_URL=postgresql://…``)
uses ``langgraph-checkpoint-postgres`` (the ``postgres`` extra) on an autocommit connection, so the same holds
there. One LangGraph thread per consult.
"""

from __future__ import annotations

import sqlite3
import uuid
from pathlib import Path
from typing import Any

from langgraph.checkpoint.base import BaseCheckpointSaver

from agent.errors import UserError
from agent.redact import redact
from graphs.settings import Settings

CONNECT_TIMEOUT_S = 10
"""Seconds to wait for a Postgres checkpoint server before telling the user it is unreachable."""


def open_checkpointer(settings: Settings) -> BaseCheckpointSaver[Any]:
    url = settings.checkpoint_url
    if url and url.startswith(("postgresql://", "postgres://")):
        return _open_postgres_checkpointer(url)
    from langgraph.checkpoint.sqlite import SqliteSaver

    path = Path(url) if url else settings.checkpoint_path
    path.parent.mkdir(parents=True, exist_ok=True)
    conn = sqlite3.connect(path, check_same_thread=False)
    return SqliteSaver(conn)


def _open_postgres_checkpointer(url: str) -> BaseCheckpointSaver[Any]:
    """A PostgresSaver on one autocommit connection: each checkpoint is committed as it is written.

    The connection options are those of ``PostgresSaver.from_conn_string`` (``dict_row`` is its declared
    connection type; ``prepare_threshold=0`` keeps it working behind transaction-pooling proxies such as
    pgbouncer), but the connection outlives this call. An unreachable or refusing server becomes a UserError.
    """
    try:
        from langgraph.checkpoint.postgres import PostgresSaver
        from psycopg import Connection, Error, OperationalError, ProgrammingError
        from psycopg.conninfo import make_conninfo
        from psycopg.rows import dict_row
    except ImportError as exc:
        raise UserError(
            "A Postgres checkpoint URL needs the `postgres` extra: `pip install -e '.[postgres]'` "
            "(langgraph-checkpoint-postgres, psycopg[binary]); "
            "or unset EVIGRAPH_CHECKPOINT_URL to use SQLite."
        ) from exc
    where = _redacted(url)
    try:
        # Without a timeout, a host that drops packets hangs the consult for the OS's TCP timeout (minutes).
        conninfo = url if "connect_timeout" in url else make_conninfo(url, connect_timeout=CONNECT_TIMEOUT_S)
        conn = Connection.connect(conninfo, autocommit=True, prepare_threshold=0, row_factory=dict_row)
    except (OperationalError, ProgrammingError) as exc:
        reason = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise UserError(
            f"Could not connect to the Postgres consult store at {where} ({reason}). Start the server or fix "
            "EVIGRAPH_CHECKPOINT_URL (postgresql://user[:password]@host:port/database); "
            "or unset it to keep consults in SQLite."
        ) from exc
    saver = PostgresSaver(conn)
    try:
        saver.setup()
    except Error as exc:
        conn.close()
        raise UserError(
            f"Connected to the Postgres consult store at {where}, but could not create its checkpoint "
            f"tables ({exc}). Give that user CREATE rights on the database, or use another database."
        ) from exc
    return saver


def _redacted(url: str) -> str:
    """The URL as it is safe to show: userinfo password and ``?password=`` replaced by ***."""
    return redact(url)


def new_consult_id() -> str:
    return uuid.uuid4().hex[:10]


def thread_config(consult_id: str) -> dict[str, Any]:
    return {"configurable": {"thread_id": consult_id}}


def consult_exists(checkpointer: BaseCheckpointSaver[Any], consult_id: str) -> bool:
    return checkpointer.get_tuple(thread_config(consult_id)) is not None  # type: ignore[arg-type]


RECENT_THREADS_SQL = (
    "SELECT thread_id FROM checkpoints WHERE checkpoint_ns = '' "
    "GROUP BY thread_id ORDER BY MAX(checkpoint_id) DESC LIMIT {limit}"
)
"""Newest consults first, from the checkpoint table both savers share (ids are time-ordered uuid6), without
deserialising a single checkpoint."""


def list_consults(checkpointer: BaseCheckpointSaver[Any], limit: int = 20) -> list[str]:
    """Consult ids, most recently active first.

    Why SQL: ``checkpointer.list`` yields every checkpoint of every consult, each deserialised with its
    pending writes, so a generic walk reads the whole store whenever there are fewer consults than ``limit``.
    The SQLite and Postgres savers keep the same ``checkpoints`` table, so one query answers; any other
    saver (e.g. in-memory) is walked.
    """
    from langgraph.checkpoint.sqlite import SqliteSaver

    limit = max(int(limit), 0)
    if isinstance(checkpointer, SqliteSaver):
        checkpointer.setup()  # a brand-new file has no table yet (the saver creates it on first use)
        with checkpointer.lock:
            rows = checkpointer.conn.execute(RECENT_THREADS_SQL.format(limit="?"), (limit,)).fetchall()
        return [str(row[0]) for row in rows]
    if type(checkpointer).__name__ == "PostgresSaver":  # the optional extra is imported only when used
        with checkpointer.lock:  # type: ignore[attr-defined]
            found = checkpointer.conn.execute(  # type: ignore[attr-defined]
                RECENT_THREADS_SQL.format(limit="%s"), (limit,)
            ).fetchall()
        return [str(row["thread_id"] if isinstance(row, dict) else row[0]) for row in found]
    seen: list[str] = []
    for item in checkpointer.list(None):
        tid = item.config["configurable"]["thread_id"]
        if tid not in seen:
            seen.append(tid)
        if len(seen) >= limit:
            break
    return seen
