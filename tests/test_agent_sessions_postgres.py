"""Consults survive their process with the Postgres checkpointer too (``EVIGRAPH_CHECKPOINT_URL=postgresql://…``).

The same real SIGKILL-mid-turn as tests/test_agent_sessions.py (tests/session_kill.py), against a real local
Postgres (tests/postgres_fixture.py) and a fresh database per test. The checkpoints must be in Postgres, not
in a SQLite file next to them, and a server that cannot be reached must be a one-line UserError saying what
to do, not a psycopg traceback.
"""

from __future__ import annotations

from pathlib import Path

import psycopg
import pytest

from agent.errors import UserError
from agent.sessions import open_checkpointer
from graphs.kb import KnowledgeBase
from graphs.model.settings import Settings
from tests.postgres_fixture import postgres_database_url, postgres_url  # noqa: F401
from tests.session_kill import assert_resumes_after_the_kill, run_and_kill_mid_turn


def threads_in_postgres(url: str) -> list[str]:
    with psycopg.connect(url) as conn:
        return [row[0] for row in conn.execute("SELECT DISTINCT thread_id FROM checkpoints")]


def test_a_postgres_consult_survives_a_kill_mid_turn_and_continues(
    slice_kb: KnowledgeBase,
    slice_kb_root: Path,
    tmp_path: Path,
    postgres_database_url: str,  # noqa: F811
) -> None:
    consult_id = run_and_kill_mid_turn(slice_kb_root, tmp_path, postgres_database_url)
    assert threads_in_postgres(postgres_database_url) == [consult_id]
    assert not list(tmp_path.rglob("*.sqlite"))  # nothing fell back to the SQLite default

    assert_resumes_after_the_kill(slice_kb, slice_kb_root, tmp_path, postgres_database_url, consult_id)


def test_an_unreachable_postgres_is_a_user_error_with_a_way_forward(tmp_path: Path) -> None:
    url = "postgresql://postgres:s3cret@127.0.0.1:1/evigraph_test"  # nothing listens on port 1
    with pytest.raises(UserError) as refused:
        open_checkpointer(Settings(data_dir=tmp_path, checkpoint_url=url))
    message = str(refused.value)
    where = "postgresql://postgres:***@127.0.0.1:1/evigraph_test"
    assert message.startswith(f"Could not connect to the Postgres consult store at {where} (connection")
    assert "Connection refused" in message and "s3cret" not in message
    assert "fix EVIGRAPH_CHECKPOINT_URL" in message and "unset it to keep consults in SQLite" in message
    assert isinstance(refused.value.__cause__, psycopg.OperationalError)
    assert not list(tmp_path.iterdir())  # no SQLite file was made behind the user's back


def test_a_missing_postgres_database_is_a_user_error(postgres_url: str, tmp_path: Path) -> None:  # noqa: F811
    url = postgres_url.rsplit("/", 1)[0] + "/evigraph_no_such_database"
    with pytest.raises(UserError, match=r'database "evigraph_no_such_database" does not exist\)\. Start'):
        open_checkpointer(Settings(data_dir=tmp_path, checkpoint_url=url))
