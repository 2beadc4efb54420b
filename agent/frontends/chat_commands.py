"""The chat's slash commands that need no running turn: /more, /help, /resume, /export; the consult list.

Why a module of its own: ``terminal`` is the input loop and the running turn — a worker thread, Ctrl-C and
the SIGINT masks, readline — and that delicate part reads best alone. These commands touch none of it: they
read the checkpoints and the last answer and write export files, on the main thread between turns. The
session winds down a cancelled turn before it calls /resume or /export, so these never touch the worker.
``evigraph consults`` lists consults from here without the terminal's REPL.
"""

from __future__ import annotations

import contextlib
import os
import sqlite3
import tempfile
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from langgraph.checkpoint.base import BaseCheckpointSaver, CheckpointTuple
from rich.console import Console
from rich.text import Text

from agent.consult import Consultant
from agent.errors import UserError
from agent.frontends.answer_view import short_answer, shorten
from agent.frontends.render import consult_json, consult_markdown, consults_table, print_answer
from agent.sanitize import clean_text
from agent.sessions import alist_consults, consult_exists, list_consults, thread_config

COMMANDS: dict[str, str] = {
    "/more": "the last answer in full (every passage and chain)",
    "/sources": "sources of the last answer",
    "/trace": "what the agent did in the last turn (step, summary, fallback)",
    "/new": "start a new consult",
    "/resume ID": "continue an earlier consult (without ID: list recent consults)",
    "/export FILE": "save the whole consult as Markdown (.md) or JSON (.json)",
    "/help": "this list",
    "/quit": "leave (Ctrl-D also works)",
}


def consult_summaries(checkpointer: BaseCheckpointSaver[Any], limit: int = 20) -> list[dict[str, Any]]:
    """Recent consults, newest first, with their first question (read from the checkpoints, no KB needed)."""
    out: list[dict[str, Any]] = []
    for cid in list_consults(checkpointer, limit):
        try:
            saved = checkpointer.get_tuple(thread_config(cid))  # type: ignore[arg-type]
        except (sqlite3.DatabaseError, ValueError) as exc:  # one damaged consult: list the others
            out.append(_unreadable(cid, exc))
            continue
        if saved is not None:
            out.append(_summary(cid, saved))
    return out


async def aconsult_summaries(checkpointer: BaseCheckpointSaver[Any], limit: int = 20) -> list[dict[str, Any]]:
    """:func:`consult_summaries` over the server's async checkpointer (the consult page's list)."""
    out: list[dict[str, Any]] = []
    for cid in await alist_consults(checkpointer, limit):
        try:
            saved = await checkpointer.aget_tuple(thread_config(cid))  # type: ignore[arg-type]
        except (sqlite3.DatabaseError, ValueError) as exc:
            out.append(_unreadable(cid, exc))
            continue
        if saved is not None:
            out.append(_summary(cid, saved))
    return out


def _unreadable(cid: str, exc: Exception) -> dict[str, Any]:
    return {
        "consult_id": cid,
        "turns": 0,
        "updated": "",
        "first_question": f"(unreadable: {exc})",
        "status": "",
    }


def _summary(cid: str, saved: CheckpointTuple) -> dict[str, Any]:
    """One consult's row: turns, last activity (UTC), first question and the last answer's status."""
    values = saved.checkpoint.get("channel_values", {})
    turns = list(values.get("turns", []) or [])
    first = turns[0].get("question", "") if turns else values.get("question", "")
    updated = str(saved.checkpoint.get("ts", ""))[:19].replace("T", " ")
    status = str((turns[-1].get("answer") or {}).get("status", "")) if turns else ""
    return {
        "consult_id": cid,
        "turns": len(turns),
        "updated": updated,
        "first_question": first,
        "status": status,
    }


def export_document(
    fmt: str, consult_id: str, turns: list[dict[str, Any]], evidence_text: dict[str, str], kb_version: str
) -> str:
    """A whole consult as ``fmt`` ("md" or "json"): the terminal's /export and the page's export links."""
    exported_at = datetime.now(UTC).isoformat(timespec="seconds")
    if fmt == "json":
        return consult_json(consult_id, turns, kb_version, exported_at)
    return consult_markdown(consult_id, turns, evidence_text, exported_at)


def exported_evidence_ids(turns: list[dict[str, Any]]) -> list[str]:
    """The passages a Markdown export quotes: every evidence id of every turn's answer."""
    return [i for t in turns for i in t.get("answer", {}).get("evidence_ids", [])]


def write_atomically(path: Path, text: str) -> None:
    """Write via a temporary file in the same directory and ``os.replace``: never a half-written export."""
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(text)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


class ConsultCommands:
    """The slash commands of ``terminal.ChatSession`` that show the last answer or work on stored consults.

    A mixin: the session owns the state these methods read and set, declared here for the type checker.
    """

    consultant: Consultant
    console: Console
    consult_id: str | None
    last_answer: dict[str, Any]
    last_trace: list[dict[str, Any]]

    def show_more(self) -> None:
        """The last answer with nothing left out (the turn shows a compact view)."""
        if not self.last_answer:
            self.console.print("No answer yet: ask a question first.")
            return
        ids = list(self.last_answer.get("evidence_ids", []))
        print_answer(self.console, self.last_answer, self.consultant.evidence_texts(ids), full=True)

    def show_help(self) -> None:
        for cmd, what in COMMANDS.items():
            self.console.print(f"  [bold]{cmd:<14}[/] {what}", highlight=False)
        self.console.print("Anything else is a question in the current consult. End a line with \\ to go on.")

    def switch_to(self, consult_id: str) -> None:
        """Make ``consult_id`` current, with its last answer and trace; UserError when it does not exist."""
        if not consult_exists(self.consultant.checkpointer, consult_id):
            raise UserError(f"No consult '{consult_id}'. List them with /resume or `evigraph consults`.")
        turns = self.consultant.history(consult_id)
        values = self.consultant.graph.get_state(thread_config(consult_id)).values  # type: ignore[arg-type]
        self.consult_id = consult_id
        self.last_answer = dict(turns[-1].get("answer", {})) if turns else {}
        self.last_trace = list(values.get("trace", [])) if turns else []

    def resume(self, consult_id: str) -> None:
        if not consult_id:
            rows = consult_summaries(self.consultant.checkpointer, 10)
            self.console.print(consults_table(rows) if rows else "No consults yet.")
            self.console.print("Resume one with /resume ID.")
            return
        try:
            self.switch_to(consult_id)
        except UserError as exc:
            self.console.print(f"[bold red]Error:[/] {exc}")
            return
        self.replay(consult_id)

    def replay(self, consult_id: str) -> None:
        """The consult so far, one turn a few lines: its question and a short recap of its answer."""
        turns = self.consultant.history(consult_id)
        self.console.print(f"Resumed consult {consult_id} ({len(turns)} turn(s)):")
        for i, turn in enumerate(turns, 1):
            question = shorten(clean_text(str(turn.get("question", ""))), 100)
            self.console.print(Text(f"  {i}. {question}", style="bold"))
            self.console.print(Text(f"     → {short_answer(dict(turn.get('answer') or {}))}", style="dim"))
        if turns:
            self.console.print("[dim]/more shows the last answer in full; ask a follow-up to continue.")

    def export(self, target: str) -> None:
        """Write every turn of the consult (answers, sources, KB version) as Markdown or JSON, atomically."""
        if not target:
            self.console.print("Usage: /export FILE.md or /export FILE.json")
            return
        path = Path(target).expanduser()
        fmt = {".json": "json", ".md": "md", ".markdown": "md", ".txt": "md"}.get(path.suffix.lower())
        if fmt is None:
            self.console.print(f"[yellow]Cannot tell the format of {path.name}:[/] use .md or .json.")
            return
        if self.consult_id is None:
            self.console.print("Nothing to export yet: ask a question first.")
            return
        if not path.parent.is_dir():
            self.console.print(f"[bold red]Error:[/] folder {path.parent} does not exist.")
            return
        turns = self.consultant.history(self.consult_id)
        texts = self.consultant.evidence_texts(exported_evidence_ids(turns)) if fmt == "md" else {}
        text = export_document(fmt, self.consult_id, turns, texts, self.consultant.kb.version)
        try:
            write_atomically(path, text)
        except OSError as exc:
            self.console.print(f"[bold red]Error:[/] cannot write {path}: {exc.strerror or exc}")
            return
        self.console.print(f"Exported consult {self.consult_id} ({len(turns)} turn(s)) to {path}")
