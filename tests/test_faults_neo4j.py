"""Fault suite (issue 23): the graph store (Neo4j) going away mid-consult is a 503 with Retry-After and one
log line naming the store — never a 500 — and the consult already stored is kept.

Real server, real driver: the KB's graph lives in the test Neo4j, reached through a TCP proxy on 127.0.0.1
(tests/test_neo4j_deadline.py) that is closed mid-consult — every open connection dropped, new ones
refused — which is what a stopped or unreachable server looks like from the client. The shared test server
itself keeps running for the other tests.
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

import pytest

from graphs.kb import KnowledgeBase
from graphs.model.settings import Settings
from graphs.neo4j.store import Neo4jGraphStore
from tests.http_client import FOLLOW_UP, GOUT, running_api
from tests.neo4j_fixture import neo4j_uri  # noqa: F401
from tests.test_neo4j_deadline import FreezableProxy, proxy  # noqa: F401
from tests.test_neo4j_store import build_dir, loaded  # noqa: F401

pytestmark = pytest.mark.neo4j


def test_neo4j_going_down_mid_consult_is_a_503_and_the_consult_is_kept(
    proxy: FreezableProxy,  # noqa: F811
    loaded: dict[str, Any],  # noqa: F811
    slice_kb_root: Path,
    tmp_path: Path,
    caplog: pytest.LogCaptureFixture,
) -> None:
    assert loaded["complete"] is True
    store = Neo4jGraphStore(f"bolt://127.0.0.1:{proxy.port}", connection_timeout_s=2.0, retry_attempts=1)
    kb = KnowledgeBase.open(slice_kb_root, store=store)
    settings = Settings(kb_dir=slice_kb_root, data_dir=tmp_path, llm_enabled=False)
    try:
        with running_api(settings, kb, max_parallel_turns=2) as api:
            created = api.call("POST", "/v1/consults", {"question": GOUT})
            assert created.status == 201, created.body
            consult = created.body["consult_id"]
            proxy.close()  # the graph store is gone: open connections dropped, new ones refused
            with caplog.at_level(logging.ERROR):
                turn = api.call("POST", f"/v1/consults/{consult}/turns", {"question": FOLLOW_UP})
                fresh = api.call("POST", "/v1/consults", {"question": GOUT})
            for response in (turn, fresh):
                assert response.status == 503, response.body
                assert {k.lower(): v for k, v in response.headers.items()}.get("retry-after") == "10"
                assert "Neo4j" in response.body["error"], response.body
                assert "Internal error" not in response.body["error"]
            ours = [r for r in caplog.records if not r.name.startswith("neo4j")]  # the driver logs its own
            assert [r.levelname for r in ours] == ["ERROR", "ERROR"], caplog.text  # one line per request
            assert all("Neo4j" in r.getMessage() and not r.exc_info for r in ours), caplog.text
            ready = api.call("GET", "/readyz")
            assert ready.status == 503 and ready.body["checks"]["neo4j"] != "ok", ready.body
            kept = api.call("GET", f"/v1/consults/{consult}")  # the consult store is not the graph store
            assert kept.status == 200
            assert [t["question"] for t in kept.body["turns"]] == [GOUT]  # the failed turn left nothing
    finally:
        kb.close()
