"""The HTTP API with its consults in Postgres (the async saver over a connection pool): parallel consults
and two writers on one consult keep every turn, and /readyz checks the Postgres store."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import psycopg

from graphs.kb import KnowledgeBase
from graphs.model.settings import Settings
from tests.http_client import FOLLOW_UP, GOUT, running_api
from tests.postgres_fixture import postgres_database_url, postgres_url  # noqa: F401


def test_parallel_consults_and_one_consult_with_two_writers_in_postgres(
    slice_kb: KnowledgeBase,
    slice_kb_root: Path,
    tmp_path: Path,
    postgres_database_url: str,  # noqa: F811
) -> None:
    settings = Settings(
        kb_dir=slice_kb_root, data_dir=tmp_path, llm_enabled=False, checkpoint_url=postgres_database_url
    )
    with running_api(settings, slice_kb, max_parallel_turns=3) as api:
        assert api.call("GET", "/readyz").body["checks"]["checkpointer"] == "ok"
        with ThreadPoolExecutor(max_workers=6) as pool:
            created = list(pool.map(lambda i: api.call("POST", "/v1/consults", {"question": GOUT}), range(6)))
        assert [r.status for r in created] == [201] * 6
        shared = created[0].body["consult_id"]
        with ThreadPoolExecutor(max_workers=4) as pool:
            turns = list(
                pool.map(
                    lambda i: api.call(
                        "POST", f"/v1/consults/{shared}/turns", {"question": f"{FOLLOW_UP} {i}"}
                    ),
                    range(4),
                )
            )
        assert [r.status for r in turns] == [200] * 4
        history = api.call("GET", f"/v1/consults/{shared}").body["turns"]
        assert len(history) == 5
        # The consult page's list (one SQL query on the async saver) and view read Postgres too.
        listed = api.call("GET", "/web/consults").body["consults"]
        assert listed[0]["consult_id"] == shared and listed[0]["turns"] == 5 and len(listed) == 6
        assert {c["first_question"] for c in listed} == {GOUT} and listed[1]["status"] == "answered"
        assert len(api.call("GET", f"/web/consults/{shared}").body["turns"]) == 5
    with psycopg.connect(postgres_database_url) as conn:
        threads = conn.execute("SELECT COUNT(DISTINCT thread_id) FROM checkpoints").fetchone()
    assert threads is not None and threads[0] == 6  # they really are in Postgres
