"""Consult sessions: the checkpointer that makes multi-turn consults survive restarts.

Default: a SQLite file under the data dir (``consults.sqlite``), written with durability ``sync`` so a
process killed mid-turn loses no completed turn. A Postgres URL (``EVIGRAPH_CHECKPOINT_URL=postgresql://…``)
uses ``langgraph-checkpoint-postgres`` (the ``postgres`` extra) on an autocommit connection, so the same holds
there. One LangGraph thread per consult.
"""

from __future__ import annotations

import asyncio
import os
import re
import sqlite3
import uuid
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

from langgraph.checkpoint.base import BaseCheckpointSaver

from agent.errors import UserError
from agent.redact import redact
from graphs.model.settings import Settings

CONNECT_TIMEOUT_S = 10
"""Seconds to wait for a Postgres checkpoint server before telling the user it is unreachable."""


def open_checkpointer(settings: Settings, *, read_only: bool = False) -> BaseCheckpointSaver[Any]:
    """The consult store; ``read_only`` (listing consults) falls back to a read-only connection when the
    file cannot be written, so `evigraph consults` still lists what it can."""
    url = settings.checkpoint_url
    if url and url.startswith(("postgresql://", "postgres://")):
        return _open_postgres_checkpointer(url)
    path = Path(url) if url else settings.checkpoint_path
    try:
        return _open_sqlite_checkpointer(path)
    except UserError:
        if read_only and path.is_file():
            return _open_sqlite_read_only(path)
        raise


def _open_sqlite_checkpointer(path: Path) -> BaseCheckpointSaver[Any]:
    """A SqliteSaver whose tables are created now, so a store that cannot be used fails here, with its path
    and the fix, and not in the middle of a turn as "unable to open database file"."""
    from langgraph.checkpoint.sqlite import SqliteSaver

    try:
        path.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise UserError(
            f"Cannot create the folder of the consult store {path.parent} ({exc.strerror or exc}). Make it "
            "writable, or set EVIGRAPH_DATA_DIR (or EVIGRAPH_CHECKPOINT_URL) to a writable place."
        ) from exc
    conn = None
    try:
        conn = sqlite3.connect(path, check_same_thread=False)
        saver = SqliteSaver(conn)
        saver.setup()
        for where in (path, path.parent):  # SQLite opens an unwritable file read-only without a word
            if not os.access(where, os.W_OK):
                raise sqlite3.OperationalError(f"{where} is read-only")
    except sqlite3.DatabaseError as exc:
        if conn is not None:
            conn.close()
        raise UserError(consult_store_problem(path, exc)) from exc
    return saver


def consult_store_problem(path: Path, exc: Exception) -> str:
    """What went wrong with the SQLite consult store at ``path`` and what to do, in one message."""
    text = str(exc).lower()
    if "not a database" in text or "malformed" in text or "corrupt" in text:
        return (
            f"The consult store {path} is damaged ({exc}). Move it aside to start a fresh one "
            f"(`mv {path} {path}.damaged`; the consults in it are lost unless a backup has them), or set "
            "EVIGRAPH_CHECKPOINT_URL to another store. `evigraph consults` lists what can still be read."
        )
    if "readonly" in text or "read-only" in text or "unable to open" in text or "permission" in text:
        return (
            f"The consult store {path} cannot be written ({exc}). Make the file and its folder writable "
            f"(e.g. `chmod u+w {path} {path.parent}`), or set EVIGRAPH_DATA_DIR (or EVIGRAPH_CHECKPOINT_URL) "
            "to a writable place. `evigraph consults` can still list the consults in it."
        )
    if "locked" in text or "busy" in text:
        return f"The consult store {path} is locked by another process ({exc}). Wait a moment and try again."
    return f"The consult store {path} cannot be used ({exc}). Set EVIGRAPH_CHECKPOINT_URL to another store."


def _sqlite_path(conn: sqlite3.Connection) -> Path:
    """The file behind a SQLite connection (for messages)."""
    try:
        return Path(conn.execute("PRAGMA database_list").fetchone()[2])
    except sqlite3.DatabaseError:
        return Path("consults.sqlite")


def _open_sqlite_read_only(path: Path) -> BaseCheckpointSaver[Any]:
    """A SqliteSaver on a read-only connection, for listing a store that cannot be written."""
    from langgraph.checkpoint.sqlite import SqliteSaver

    try:
        try:
            conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True, check_same_thread=False)
            conn.execute("SELECT COUNT(*) FROM checkpoints").fetchone()
        except sqlite3.OperationalError:
            # In a read-only folder SQLite cannot create the WAL index it needs even to read: tell it the
            # file cannot change (nobody can write it there either), which reads without one.
            conn = sqlite3.connect(f"file:{path}?mode=ro&immutable=1", uri=True, check_same_thread=False)
            conn.execute("SELECT COUNT(*) FROM checkpoints").fetchone()
    except sqlite3.DatabaseError as exc:
        raise UserError(consult_store_problem(path, exc)) from exc
    saver = SqliteSaver(conn)
    saver.is_setup = True  # the tables exist (checked above); setting them up would write
    return saver


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


CONSULT_ID = re.compile(r"^[A-Za-z0-9_.\-]{1,128}$")
"""What a consult id may look like in a URL (ids are made by :func:`new_consult_id`, or given by a client)."""


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
        try:
            checkpointer.setup()  # a brand-new file has no table yet (the saver creates it on first use)
            with checkpointer.lock:
                rows = checkpointer.conn.execute(RECENT_THREADS_SQL.format(limit="?"), (limit,)).fetchall()
        except sqlite3.DatabaseError as exc:
            raise UserError(consult_store_problem(_sqlite_path(checkpointer.conn), exc)) from exc
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


# ----- async checkpointers (the HTTP server runs turns with ``astream``) -----


@asynccontextmanager
async def open_async_checkpointer(
    settings: Settings, pool_size: int = 4
) -> AsyncIterator[BaseCheckpointSaver[Any]]:
    """The async twin of :func:`open_checkpointer`, open for the ``async with`` block.

    SQLite: one ``aiosqlite`` connection (the saver serialises its statements with an asyncio lock; the
    file is in WAL mode, so a CLI process can read and write beside the server). Postgres: a connection
    pool of ``pool_size`` autocommit connections, so parallel consults do not queue on one socket.
    """
    url = settings.checkpoint_url
    if url and url.startswith(("postgresql://", "postgres://")):
        async with _open_async_postgres(url, pool_size) as saver:
            yield saver
        return
    import aiosqlite
    from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver

    path = Path(url) if url else settings.checkpoint_path
    _open_sqlite_checkpointer(path).conn.close()  # type: ignore[attr-defined]  # same checks and messages
    async with aiosqlite.connect(path, timeout=30.0) as conn:
        saver = AsyncSqliteSaver(conn)
        await saver.setup()
        yield saver


@asynccontextmanager
async def _open_async_postgres(url: str, pool_size: int) -> AsyncIterator[BaseCheckpointSaver[Any]]:
    """An AsyncPostgresSaver over a pool with the connection options of the sync saver above."""
    try:
        from langgraph.checkpoint.postgres.aio import AsyncPostgresSaver
        from psycopg import Error
        from psycopg.conninfo import make_conninfo
        from psycopg.rows import dict_row
        from psycopg_pool import AsyncConnectionPool, PoolTimeout
    except ImportError as exc:
        raise UserError(
            "A Postgres checkpoint URL needs the `postgres` extra: `pip install -e '.[postgres]'` "
            "(langgraph-checkpoint-postgres, psycopg[binary], psycopg-pool); "
            "or unset EVIGRAPH_CHECKPOINT_URL to use SQLite."
        ) from exc
    conninfo = url if "connect_timeout" in url else make_conninfo(url, connect_timeout=CONNECT_TIMEOUT_S)
    pool: AsyncConnectionPool[Any] = AsyncConnectionPool(
        conninfo,
        min_size=1,
        max_size=max(1, pool_size),
        open=False,
        timeout=CONNECT_TIMEOUT_S,
        kwargs={"autocommit": True, "prepare_threshold": 0, "row_factory": dict_row},
    )
    try:
        await pool.open(wait=True, timeout=CONNECT_TIMEOUT_S)
    except PoolTimeout as exc:
        await pool.close()
        raise UserError(
            f"Could not connect to the Postgres consult store at {_redacted(url)} within "
            f"{CONNECT_TIMEOUT_S} s. Start the server or fix EVIGRAPH_CHECKPOINT_URL; "
            "or unset it to keep consults in SQLite."
        ) from exc
    try:
        saver = AsyncPostgresSaver(pool)
        try:
            await saver.setup()
        except Error as exc:
            raise UserError(
                f"Connected to the Postgres consult store at {_redacted(url)}, but could not create its "
                f"checkpoint tables ({exc}). Give that user CREATE rights on the database."
            ) from exc
        yield saver
    finally:
        await pool.close()


async def aconsult_exists(checkpointer: BaseCheckpointSaver[Any], consult_id: str) -> bool:
    return await checkpointer.aget_tuple(thread_config(consult_id)) is not None  # type: ignore[arg-type]


async def alist_consults(checkpointer: BaseCheckpointSaver[Any], limit: int = 20) -> list[str]:
    """The async twin of :func:`list_consults` for the server's savers (one SQL query, not a walk)."""
    from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver

    limit = max(int(limit), 0)
    if isinstance(checkpointer, AsyncSqliteSaver):
        async with (
            checkpointer.lock,
            checkpointer.conn.execute(RECENT_THREADS_SQL.format(limit="?"), (limit,)) as cursor,
        ):
            return [str(row[0]) for row in await cursor.fetchall()]
    if type(checkpointer).__name__ == "AsyncPostgresSaver":  # the optional extra is imported only when used
        async with checkpointer._cursor() as cursor:  # type: ignore[attr-defined]
            await cursor.execute(RECENT_THREADS_SQL.format(limit="%s"), (limit,))
            return [str(row["thread_id"]) for row in await cursor.fetchall()]
    return await asyncio.to_thread(list_consults, checkpointer, limit)  # any other saver: walked (in-memory)
