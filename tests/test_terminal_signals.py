"""Ctrl-C reaches the chat's main thread: the turn's worker and every thread a turn starts block SIGINT.

Why: Linux may hand a process-directed SIGINT to another thread when the main thread cannot take it at
that moment, and Python then only sets a flag for the main thread, which, asleep in readline at the prompt,
would not wake. A precaution (the lost Ctrl-C seen under stress-ng was an inherited SIG_IGN, tested in
tests/test_terminal.py). A real offline turn on the slice KB.
"""

from __future__ import annotations

import signal
import threading
from pathlib import Path

from langgraph.checkpoint.memory import InMemorySaver

from agent.consult import Consultant, Event
from agent.frontends.terminal import TurnWorker
from graphs.kb import KnowledgeBase
from graphs.model.settings import Settings


def _sigint_blocked() -> bool:
    return signal.SIGINT in signal.pthread_sigmask(signal.SIG_BLOCK, [])


def test_every_thread_of_a_turn_blocks_sigint(
    slice_kb: KnowledgeBase, slice_kb_root: Path, tmp_path: Path
) -> None:
    settings = Settings(kb_dir=slice_kb_root, data_dir=tmp_path, llm_enabled=False)
    consultant = Consultant(settings, kb=slice_kb, checkpointer=InMemorySaver(), use_llm=False)
    seen: dict[str, bool] = {}
    worker = TurnWorker(consultant, "How is gout treated?", None, "auto")
    original = worker.on_event

    def record(event: Event) -> None:  # runs in whatever thread the graph runs the node in
        seen[threading.current_thread().name] = _sigint_blocked()
        original(event)

    worker.on_event = record  # type: ignore[method-assign]
    worker.start()
    worker.join(120)
    assert worker.result is not None and worker.error is None
    assert seen and all(seen.values()), seen
    assert not _sigint_blocked()  # the main thread still takes Ctrl-C
