"""A real SIGKILL in the middle of a consult turn, shared by the SQLite and Postgres checkpointer tests.

A child process runs turn 1 to completion, starts turn 2 and is killed with SIGKILL while that turn is inside
the graph (a progress-event callback marks the moment and then blocks). The checkpoint is whatever
``checkpoint_url`` the child gets: a SQLite file path or a ``postgresql://`` URL, so both stores face the
very same kill.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from agent.consult import Consultant
from agent.sessions import consult_exists, list_consults, thread_config
from graphs.kb import KnowledgeBase
from graphs.model.settings import Settings

REPO = Path(__file__).resolve().parent.parent
FIRST = "What is the treatment for gout?"
KILLED = "What are the symptoms of hemochromatosis?"

CHILD = """
import sys, time
from pathlib import Path
from agent.consult import Consultant
from graphs.model.settings import Settings

kb_root, data_dir, checkpoint, marker = sys.argv[1:5]
settings = Settings(kb_dir=kb_root, data_dir=data_dir, checkpoint_url=checkpoint, llm_enabled=False)
consultant = Consultant(settings, use_llm=False)
first = consultant.ask(sys.argv[5])
Path(data_dir, "consult_id").write_text(first.consult_id)


def stall(event):
    if event.get("step") == "evidence_rank":  # mid-turn: the graph has run several nodes of turn 2
        Path(marker).write_text(event["step"])
        time.sleep(600)


consultant.ask(sys.argv[6], consult_id=first.consult_id, on_event=stall)
"""


def settings_for(kb_root: Path, data_dir: Path, checkpoint: Path | str) -> Settings:
    """Offline settings over the slice KB, consults kept at ``checkpoint`` (SQLite path or Postgres URL)."""
    return Settings(kb_dir=kb_root, data_dir=data_dir, checkpoint_url=str(checkpoint), llm_enabled=False)


def run_and_kill_mid_turn(kb_root: Path, data_dir: Path, checkpoint: Path | str) -> str:
    """Run turn 1, kill the child with SIGKILL inside turn 2; return the consult's id."""
    marker = data_dir / "reached"
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    args = [str(kb_root), str(data_dir), str(checkpoint), str(marker), FIRST, KILLED]
    child = subprocess.Popen(
        [sys.executable, "-c", CHILD, *args], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE
    )
    try:
        deadline = time.monotonic() + 180
        while not marker.exists():
            if child.poll() is not None:
                _, err = child.communicate()
                pytest.fail(f"the child exited ({child.returncode}) before turn 2 started:\n{err.decode()}")
            if time.monotonic() > deadline:
                pytest.fail("the child did not reach turn 2 in time")
            time.sleep(0.05)
        child.send_signal(signal.SIGKILL)
        assert child.wait(timeout=30) == -signal.SIGKILL
    finally:
        if child.poll() is None:
            child.kill()
            child.wait()
    return (data_dir / "consult_id").read_text()


def assert_resumes_after_the_kill(
    kb: KnowledgeBase, kb_root: Path, data_dir: Path, checkpoint: Path | str, consult_id: str
) -> None:
    """A new process's view of the killed consult: turn 1 intact, turn 2 half done (its question and first
    steps checkpointed, no answer), and a follow-up that continues the consult without re-running the
    killed turn; a third ``Consultant`` over the same store then sees exactly the completed turns."""
    consultant = Consultant(settings_for(kb_root, data_dir, checkpoint), kb=kb, use_llm=False)
    assert consult_exists(consultant.checkpointer, consult_id) and list_consults(consultant.checkpointer) == [
        consult_id
    ]
    turns = consultant.history(consult_id)
    assert [t["question"] for t in turns] == [FIRST] and turns[0]["answer"]["status"] == "answered"
    snapshot = consultant.graph.get_state(thread_config(consult_id))  # type: ignore[arg-type]
    assert snapshot.values["question"] == KILLED and snapshot.values["turn"] == 2 and snapshot.tasks
    assert "answer" not in [s["step"] for s in snapshot.values["trace"]]

    follow_up = consultant.ask("What are its symptoms?", consult_id=consult_id)
    assert [t["question"] for t in follow_up.turns] == [FIRST, "What are its symptoms?"]
    assert follow_up.turns[0] == turns[0] and follow_up.answer["status"] == "answered"
    assert [s["step"] for s in follow_up.trace].count("start_turn") == 1  # nothing of the killed turn ran
    done = consultant.graph.get_state(thread_config(consult_id))  # type: ignore[arg-type]
    assert not done.next and not done.tasks and done.values["turn"] == 2

    reopened = Consultant(settings_for(kb_root, data_dir, checkpoint), kb=kb, use_llm=False)
    assert reopened.history(consult_id) == follow_up.turns
