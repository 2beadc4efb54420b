"""How errors reach a person: one line saying what happened and what to do, never a bare traceback.

Known failures (bad input, missing or corrupt KB, unreachable store or LLM) are turned into a short red
message and exit code 2. Anything unexpected is still reported in one line, with the log path for details.
"""

from __future__ import annotations

import contextlib
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
        log.exception("unexpected error")
        _console.print(f"[bold red]Unexpected error ({type(exc).__name__}):[/] {redact(str(exc))}")
        raise typer.Exit(1) from None
