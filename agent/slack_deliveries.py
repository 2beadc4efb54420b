"""Which Slack messages were already taken, kept in the consult store so a retry after a restart is dropped.

Why in the consult store: Slack redelivers an event it thinks was lost (``X-Slack-Retry-Num``), also to a
bot that restarted meanwhile, and a direct message that mentions the bot arrives twice (``message.im`` and
``app_mention``, with different ``event_id``s). A set in memory forgets on restart, so the thread was answered
twice. The store that keeps the consults (SQLite file or Postgres) already survives restarts and is shared
by every process serving the same consults, so a one-table claim there answers "first time?" for all.

The key is the message itself (team, channel, ts): every delivery of one message — a retry of the same
``event_id``, or the second event type of a DM mention — carries it, while ``client_msg_id`` is missing from
some events. The claim is one ``INSERT … ON CONFLICT DO NOTHING`` (atomic in both databases); the row also
keeps the event id and the reply's ts. Any other checkpointer (in-memory, in tests) gets a set in memory.
"""

from __future__ import annotations

import logging
import threading
import time
from typing import Any

from langgraph.checkpoint.base import BaseCheckpointSaver

CREATE_SQL = (
    "CREATE TABLE IF NOT EXISTS evigraph_slack_deliveries ("
    "message_key TEXT PRIMARY KEY, event_id TEXT, consult_id TEXT, reply_ts TEXT, "
    "claimed_at DOUBLE PRECISION)"
)
CLAIM_SQL = (
    "INSERT INTO evigraph_slack_deliveries (message_key, event_id, consult_id, claimed_at) "
    "VALUES ({p}, {p}, {p}, {p}) ON CONFLICT (message_key) DO NOTHING"
)
log = logging.getLogger("evigraph.slack")

REPLY_SQL = "UPDATE evigraph_slack_deliveries SET reply_ts = {p} WHERE message_key = {p}"


class DeliveryLog:
    """``claim(key)`` is True exactly once per message key, across threads, processes and restarts."""

    def __init__(self, checkpointer: BaseCheckpointSaver[Any]) -> None:
        self._saver = checkpointer
        self._kind = _kind(checkpointer)
        self._memory: set[str] = set()
        self._lock = threading.Lock()
        self._ready = False

    def claim(self, key: str, event_id: str = "", consult_id: str = "") -> bool:
        """True the first time ``key`` is seen. A store that cannot be written falls back to memory, so
        the person still gets an answer (or the turn's own error) rather than silence."""
        with self._lock:
            if key in self._memory:
                return False
            self._memory.add(key)
        if self._kind == "memory":
            return True
        try:
            return self._execute(CLAIM_SQL, (key, event_id, consult_id, time.time())) == 1
        except Exception:
            log.exception("could not record Slack message %s in the consult store; remembered in memory", key)
            return True

    def record_reply(self, key: str, reply_ts: str) -> None:
        """Remember which bot message answers ``key`` (for an operator looking at the table)."""
        if self._kind == "memory":
            return
        try:
            self._execute(REPLY_SQL, (reply_ts, key))
        except Exception as exc:  # bookkeeping only: the answer matters more
            log.warning("could not record the reply to Slack message %s: %s", key, exc)

    def _execute(self, sql: str, params: tuple[Any, ...]) -> int:
        placeholder = "?" if self._kind == "sqlite" else "%s"
        conn = self._saver.conn  # type: ignore[attr-defined]
        with self._saver.lock:  # type: ignore[attr-defined]  # the savers' own connection lock
            if not self._ready:
                conn.execute(CREATE_SQL)
                self._ready = True
            cursor = conn.execute(sql.format(p=placeholder), params)
            if self._kind == "sqlite":
                conn.commit()  # the Postgres saver's connection is autocommit
            return int(cursor.rowcount)


def _kind(checkpointer: BaseCheckpointSaver[Any]) -> str:
    from langgraph.checkpoint.sqlite import SqliteSaver

    if isinstance(checkpointer, SqliteSaver):
        return "sqlite"
    if type(checkpointer).__name__ == "PostgresSaver":  # the optional extra is imported only when used
        return "postgres"
    return "memory"


def message_key(team_id: str, channel: str, ts: str) -> str:
    return f"{team_id}/{channel}/{ts}"
