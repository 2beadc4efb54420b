"""A Neo4j driver behind EviGraph's retry policy and error messages (used by the Neo4j store and loader).

Why our own retries instead of the driver's managed transactions: the driver retries for up to 30 s by
default, so a server that is down would hang every call for half a minute. Here transient failures
(``TransientError``, ``ServiceUnavailable``, ``SessionExpired``) are retried a bounded number of times with
exponential backoff, and every failure leaves as a ``StoreError`` naming the URI and what to do: start
the server, fix the credentials, or pick another database.

Reads have a deadline (``query_timeout_s``): the driver sets no socket read timeout unless the server hints
one, so a frozen server (stopped process, dropped packets after the handshake) would hold a consult forever.
The read runs on a daemon thread and the caller stops waiting at the deadline with a ``StoreError``; the
server is also told the same transaction timeout, so a merely slow query is cancelled there too.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import Any, LiteralString

from neo4j import READ_ACCESS, WRITE_ACCESS, Driver, GraphDatabase, Query, Record
from neo4j.exceptions import (
    AuthError,
    ClientError,
    ConfigurationError,
    DriverError,
    Neo4jError,
    ServiceUnavailable,
    SessionExpired,
    TransientError,
)

from graphs.stores.base import StoreError

QUERY_TIMEOUT_S = 30.0
"""Deadline of one read (all its retries included); a consult step that waits longer fails with a message."""


class Neo4jConnection:
    """A driver plus our retry policy; driver failures leave here as ``StoreError``s that say what to do."""

    def __init__(
        self,
        uri: str,
        user: str | None = None,
        password: str | None = None,
        database: str = "neo4j",
        *,
        connection_timeout_s: float = 5.0,
        retry_attempts: int = 4,
        backoff_base_s: float = 0.1,
        backoff_cap_s: float = 2.0,
        query_timeout_s: float | None = QUERY_TIMEOUT_S,
    ) -> None:
        self.uri = uri
        self.database = database
        self._user = user
        self._password = password
        self._attempts = max(1, retry_attempts)
        self._backoff_base_s = backoff_base_s
        self._backoff_cap_s = backoff_cap_s
        self.query_timeout_s = query_timeout_s
        auth = (user or "neo4j", password) if password is not None else None
        try:
            self._driver: Driver = GraphDatabase.driver(
                uri,
                auth=auth,
                connection_timeout=connection_timeout_s,
                connection_acquisition_timeout=connection_timeout_s * 2,
                max_transaction_retry_time=0.0,
                # Our queries are fixed; "property does not exist yet" hints on an empty graph are noise.
                notifications_min_severity="OFF",
            )
        except (ConfigurationError, ValueError) as exc:
            raise StoreError(
                f"Invalid Neo4j URI {uri!r} ({exc}). Use bolt://host:port or neo4j://host:port."
            ) from exc

    def read(self, query: LiteralString, /, **params: Any) -> list[Record]:
        """One read, within ``query_timeout_s`` (see the module docstring)."""
        timeout = self.query_timeout_s
        if timeout is None:
            return self._run(query, params, write=False)
        return _within(
            timeout,
            lambda: self._run(query, params, write=False, server_timeout_s=timeout),
            lambda: (
                f"Neo4j at {self.uri} did not answer a read within {timeout:g} s (the server may be frozen "
                "or overloaded). Check it, or set EVIGRAPH_GRAPH_BACKEND=embedded."
            ),
        )

    def rows(self, query: LiteralString, /, **params: Any) -> list[list[Any]]:
        """The list that a ``RETURN collect([...])`` query returns in its single record."""
        records = self.read(query, **params)
        return list(records[0][0]) if records else []

    def write(self, query: LiteralString, /, **params: Any) -> list[Record]:
        """One write transaction (safe to retry: the loader's writes are idempotent MERGEs)."""
        return self._run(query, params, write=True)

    def _run(
        self,
        query: LiteralString,
        params: dict[str, Any],
        *,
        write: bool,
        server_timeout_s: float | None = None,
    ) -> list[Record]:
        for attempt in range(1, self._attempts + 1):
            try:
                mode = WRITE_ACCESS if write else READ_ACCESS
                with self._driver.session(database=self.database, default_access_mode=mode) as session:
                    if not write:
                        return list(session.run(Query(query, timeout=server_timeout_s), params))
                    with session.begin_transaction() as tx:
                        records = list(tx.run(query, params))
                        tx.commit()
                        return records
            except AuthError as exc:
                who = f"user {self._user or 'neo4j'!r}" + ("" if self._password else " with no password")
                raise StoreError(
                    f"Neo4j at {self.uri} rejected the credentials ({who}): {exc.message}. Set "
                    "EVIGRAPH_NEO4J_USER / EVIGRAPH_NEO4J_PASSWORD to a valid account."
                ) from exc
            except (TransientError, ServiceUnavailable, SessionExpired) as exc:
                if attempt == self._attempts or not exc.is_retryable():
                    raise StoreError(self._unreachable(exc, attempt)) from exc
                time.sleep(min(self._backoff_cap_s, self._backoff_base_s * 2 ** (attempt - 1)))
            except ClientError as exc:
                if exc.code == "Neo.ClientError.Database.DatabaseNotFound":
                    raise StoreError(
                        f"Neo4j at {self.uri} has no database {self.database!r}. Create it or set "
                        "EVIGRAPH_NEO4J_DATABASE (Community edition only has 'neo4j')."
                    ) from exc
                raise StoreError(f"Neo4j at {self.uri} refused a query: {exc.message}") from exc
            except Neo4jError as exc:
                raise StoreError(f"Neo4j at {self.uri} failed: {exc.message}") from exc
            except DriverError as exc:
                raise StoreError(f"The Neo4j driver failed talking to {self.uri}: {exc}") from exc
        raise AssertionError("unreachable: the loop returns or raises")

    def _unreachable(self, exc: Exception, attempts: int) -> str:
        if isinstance(exc, TransientError):
            return f"Neo4j at {self.uri} kept failing with a transient error after {attempts} attempts: {exc}"
        return (
            f"Cannot reach Neo4j at {self.uri} (database {self.database!r}) after {attempts} attempt(s): "
            f"{exc}. Start the server (the bundled one: `bash graphs/neo4j/server/neo4j-server.sh start`), "
            "or set EVIGRAPH_NEO4J_URI to a running one, or EVIGRAPH_GRAPH_BACKEND=embedded."
        )

    def close(self) -> None:
        self._driver.close()


def _within(timeout_s: float, call: Callable[[], list[Record]], message: Callable[[], str]) -> list[Record]:
    """``call()`` on a daemon thread; ``StoreError(message())`` if it has not returned after ``timeout_s``.

    Why a daemon thread: a read blocked on a frozen socket cannot be interrupted from outside; the thread is
    left to end when the socket does, and being a daemon it never keeps the process from exiting.
    """
    outcome: dict[str, Any] = {}
    done = threading.Event()

    def run() -> None:
        try:
            outcome["value"] = call()
        except BaseException as exc:  # handed to the caller below
            outcome["error"] = exc
        finally:
            done.set()

    threading.Thread(target=run, name="neo4j-read", daemon=True).start()
    if not done.wait(timeout_s):
        raise StoreError(message())
    if "error" in outcome:
        raise outcome["error"]
    return outcome["value"]
