"""Fault suite (issue 23): a consult store that goes down mid-consult is a 503 with Retry-After on every
route, never a 500 — and nothing stored is lost; after it returns, the next turn works.

Real Postgres (the test server of tests/postgres_fixture.py, a database of this test's own): the outage is
made by the server itself — the database stops accepting connections and every open one is terminated
(psycopg raises ``AdminShutdown``, then the pool's ``PoolTimeout``; both were answered "Internal error").
"""

from __future__ import annotations

import logging
from pathlib import Path

import psycopg
import pytest
from psycopg import sql

from graphs.kb import KnowledgeBase
from graphs.model.settings import Settings
from tests.http_client import FOLLOW_UP, GOUT, running_api
from tests.postgres_fixture import postgres_database_url, postgres_url  # noqa: F401


def set_outage(admin_url: str, database: str, down: bool) -> None:
    """Refuse (or allow again) connections to ``database`` and end every session it has."""
    with psycopg.connect(admin_url, autocommit=True) as admin:
        allow = sql.SQL("false" if down else "true")
        admin.execute(
            sql.SQL("ALTER DATABASE {} WITH ALLOW_CONNECTIONS {}").format(sql.Identifier(database), allow)
        )
        if down:
            admin.execute(
                "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = %s", (database,)
            )


def test_postgres_going_down_mid_consult_is_a_503_and_nothing_is_lost(
    slice_kb: KnowledgeBase,
    slice_kb_root: Path,
    tmp_path: Path,
    postgres_url: str,  # noqa: F811
    postgres_database_url: str,  # noqa: F811
    caplog: pytest.LogCaptureFixture,
) -> None:
    database = postgres_database_url.rsplit("/", 1)[1]
    settings = Settings(
        kb_dir=slice_kb_root, data_dir=tmp_path, llm_enabled=False, checkpoint_url=postgres_database_url
    )
    with running_api(settings, slice_kb, max_parallel_turns=2) as api:
        created = api.call("POST", "/v1/consults", {"question": GOUT})
        assert created.status == 201
        consult = created.body["consult_id"]
        set_outage(postgres_url, database, down=True)
        try:
            with caplog.at_level(logging.ERROR):
                turn = api.call("POST", f"/v1/consults/{consult}/turns", {"question": FOLLOW_UP})
                read = api.call("GET", f"/v1/consults/{consult}")
            for response in (turn, read):
                assert response.status == 503, response.body
                assert {k.lower(): v for k, v in response.headers.items()}.get("retry-after") == "10"
                assert "consult store (Postgres) is unreachable" in response.body["error"]
                assert "Internal error" not in response.body["error"]
            assert "consult store (Postgres) is unreachable" in caplog.text
            assert "Exception in ASGI application" not in caplog.text  # one line, not a traceback
        finally:
            set_outage(postgres_url, database, down=False)
        again = api.call("POST", f"/v1/consults/{consult}/turns", {"question": FOLLOW_UP})
        assert again.status == 200, again.body
        turns = api.call("GET", f"/v1/consults/{consult}").body["turns"]
        assert [t["question"] for t in turns] == [GOUT, FOLLOW_UP]  # the first turn kept, the failed one not


def test_a_store_outage_is_recognised_through_a_wrapper_and_other_errors_are_not() -> None:
    from neo4j.exceptions import ServiceUnavailable
    from psycopg_pool import PoolTimeout

    from agent.errors import store_outage

    def wrapped(cause: Exception) -> RuntimeError:
        try:
            raise RuntimeError("the checkpointer failed") from cause
        except RuntimeError as exc:
            return exc

    assert "Postgres" in (store_outage(wrapped(PoolTimeout("couldn't get a connection"))) or "")
    assert "Neo4j" in (store_outage(ServiceUnavailable("no routing servers")) or "")
    assert store_outage(psycopg.errors.UniqueViolation("duplicate key")) is None  # a bug, not an outage
    assert store_outage(ValueError("bad value")) is None
