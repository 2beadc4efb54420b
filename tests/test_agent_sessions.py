"""Consults survive their process: a SQLite checkpoint keeps every finished turn, even through SIGKILL.

The kill is real: a child process runs turn 1 to completion, starts turn 2 and is killed with SIGKILL
while that turn is inside the graph (a progress-event callback marks the moment and then blocks). A new
``Consultant`` in this process, over the same checkpoint file, must find turn 1 intact, no trace of the
half-done turn 2 among the turns, and be able to continue the consult.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from agent.consult import Consultant
from agent.errors import UserError
from agent.sessions import list_consults
from graphs.kb import KnowledgeBase
from tests.session_kill import FIRST, assert_resumes_after_the_kill, run_and_kill_mid_turn, settings_for


def test_a_consult_survives_a_kill_mid_turn_and_continues(
    slice_kb: KnowledgeBase, slice_kb_root: Path, tmp_path: Path
) -> None:
    checkpoint = tmp_path / "consults.sqlite"
    consult_id = run_and_kill_mid_turn(slice_kb_root, tmp_path, checkpoint)

    assert_resumes_after_the_kill(slice_kb, slice_kb_root, tmp_path, checkpoint, consult_id)


def test_unknown_consults_are_refused_with_a_way_forward(
    slice_kb: KnowledgeBase, slice_kb_root: Path, tmp_path: Path
) -> None:
    consultant = Consultant(
        settings_for(slice_kb_root, tmp_path, tmp_path / "consults.sqlite"), kb=slice_kb, use_llm=False
    )
    with pytest.raises(UserError, match=r"No consult 'abc'\. Start a new one, or list them"):
        consultant.ask(FIRST, consult_id="abc")
    assert list_consults(consultant.checkpointer) == []
    result = consultant.ask(FIRST)
    assert list_consults(consultant.checkpointer) == [result.consult_id]
    assert consultant.history(result.consult_id) == result.turns


def test_consults_are_listed_most_recently_active_first(
    slice_kb: KnowledgeBase, slice_kb_root: Path, tmp_path: Path
) -> None:
    consultant = Consultant(
        settings_for(slice_kb_root, tmp_path, tmp_path / "consults.sqlite"), kb=slice_kb, use_llm=False
    )
    older = consultant.ask(FIRST).consult_id
    newer = consultant.ask("What are the symptoms of hemochromatosis?").consult_id
    assert list_consults(consultant.checkpointer) == [newer, older]
    consultant.ask("And how is it treated?", consult_id=older)  # a follow-up makes it the latest
    assert list_consults(consultant.checkpointer) == [older, newer]
    assert list_consults(consultant.checkpointer, limit=1) == [older]
