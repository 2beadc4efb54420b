"""How errors reach a person: one line saying what happened and what to do, never a bare traceback.

Known failures (bad input, missing or corrupt KB, unreachable store or LLM) are turned into a short red
message and exit code 2. Anything unexpected is still reported in one line, with the log path for details.
"""

from __future__ import annotations

import contextlib
import functools
import logging
import sqlite3
from collections.abc import Iterator

import typer
from rich.console import Console

from agent.redact import redact
from graphs.building.loaders import LoadError
from graphs.disk.layout import KBError
from graphs.stores.base import StoreError

log = logging.getLogger("evigraph")
_console = Console(stderr=True)


class UserError(RuntimeError):
    """An error whose message is meant for the person at the terminal (or in Slack, or over HTTP) as it is.

    The message is redacted when the error is made, so no front end can show a password or key it quotes.
    """

    def __init__(self, message: str = "") -> None:
        super().__init__(redact(message))


EXPECTED_ERRORS: tuple[type[Exception], ...] = (
    UserError,
    KBError,
    LoadError,
    StoreError,
    ValueError,
    FileNotFoundError,
    PermissionError,
    sqlite3.DatabaseError,
)


POSTGRES_DOWN = (
    "The consult store (Postgres) is unreachable; consults already stored are kept. Try again when it is "
    "back (check EVIGRAPH_CHECKPOINT_URL and that the server is running)."
)
NEO4J_DOWN = (
    "The graph store (Neo4j) is unreachable. Try again when it is back (check EVIGRAPH_NEO4J_URI and that "
    "the server is running)."
)


@functools.cache
def store_driver_errors() -> tuple[tuple[type[Exception], str], ...]:
    """The drivers' "store is down" classes with the sentence for each: psycopg's ``OperationalError``
    (``AdminShutdown`` and the pool's ``PoolTimeout`` are subclasses) and neo4j's ``ServiceUnavailable`` /
    ``SessionExpired``. A driver that is not installed (psycopg is the `postgres` extra) adds nothing."""
    found: list[tuple[type[Exception], str]] = []
    with contextlib.suppress(ImportError):
        import psycopg

        found.append((psycopg.OperationalError, POSTGRES_DOWN))
    with contextlib.suppress(ImportError):
        from neo4j.exceptions import ServiceUnavailable, SessionExpired

        found += [(ServiceUnavailable, NEO4J_DOWN), (SessionExpired, NEO4J_DOWN)]
    return tuple(found)


def store_outage(exc: BaseException) -> str | None:
    """The sentence for a store that is down, when ``exc`` (or what caused it) is a driver's "down" error;
    else ``None``.

    Why: those errors reached a user as "Internal error" (HTTP 500) although nothing was wrong but a store
    to wait for (issue 23). The HTTP app registers the same classes as handlers (``store_driver_errors``)."""
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        for cls, sentence in store_driver_errors():
            if isinstance(current, cls):
                return sentence
        current = current.__cause__ or current.__context__
    return None


@contextlib.contextmanager
def user_errors() -> Iterator[None]:
    """Turn expected failures into a clear message and exit code 2."""
    try:
        yield
    except typer.Exit:
        raise
    except KeyboardInterrupt:
        _console.print("[yellow]Interrupted.")
        raise typer.Exit(130) from None
    except EXPECTED_ERRORS as exc:
        _console.print(f"[bold red]Error:[/] {redact(str(exc))}")
        raise typer.Exit(2) from None
    except Exception as exc:
        outage = store_outage(exc)
        if outage:
            log.error("%s (%s: %s)", outage, type(exc).__name__, redact(str(exc)))
            _console.print(f"[bold red]Error:[/] {outage}")
            raise typer.Exit(2) from None
        log.exception("unexpected error")
        _console.print(f"[bold red]Unexpected error ({type(exc).__name__}):[/] {redact(str(exc))}")
        raise typer.Exit(1) from None
