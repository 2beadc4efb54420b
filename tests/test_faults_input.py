"""Fault suite (issue 23): bad input gets one plain line, never a validation dump or a traceback.

A non-UTF-8 question on stdin (`evigraph ask -`) printed pydantic's "1 validation error for
EvidenceRankRequest … errors.pydantic.dev" from deep inside the first tool; now the question is refused
before anything is opened, with what to do.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from langgraph.checkpoint.memory import InMemorySaver

from agent.consult import Consultant
from agent.errors import UserError
from graphs.kb import KnowledgeBase
from graphs.model.settings import Settings


def test_a_non_utf8_question_on_stdin_gets_one_plain_line_before_any_kb_is_opened(tmp_path: Path) -> None:
    missing_kb = tmp_path / "no-kb-here"
    run = subprocess.run(
        [sys.executable, "-m", "agent.frontends.cli", "ask", "-", "--kb-dir", str(missing_kb), "--offline"],
        input=b"How is gout treated \xff\xfe in winter?",
        capture_output=True,
        timeout=120,
        env={"PATH": "/usr/bin:/bin", "HOME": str(tmp_path), "EVIGRAPH_DATA_DIR": str(tmp_path / "data")},
    )
    said = run.stderr.decode() + run.stdout.decode()
    assert run.returncode != 0
    assert "not valid UTF-8 text" in " ".join(said.split())
    assert "pydantic" not in said and "Traceback" not in said and "validation error" not in said
    assert not missing_kb.exists()  # refused before the default KB would be built


def test_the_consult_service_refuses_lone_surrogates_too(
    slice_kb: KnowledgeBase, slice_kb_root: Path, tmp_path: Path
) -> None:
    settings = Settings(kb_dir=slice_kb_root, data_dir=tmp_path, llm_enabled=False)
    consultant = Consultant(settings, kb=slice_kb, checkpointer=InMemorySaver(), use_llm=False)
    with pytest.raises(UserError, match="not valid UTF-8"):
        consultant.ask("How is gout treated \udcff?")


@pytest.mark.parametrize(
    ("variable", "value"),
    [
        ("EVIGRAPH_LLM_TURN_DEADLINE_S", "0"),
        ("EVIGRAPH_LLM_TURN_DEADLINE_S", "-5"),
        ("EVIGRAPH_LLM_TIMEOUT_S", "abc"),
    ],
)
def test_a_bad_setting_is_one_line_naming_the_variable(tmp_path: Path, variable: str, value: str) -> None:
    run = subprocess.run(
        [sys.executable, "-m", "agent.frontends.cli", "config"],
        capture_output=True,
        timeout=120,
        env={
            "PATH": "/usr/bin:/bin",
            "HOME": str(tmp_path),
            "EVIGRAPH_DATA_DIR": str(tmp_path),
            variable: value,
        },
    )
    said = " ".join((run.stderr.decode() + run.stdout.decode()).split())
    assert run.returncode == 2
    assert f"Bad setting: {variable}:" in said and f"(got '{value}')" in said
    assert "Traceback" not in said and "errors.pydantic.dev" not in said
