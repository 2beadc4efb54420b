"""``evigraph chat``: the terminal front end — a REPL for multi-turn consults.

Why a worker thread: a turn runs in a background thread while the main thread draws the live step panel, so
Ctrl-C (delivered to the main thread) cancels the *turn* and returns to the prompt instead of killing the
session. The worker stops at the next progress event (its callback raises), which is a step boundary: the
checkpoint keeps every completed turn and LangGraph discards the unfinished step on the next question.
Input uses the stdlib ``readline`` (history file under the data dir, Tab completes commands), so no extra
dependency is needed. The slash commands over stored consults (/more, /resume, /export…) live in
``chat_commands``, away from the threads and signals here.
"""

from __future__ import annotations

import contextlib
import logging
import os
import queue
import signal
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.live import Live

from agent.consult import Consultant, Event, TurnResult
from agent.errors import EXPECTED_ERRORS
from agent.frontends.chat_commands import COMMANDS, ConsultCommands
from agent.frontends.render import (
    event_line,
    print_answer,
    sources_renderable,
    steps_panel,
    trace_renderable,
    turn_footer,
)

try:
    import readline
except ImportError:  # Windows without pyreadline: plain input(), no history
    readline = None  # type: ignore[assignment]

log = logging.getLogger("evigraph")

HISTORY_LENGTH = 1000


class TurnCancelled(Exception):
    """Raised inside the worker, from the progress callback, to stop a turn the person cancelled."""


class TurnWorker(threading.Thread):
    """Runs one consult turn off the main thread and hands its progress events over through a queue."""

    def __init__(self, consultant: Consultant, question: str, consult_id: str | None, task: str) -> None:
        super().__init__(name="evigraph-turn", daemon=True)
        self.consultant, self.question, self.consult_id, self.task = consultant, question, consult_id, task
        self.events: queue.Queue[Event] = queue.Queue()
        self.cancel = threading.Event()
        self.result: TurnResult | None = None
        self.error: BaseException | None = None

    def on_event(self, event: Event) -> None:
        if self.cancel.is_set():
            raise TurnCancelled
        self.events.put(event)

    def run(self) -> None:
        block_sigint_in_this_thread()  # and in every thread the turn starts (LangGraph's pool, onnxruntime)
        try:
            _test_hold(self.cancel)
            self.result = self.consultant.ask(
                self.question, consult_id=self.consult_id, task=self.task, on_event=self.on_event
            )
        except TurnCancelled:
            self.result = None  # the person pressed Ctrl-C: no result, and nothing to report
        except BaseException as exc:  # handed to the main thread, which reports it and stays in the session
            self.error = exc


def block_sigint_in_this_thread() -> None:
    """Keep Ctrl-C (SIGINT) away from this thread and the threads it starts: only the main thread handles it.

    Why: Linux may deliver a process-directed SIGINT to another thread when the main thread cannot take it
    at that moment; Python then only sets a flag for the main thread, and a main thread asleep in
    readline's ``select`` at the prompt would not wake. Threads inherit the mask of the thread that starts
    them, so blocking it in the turn's worker covers the pools the turn creates. (A precaution: the lost
    Ctrl-C seen under stress-ng turned out to be an inherited SIG_IGN, handled in ``ChatSession.run``.)
    """
    if hasattr(signal, "pthread_sigmask"):
        signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})


TEST_HOLD_ENV = "EVIGRAPH_TEST_HOLD_FILE"
"""Test-only knob: while the file this names exists, a turn waits before it starts (until cancelled), so a
test's Ctrl-C always lands on a running turn however fast or loaded the machine is."""


def _test_hold(cancel: threading.Event) -> None:
    hold = os.environ.get(TEST_HOLD_ENV)
    while hold and os.path.exists(hold):
        if cancel.wait(0.05):
            raise TurnCancelled


class ChatSession(ConsultCommands):
    """One terminal chat: the current consult, the last turn's answer and trace, and the command loop."""

    def __init__(
        self,
        consultant: Consultant,
        console: Console,
        task: str = "auto",
        consult_id: str | None = None,
        history_path: Path | None = None,
    ) -> None:
        self.consultant, self.console, self.task = consultant, console, task
        self.history_path = history_path
        self.consult_id: str | None = None
        self.last_answer: dict[str, Any] = {}
        self.last_trace: list[dict[str, Any]] = []
        self.worker: TurnWorker | None = None  # a cancelled turn that may still be winding down
        if consult_id is not None:
            self.switch_to(consult_id)

    # ---- the loop -------------------------------------------------------------------------------------

    def run(self) -> int:
        """Read and handle lines until /quit, Ctrl-D or two Ctrl-C in a row; returns the exit code."""
        if threading.current_thread() is threading.main_thread():
            # A process started with SIGINT ignored (a background job of a script, `nohup`) inherits that,
            # and Python then installs no Ctrl-C handler: the chat's Ctrl-C did nothing at the prompt (seen
            # when the suite ran from a backgrounded script under stress-ng). A chat is interactive: take it.
            signal.signal(signal.SIGINT, signal.default_int_handler)
        self.console.print(
            f"[bold]EviGraph chat[/] · KB {self.consultant.kb.version} · {self.consultant.mode} mode · "
            f"consult {self.consult_id or 'new'}\n"
            "Type a question, or /help for commands. Ctrl-C cancels a running turn; Ctrl-D leaves."
        )
        if self.consult_id is not None:
            self.replay(self.consult_id)
        interrupts = 0
        with self.readline_history():
            while True:
                try:
                    line = self.read_line()
                except EOFError:
                    self.console.print()
                    break
                except KeyboardInterrupt:
                    interrupts += 1
                    self.console.print()
                    if interrupts >= 2:
                        break
                    self.console.print("[dim](Ctrl-C again, Ctrl-D or /quit to leave.)")
                    continue
                interrupts = 0
                try:
                    if not self.handle(line):
                        break
                except KeyboardInterrupt:
                    self.console.print("[yellow]Interrupted.")
        self.wind_down()
        self.console.print("[dim]Bye.")
        return 0

    def prompt(self) -> str:
        label = f"evigraph [{self.consult_id or 'new'}]> "
        if readline is None or not self.console.is_terminal:
            return label
        return "\001\033[1;36m\002" + label + "\001\033[0m\002"  # \001..\002: zero-width for readline

    def read_line(self) -> str:
        """One input line; a trailing backslash continues on the next line (for pasted MCQ options)."""
        parts = [input(self.prompt())]
        if not self.console.is_terminal:  # piped input is not echoed: keep transcripts readable
            self.console.print(parts[0], markup=False, highlight=False)
        while parts[-1].endswith("\\"):
            parts[-1] = parts[-1][:-1]
            parts.append(input("... "))
        return "\n".join(parts).strip()

    def handle(self, line: str) -> bool:
        """Run one command or question; False means leave."""
        if not line:
            return True
        if not line.startswith("/"):
            self.run_turn(line)
            return True
        name, _, arg = line.partition(" ")
        arg = arg.strip()
        if name in ("/quit", "/exit", "/q"):
            return False
        if name == "/help":
            self.show_help()
        elif name == "/more":
            self.show_more()
        elif name == "/sources":
            self.console.print(sources_renderable(self.last_answer) if self.last_answer else "No answer yet.")
        elif name == "/trace":
            self.console.print(trace_renderable(self.last_trace))
        elif name == "/new":
            self.consult_id, self.last_answer, self.last_trace = None, {}, []
            self.console.print("New consult: it gets its id with the first question.")
        elif name in ("/resume", "/export"):
            self.wind_down()  # a cancelled turn stops (a finished one is kept) before the consult is read
            (self.resume if name == "/resume" else self.export)(arg)
        else:
            self.console.print(f"[yellow]Unknown command {name}.[/] Type /help for the list.")
        return True

    # ---- a turn ---------------------------------------------------------------------------------------

    def run_turn(self, question: str) -> None:
        """Ask in the worker thread, drawing the steps live; Ctrl-C cancels the turn, not the session."""
        self.wind_down()
        worker = TurnWorker(self.consultant, question, self.consult_id, self.task)
        self.worker = worker
        started = time.perf_counter()
        lines: list[str] = []
        tokens = 0
        cancelled = False
        # Ctrl-C during a turn only sets an event the loop reads: a KeyboardInterrupt raised wherever the main
        # thread happened to be (inside Live's start, with "working…" already on screen — a window a loaded
        # machine widens) escaped the turn and left the panel half-open.
        pressed = threading.Event()
        on_main = threading.current_thread() is threading.main_thread()  # only it may set signal handlers
        previous = signal.signal(signal.SIGINT, lambda *_: pressed.set()) if on_main else None
        try:
            with Live(
                steps_panel(lines, "working…", True), console=self.console, refresh_per_second=8
            ) as live:
                worker.start()
                while worker.is_alive() or not worker.events.empty():
                    if pressed.is_set():
                        worker.cancel.set()
                        cancelled = True
                        break
                    while not worker.events.empty():
                        event = worker.events.get_nowait()
                        if event.get("step") == "token":
                            tokens += 1
                        else:
                            lines.append(event_line(event))
                    status = f"working… {time.perf_counter() - started:.0f} s"
                    if tokens:
                        status = f"writing the answer… {tokens} tokens"
                    live.update(steps_panel(lines, status, True))
                    worker.join(0.1)
                elapsed = time.perf_counter() - started
                final = "cancelled" if cancelled else f"done in {elapsed:.1f} s"
                live.update(steps_panel(lines, final, False))
        finally:
            if on_main:
                signal.signal(signal.SIGINT, previous)
        if not self.console.is_terminal:
            self.console.line()  # a non-terminal Live leaves its last frame without a newline
        if cancelled:
            self.console.print("[yellow]Turn cancelled.[/] Completed turns are kept; ask again or /quit.")
            return
        self.finish_turn(worker)

    def finish_turn(self, worker: TurnWorker) -> None:
        self.worker = None
        if worker.error is not None:
            self.report(worker.error)
            return
        result = worker.result
        if result is None:
            return
        self.adopt(result)
        print_answer(
            self.console, result.answer, self.consultant.evidence_texts(result.answer.get("evidence_ids", []))
        )
        self.console.print(
            turn_footer(result.consult_id, result.seconds, result.llm_calls, result.llm_tokens)
        )

    def adopt(self, result: TurnResult) -> None:
        self.consult_id, self.last_answer, self.last_trace = result.consult_id, result.answer, result.trace

    def wind_down(self) -> None:
        """Wait for a cancelled turn to stop before anything else touches the consult."""
        worker = self.worker
        if worker is None:
            return
        if worker.is_alive():
            self.console.print("[dim]Waiting for the cancelled turn to stop…")
            try:
                while worker.is_alive():
                    worker.join(0.2)
            except KeyboardInterrupt:
                return  # keep it recorded; the next command waits again
        self.worker = None
        if worker.result is not None:  # it finished before it noticed the cancel: the turn is kept
            self.adopt(worker.result)
            self.console.print(
                f"[dim]The cancelled turn had already finished; consult {self.consult_id} keeps it."
            )

    def report(self, exc: BaseException) -> None:
        if isinstance(exc, EXPECTED_ERRORS):
            self.console.print(f"[bold red]Error:[/] {exc}")
        else:
            log.error("unexpected error in a chat turn", exc_info=exc)
            self.console.print(f"[bold red]Unexpected error ({type(exc).__name__}):[/] {exc}")

    # ---- input history --------------------------------------------------------------------------------

    @contextlib.contextmanager
    def readline_history(self) -> Iterator[None]:
        """Load the history file and Tab completion of commands; save the history on the way out."""
        if readline is None:
            yield
            return
        words = [c.split()[0] for c in COMMANDS]
        readline.set_completer(lambda text, i: ([w for w in words if w.startswith(text)] + [None])[i])
        readline.set_completer_delims(" \t\n")
        readline.parse_and_bind("tab: complete")
        readline.set_history_length(HISTORY_LENGTH)
        if self.history_path is not None and self.history_path.exists():
            with contextlib.suppress(OSError):
                readline.read_history_file(self.history_path)
        try:
            yield
        finally:
            if self.history_path is not None:
                with contextlib.suppress(OSError):
                    self.history_path.parent.mkdir(parents=True, exist_ok=True)
                    readline.write_history_file(self.history_path)
